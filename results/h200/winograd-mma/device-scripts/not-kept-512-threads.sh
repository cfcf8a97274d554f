#!/bin/bash
# A/B: e5914c4 (before: conv2/conv3 at 256 threads) against conv2 at 512 threads (c2), conv2 and conv3 at 512 (c23).
build=$PWD/build/gpu-carry/cuda; source scripts/gpu-libs.sh
A=$PWD/build/gpu-carry/ab
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $R/device.txt
in="--data data/cifar10 --weights data/convnetjs-cifar10"
for v in c2 c23; do
  $A/suite-$v $in --backend cuda:winograd_mma --images 1,7,300,1200,8191 --repeat 2 --quiet --output $R/checks-$v.json; echo "checks $v rc=$?"
  $A/suite-$v --data $build/unseen_batch.bin --weights data/convnetjs-cifar10 --backend cuda:winograd_mma --images 1000 --repeat 2 --quiet --output $R/unseen-$v.json; echo "unseen $v rc=$?"
done
for round in 1 2; do
  for v in before c2 c23; do
    $A/suite-$v $in --backend cuda:winograd_mma --images 1200,50000 --repeat 20 --quiet --output $R/ab-$v-$round.json; echo "$v $round rc=$?"
  done
done
python3 - $R/ab-*.json $R/checks-*.json $R/unseen-*.json <<'PY'
import json,sys
for f in sys.argv[1:]:
  for r in json.load(open(f))['runs']:
    fw=r['forward_ms']
    print(f.split('/')[-1][:-5], r['variant'], r['images'], 'med %.4f min %.4f'%(fw['median'], fw['min']), r['accuracy'] if r['images']==1200 else '', r['validation']['passed'], '%.1e'%r['validation']['max_abs_prob_diff'])
PY
M=gpu__time_duration.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__warps_active.avg.per_cycle_active,smsp__warps_eligible.avg.per_cycle_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active
for v in before c2 c23; do
  timeout 100 ncu --clock-control none --csv --kernel-name regex:"winograd_layer_kernel|conv1_pixels_kernel" --metrics $M -c 3 $A/suite-$v $in --backend cuda:winograd_mma --images 4096 --batch 4096 --repeat 1 --warmup 0 --quiet --output /tmp/n-$v.json > $R/ncu-$v.csv 2>&1; echo "ncu $v rc=$?"
done
python3 - $R/ncu-*.csv <<'PY'
import csv,sys,collections
for f in sys.argv[1:]:
  rows=[l for l in open(f) if l.startswith('"')]
  d=collections.defaultdict(dict)
  for r in csv.DictReader(rows):
    k=(r['ID'], r['Kernel Name'][:60]); d[k][r['Metric Name']]=r['Metric Value']
  for k,v in d.items(): print(f.split('/')[-1], k[0], k[1][:40], {m.split('.')[0][-24:]:v[m] for m in v})
PY
for v in c2 c23; do
timeout 100 compute-sanitizer --tool racecheck $A/suite-$v $in --backend cuda:winograd_mma --images 40 --repeat 1 --warmup 0 --quiet --output /tmp/s2.json >> $R/compute-sanitizer-$v.txt 2>&1; echo "racecheck $v rc=$?"
timeout 100 compute-sanitizer --tool memcheck $A/suite-$v $in --backend cuda:winograd_mma --images 300 --repeat 1 --warmup 0 --quiet --output /tmp/s1.json >> $R/compute-sanitizer-$v.txt 2>&1; echo "memcheck $v rc=$?"
grep SUMMARY $R/compute-sanitizer-$v.txt
done
cd $OUT && tar czf r.tgz r && rm -rf r
