#!/bin/bash
# A/B: bt_half's odd parts of the points +-1/2, +-2 with their factor 1/2 carried into the FMAs (24 instead of 26
# operations a 1D input transform). before = 3be3707's code, after = the diff. Alternating, one process each.
exec > $OUT/log.txt 2>&1
build=$PWD/build/gpu-carry/cuda; source scripts/gpu-libs.sh
A=$PWD/build/gpu-carry/ab; R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $R/device.txt
in="--data data/cifar10 --weights data/convnetjs-cifar10"
$A/suite-after $in --backend cuda:winograd_mma,cuda:winograd,cuda:winograd_conv1_mma --images 1,7,300,1200,2112,8191 --repeat 2 --quiet --output $R/checks.json; echo "checks rc=$?"
$A/suite-after --data $build/unseen_batch.bin --weights data/convnetjs-cifar10 --backend cuda:winograd_mma,cuda:winograd --images 1000 --repeat 2 --quiet --output $R/unseen.json; echo "unseen rc=$?"
for round in 1 2 3; do
  for v in before after; do
    $A/suite-$v $in --backend cuda:winograd_mma,cuda:winograd --images 1200,50000 --repeat 20 --quiet --output $R/ab-$v-$round.json; echo "$v $round rc=$?"
  done
done
for v in before after; do
  timeout 100 ncu --clock-control none --csv --kernel-name regex:"winograd_layer_kernel|conv1_pixels_kernel" --metrics gpu__time_duration.sum,smsp__inst_executed.sum -c 6 $A/suite-$v $in --backend cuda:winograd_mma --images 8192 --batch 8192 --repeat 1 --warmup 0 --quiet --output /tmp/n-$v.json > $R/ncu-$v.csv 2>&1; echo "ncu $v rc=$?"
done
python3 - $R <<'PY'
import json,sys,glob,collections,statistics as st,csv
R=sys.argv[1]; d=collections.defaultdict(list); bad=0
for f in sorted(glob.glob(R+'/*.json')):
  for r in json.load(open(f))['runs']:
    ok=r['validation']['passed']; bad+=not ok
    if '/ab-' in f: d[(r['variant'], r['images'], f.split('/')[-1].split('-')[1])].append(r['forward_ms']['median'])
    else: print(f.split('/')[-1], r['variant'], r['images'], ok, '%.1e'%r['validation']['max_abs_prob_diff'], r['accuracy'] if r['images']==1200 else '')
print('not validated:', bad)
for k in sorted(d): print(k, ' '.join('%.4f'%x for x in d[k]), 'median %.4f'%st.median(d[k]))
for v in ('before','after'):
  rows=[l for l in open(R+'/ncu-%s.csv'%v) if l.startswith('"')]
  if not rows: continue
  rd=list(csv.reader(rows)); h=rd[0]; k=h.index('Kernel Name'); m=h.index('Metric Name'); val=h.index('Metric Value')
  agg=collections.defaultdict(list)
  for r in rd[1:]: agg[(r[k].split('<')[0][:40]+('<'+r[k].split('<')[1][:3] if '<' in r[k] else ''), r[m])].append(float(r[val].replace(',','')))
  for kk in sorted(agg): print(v, kk, ['%.0f'%x for x in agg[kk]])
PY
cd $OUT && tar czf r.tgz r && rm -rf r
