#!/bin/bash
# A/B: 95645ef (before), the hand-off as first measured (early), as committed at f637506 (final), and that
# waiting once at the start where there is no hand-off (final2).
build=$PWD/build/gpu-carry/cuda; source scripts/gpu-libs.sh
A=$PWD/build/gpu-carry/ab
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $R/device.txt
in="--data data/cifar10 --weights data/convnetjs-cifar10"
$A/suite-final2 $in --backend cuda:winograd_mma,cuda:winograd,cuda:winograd_conv1_mma --images 1,7,133,265,529,1200 --repeat 2 --quiet --output $R/checks-final2.json; echo "checks rc=$?"
for round in 1 2 3; do
  for v in before early final final2; do
    $A/suite-$v $in --backend cuda:winograd_mma --images 1200,50000 --repeat 20 --quiet --output $R/ab-$v-$round.json
  done
done
for v in before final final2; do
  $A/suite-$v $in --backend cuda:winograd --images 1200,50000 --repeat 20 --quiet --output $R/others-$v.json
done
python3 - $R/ab-*.json $R/others-*.json $R/checks-*.json <<'PY'
import json,sys,collections
bad=0; t=collections.defaultdict(list)
for f in sys.argv[1:]:
  name=f.split('/')[-1][:-5]
  for r in json.load(open(f))['runs']:
    bad+=not r['validation']['passed']
    if name.startswith('checks'): continue
    t[(r['variant'], r['images'], name.split('-')[1])].append('%.4f'%r['forward_ms']['median'])
for k in sorted(t): print(k, ' / '.join(t[k]))
print('not validated:', bad)
PY
cd $OUT && tar czf r.tgz r && rm -rf r
