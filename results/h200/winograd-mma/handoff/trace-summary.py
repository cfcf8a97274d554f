import sys, collections
# Passes of n images: split at each "T 0 0"; keep those whose kernel-0 grid is g0 blocks.
path, g0, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
passes, cur, n = [], [], None
for line in open(path):
    f = line.split()
    if line.startswith('N '):
        if cur: passes.append((n, cur))
        cur, n = [], int(f[1])
        continue
    if not line.startswith('T '): continue
    cur.append((int(f[1]), int(f[2]), int(f[3]), int(f[4]), int(f[5]), int(f[6]), int(f[7])))
if cur: passes.append((n, cur))
sel = [p for m, p in passes if m == g0]
print('passes', len(passes), 'selected', len(sel))
with open(out, 'w') as o:
    for r in sel[-1]: o.write(' '.join(map(str, r)) + '\n')
for p in sel[-3:]:
    print('--- pass')
    for k in range(3):
        rs = [r for r in p if r[0] == k]
        st = sorted(r[3] for r in rs); en = sorted(r[6] for r in rs); lr = sorted(r[5] for r in rs)
        wt = sorted(r[4] for r in rs if r[4] >= 0)
        q = lambda a, f: a[min(len(a) - 1, int(f * len(a)))] / 1000
        print(f'k{k} blocks {len(rs)} start min/med/max {q(st,0):.1f}/{q(st,.5):.1f}/{q(st,.999):.1f} us'
              + (f' waitdone min/med/max {q(wt,0):.1f}/{q(wt,.5):.1f}/{q(wt,.999):.1f}' if wt else '')
              + f' lastround min/med/max {q(lr,0):.1f}/{q(lr,.5):.1f}/{q(lr,.999):.1f}'
              + f' end min/10%/med/90%/max {q(en,0):.1f}/{q(en,.1):.1f}/{q(en,.5):.1f}/{q(en,.9):.1f}/{q(en,.999):.1f}')
    # SMs busy per 2 us bucket, per kernel
    end = max(r[6] for r in p)
    line = []
    for t in range(0, end + 2000, 2000):
        c = [len({r[2] for r in p if r[0] == k and r[3] <= t < r[6]}) for k in range(3)]
        line.append(f'{t//1000}:{c[0]}/{c[1]}/{c[2]}')
    print('SMs busy (conv1/conv2/conv3) per 2 us:', ' '.join(line))
