#!/bin/bash
# A/B: 38d5f5d (before: conv1 over planes) against conv1 over pixels (after), exp3: 3 blocks per SM.
build=$PWD/build/gpu-carry/cuda; source scripts/gpu-libs.sh
A=$PWD/build/gpu-carry/ab
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $R/device.txt
in="--data data/cifar10 --weights data/convnetjs-cifar10"
$A/suite-after $in --backend cuda:winograd_mma,cuda:winograd_conv1_mma,cuda:winograd --images 1,7,300,1200,8191 --repeat 2 --quiet --output $R/after-checks.json; echo "checks rc=$?"
$A/suite-after --data $build/unseen_batch.bin --weights data/convnetjs-cifar10 --backend cuda:winograd_mma,cuda:winograd_conv1_mma --images 1000 --repeat 2 --quiet --output $R/unseen.json; echo "unseen rc=$?"
$A/suite-exp3 $in --backend cuda:winograd_mma --images 7,1200 --repeat 2 --quiet --output $R/exp3-checks.json; echo "exp3 checks rc=$?"
for round in 1 2; do
  for v in before after exp3; do
    $A/suite-$v $in --backend cuda:winograd_mma --images 1200,50000 --repeat 20 --quiet --output $R/ab-$v-$round.json; echo "$v $round rc=$?"
  done
done
python3 - $R/ab-*.json $R/after-checks.json $R/unseen.json $R/exp3-checks.json <<'PY'
import json,sys
for f in sys.argv[1:]:
  for r in json.load(open(f))['runs']:
    fw=r['forward_ms']
    print(f.split('/')[-1][:-5], r['variant'], r['images'], 'med %.4f min %.4f'%(fw['median'], fw['min']), r['accuracy'] if r['images']==1200 else '', r['validation']['passed'], '%.1e'%r['validation']['max_abs_prob_diff'])
PY
M=gpu__time_duration.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__warps_active.avg.per_cycle_active
for v in before after exp3; do
  timeout 100 ncu --clock-control none --csv --kernel-name regex:"winograd_layer_kernel|conv1_mma_kernel|conv1_pixels_kernel" --metrics $M -c 6 $A/suite-$v $in --backend cuda:winograd_mma --images 8192 --batch 8192 --repeat 1 --warmup 0 --quiet --output /tmp/n-$v.json > $R/ncu-$v.csv 2>&1; echo "ncu $v rc=$?"
done
timeout 120 ncu --clock-control none --kernel-name regex:"conv1_pixels_kernel" --section SpeedOfLight --section WarpStateStats --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section Occupancy -c 1 $A/suite-after $in --backend cuda:winograd_mma --images 8192 --batch 8192 --repeat 1 --warmup 0 --quiet --output /tmp/n-d.json > $R/ncu-conv1-pixels-detail.txt 2>&1; echo "ncu detail rc=$?"
python3 - $R/ncu-*.csv <<'PY'
import csv,sys,collections
for f in sys.argv[1:]:
  rows=[l for l in open(f) if l.startswith('"')]
  d=collections.defaultdict(dict)
  for r in csv.DictReader(rows):
    k=(r['ID'], r['Kernel Name'][:60]); d[k][r['Metric Name']]=r['Metric Value']
  for k,v in d.items(): print(f.split('/')[-1], k[0], k[1][:40], {m.split('.')[0][-28:]:v[m] for m in v})
PY
timeout 100 compute-sanitizer --tool racecheck $A/suite-after $in --backend cuda:winograd_mma --images 40 --repeat 1 --warmup 0 --quiet --output /tmp/s2.json > $R/compute-sanitizer.txt 2>&1; echo "racecheck rc=$?"
timeout 100 compute-sanitizer --tool memcheck $A/suite-after $in --backend cuda:winograd_mma --images 300 --repeat 1 --warmup 0 --quiet --output /tmp/s1.json >> $R/compute-sanitizer.txt 2>&1; echo "memcheck rc=$?"
grep SUMMARY $R/compute-sanitizer.txt
echo "== tests"; $build/tests/suite_tests --gtest_filter='*EveryVariant*cuda_*' 2>&1 | tail -1
cd $OUT && tar czf r.tgz r && rm -rf r
