#!/bin/bash
# A/B: the element-wise MMAs ordered by product over 4 positions x n-tiles, the 4 positions' splits first (ordered)
# against 15d1458 (base); checks; counters.
build=$PWD/build/gpu-carry/cuda; source scripts/gpu-libs.sh
A=$PWD/build/gpu-carry/ab; R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $R/device.txt
in="--data data/cifar10 --weights data/convnetjs-cifar10"
for v in ordered; do
  timeout 150 $A/suite-$v $in --backend cuda:winograd_mma,cuda:winograd,cuda:winograd_conv1_mma --images 1,7,133,264,265,529,1200,2112,8191 --repeat 1 --warmup 0 --quiet --output $R/checks-$v.json; echo "checks $v rc=$?"
done
timeout 60 $A/suite-ordered --data $build/unseen_batch.bin --weights data/convnetjs-cifar10 --backend cuda:winograd_mma,cuda:winograd,cuda:winograd_conv1_mma --images 1000 --repeat 2 --quiet --output $R/unseen.json; echo "unseen rc=$?"
for round in 1 2 3; do
  for v in base ordered; do
    timeout 60 $A/suite-$v $in --backend cuda:winograd_mma --images 1200,50000 --repeat 20 --quiet --output $R/ab-$v-$round.json; echo "$v $round rc=$?"
  done
done
M=gpu__time_duration.sum,sm__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio
for v in base ordered; do
  timeout 90 ncu --clock-control none --csv --kernel-name regex:"winograd_layer_kernel" --metrics $M -c 6 $A/suite-$v $in --backend cuda:winograd_mma --images 8192 --batch 8192 --repeat 1 --warmup 0 --quiet --output /tmp/n-$v.json > $R/ncu-$v.csv 2>&1; echo "ncu $v rc=$?"
done
python3 - $R/*.json $R/ncu-base.csv $R/ncu-ordered.csv <<'PY'
import json,sys,collections,statistics as st,csv
e=collections.defaultdict(list); bad=0
for f in sys.argv[1:]:
  if f.endswith('.csv'):
    fc4=[r for r in csv.reader(open(f)) if len(r)>10]
    if not fc4: print(f, 'no fc4'); continue
    h=fc4[0]; ki=h.index('Kernel Name'); mi=h.index('Metric Name'); vi=h.index('Metric Value'); ii=h.index('ID')
    for r in fc4[1:]: print(f.split('/')[-1], r[ii], r[ki][28:36], r[mi][:52], r[vi])
    continue
  for r in json.load(open(f))['runs']:
    ok=r['validation']['passed']; bad+=not ok
    if '/ab-' in f: e[(f.split('/')[-1].split('-')[1], r['images'])].append(r['forward_ms']['median'])
    elif 'unseen' in f or r['images'] in (1200, 8191): print(f.split('/')[-1], r['variant'], r['images'], r.get('accuracy'), ok, r['validation']['max_abs_prob_diff'])
print('not validated:', bad)
for k in sorted(e): print(k, 'fwd', ['%.4f'%b for b in e[k]], 'median %.4f'%st.median(e[k]))
PY
cd $OUT && tar czf r.tgz r && rm -rf r
