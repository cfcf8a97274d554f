#!/bin/bash
# A/B: end_to_end on 2 streams for every variant (0b128e5, "two") against 2 streams only where the forward pass
# is faster than the images' copy, else 4 ("rule"). Alternating, twice.
exec > $OUT/log.txt 2>&1
build=$PWD/build/gpu-carry/cuda; source scripts/gpu-libs.sh
A=$PWD/build/gpu-carry/ab; R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
in="--data data/cifar10 --weights data/convnetjs-cifar10"
for round in 1 2; do for v in two rule; do
  timeout 80 $A/suite-$v $in --backend cuda:winograd_mma,cuda:winograd,cuda:winograd_conv1_mma,cuda:fused_fp16x3 --images 50000,50000,1200 --repeat 1 --quiet --output $R/$v-$round.json; echo "$v $round rc=$?"
done; done
python3 - $R/*.json <<'PY'
import json,sys,collections,statistics as st
d=collections.defaultdict(list)
for f in sys.argv[1:]:
  for r in json.load(open(f))['runs']:
    assert r['validation']['passed'], f
    p=r['phases_ms']; d[(r['variant'], r['images'], f.split('/')[-1].split('-')[0])].append((p['end_to_end'], p['h2d_pinned'], p['forward']))
for k in sorted(d):
  e=[x[0] for x in d[k]]; print(k, 'e2e median %.4f'%st.median(e), 'pinned %.4f fwd %.4f'%(st.median(x[1] for x in d[k]), st.median(x[2] for x in d[k])), ' '.join('%.3f'%x for x in e))
PY
cd $OUT && tar czf r.tgz r && rm -rf r
