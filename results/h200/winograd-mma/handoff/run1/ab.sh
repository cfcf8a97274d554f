#!/bin/bash
# A/B: 95645ef (before) against the hand-off of the earlier rounds, the next kernel launched a round earlier (early).
build=$PWD/build/gpu-carry/cuda; source scripts/gpu-libs.sh
A=$PWD/build/gpu-carry/ab
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $R/device.txt
in="--data data/cifar10 --weights data/convnetjs-cifar10"
for v in trace trace-early; do CNN_TRACE=1 $A/suite-$v $in --backend cuda:winograd_mma --images 1200 --warmup 2 --repeat 3 --quiet --output /tmp/$v.json 2> /tmp/$v.txt; echo "== $v rc=$?"; python3 $A/trace-summary.py /tmp/$v.txt 1200 $R/$v-pass.txt | tail -4 | cut -c1-1200; done
echo "== tests"; $build/tests/suite_tests --gtest_filter='*EveryVariant*cuda_*:*Cuda*:*cuda*' 2>&1 | tail -3
for v in early; do
  $A/suite-$v $in --backend cuda:winograd_mma,cuda:winograd,cuda:winograd_conv1_mma --images 1,7,132,133,300,1200,8191,16385,32769,50000 --repeat 2 --quiet --output $R/checks-$v.json; echo "checks $v rc=$?"
  $A/suite-$v --data $build/unseen_batch.bin --weights data/convnetjs-cifar10 --backend cuda:winograd_mma,cuda:winograd,cuda:winograd_conv1_mma --images 1000 --repeat 2 --quiet --output $R/unseen-$v.json; echo "unseen $v rc=$?"
  $A/suite-$v $in --backend cuda:winograd_mma --images 1200 --batch 64 --repeat 3 --quiet --output $R/batch64-$v.json; echo "batch64 $v rc=$?"
done
for round in 1 2 3 4; do
  for v in before early; do
    $A/suite-$v $in --backend cuda:winograd_mma --images 1200,50000 --repeat 20 --quiet --output $R/ab-$v-$round.json; echo "$v $round rc=$?"
  done
done
for v in before early; do
  $A/suite-$v $in --backend cuda:winograd,cuda:winograd_conv1_mma --images 1200,50000 --repeat 20 --quiet --output $R/others-$v.json; echo "others $v rc=$?"
done
python3 - $R/ab-*.json $R/others-*.json $R/checks-*.json $R/unseen-*.json $R/batch64-*.json <<'PY'
import json,sys
for f in sys.argv[1:]:
  for r in json.load(open(f))['runs']:
    fw=r['forward_ms']
    print(f.split('/')[-1][:-5], r['variant'], r['images'], 'med %.4f min %.4f'%(fw['median'], fw['min']), r['accuracy'] if r['images']==1200 else '', r['validation']['passed'], '%.1e'%r['validation']['max_abs_prob_diff'])
PY
for v in early; do
timeout 100 compute-sanitizer --tool racecheck $A/suite-$v $in --backend cuda:winograd_mma --images 40 --repeat 1 --warmup 0 --quiet --output /tmp/s2.json >> $R/compute-sanitizer-$v.txt 2>&1; echo "racecheck $v rc=$?"
timeout 150 compute-sanitizer --tool memcheck $A/suite-$v $in --backend cuda:winograd_mma,cuda:winograd,cuda:winograd_conv1_mma --images 300 --repeat 1 --warmup 0 --quiet --output /tmp/s1.json >> $R/compute-sanitizer-$v.txt 2>&1; echo "memcheck $v rc=$?"
timeout 100 compute-sanitizer --tool synccheck $A/suite-$v $in --backend cuda:winograd_mma --images 300 --repeat 1 --warmup 0 --quiet --output /tmp/s3.json >> $R/compute-sanitizer-$v.txt 2>&1; echo "synccheck $v rc=$?"
grep SUMMARY $R/compute-sanitizer-$v.txt
done
cd $OUT && tar czf r.tgz r && rm -rf r
