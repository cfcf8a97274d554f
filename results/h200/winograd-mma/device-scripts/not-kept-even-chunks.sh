#!/bin/bash
# A/B: 136f0d7 (before: chunks of 16384 and a remainder) against equal chunks (even), and 3 lanes (even3).
build=$PWD/build/gpu-carry/cuda; source scripts/gpu-libs.sh
A=$PWD/build/gpu-carry/ab
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $R/device.txt
in="--data data/cifar10 --weights data/convnetjs-cifar10"
$A/suite-even $in --backend cuda,cudnn --images 16385,32769,50000 --repeat 1 --quiet --output $R/checks-even.json; echo "checks even rc=$?"
$A/suite-even3 $in --backend cuda:winograd_mma --images 1,7,1200,8191,16385,50000 --repeat 2 --quiet --output $R/checks-even3.json; echo "checks even3 rc=$?"
for round in 1 2 3; do
  for v in before even even3; do
    $A/suite-$v $in --backend cuda:winograd_mma,cuda:winograd_conv1_mma,cuda:fused_fp16x3 --images 1200,50000 --repeat 20 --quiet --output $R/ab-$v-$round.json; echo "$v $round rc=$?"
  done
done
python3 - $R/ab-*.json $R/checks-*.json <<'PY'
import json,sys
for f in sys.argv[1:]:
  for r in json.load(open(f))['runs']:
    fw=r['forward_ms']
    if 'checks' in f and r['validation']['passed'] and r['images']!=50000: continue
    print(f.split('/')[-1][:-5], r['variant'], r['images'], 'med %.4f min %.4f'%(fw['median'], fw['min']), r['accuracy'] if r['images']==1200 else '', r['validation']['passed'], '%.1e'%r['validation']['max_abs_prob_diff'])
PY
echo "== tests"; $build/tests/suite_tests --gtest_filter='*EveryVariant*cuda_*' 2>&1 | tail -1
cd $OUT && tar czf r.tgz r && rm -rf r
