#!/bin/bash
# A/B: conv1 of cuda:winograd_mma on wgmma (conv1_wgmma) against mma.sync over packed pixels (conv1_pixels,
# SUITE_NO_WGMMA=1), one binary, alternating; checks at the rounds' edges and on unseen images; ncu.
build=$PWD/build/gpu-carry/cuda; source scripts/gpu-libs.sh
A=$PWD/build/gpu-carry/ab; S=$A/suite-wgmma
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $R/device.txt
in="--data data/cifar10 --weights data/convnetjs-cifar10"
echo "== tests"; timeout 90 $A/suite_tests-wgmma --gtest_filter="*EveryVariant*cuda_*:Cuda*" > $R/tests.txt 2>&1; echo "tests rc=$?"; tail -3 $R/tests.txt
timeout 90 $S $in --backend cuda:winograd_mma --images 1,7,133,264,265,529,1200,2112,8191 --repeat 2 --quiet --output $R/checks.json; echo "checks rc=$?"
timeout 60 $S --data $build/unseen_batch.bin --weights data/convnetjs-cifar10 --backend cuda:winograd_mma --images 1000 --repeat 2 --quiet --output $R/unseen.json; echo "unseen rc=$?"
for round in 1 2 3; do
  SUITE_NO_WGMMA=1 timeout 60 $S $in --backend cuda:winograd_mma --images 1200,50000 --repeat 20 --quiet --output $R/ab-pixels-$round.json; echo "pixels $round rc=$?"
  timeout 60 $S $in --backend cuda:winograd_mma --images 1200,50000 --repeat 20 --quiet --output $R/ab-wgmma-$round.json; echo "wgmma $round rc=$?"
done
for v in pixels wgmma; do
  [ $v = pixels ] && export SUITE_NO_WGMMA=1 || unset SUITE_NO_WGMMA
  timeout 90 ncu --clock-control none --csv --kernel-name regex:"winograd_layer_kernel|conv1_pixels_kernel|conv1_wgmma_kernel" --metrics gpu__time_duration.sum,sm__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active -c 6 $S $in --backend cuda:winograd_mma --images 8192 --batch 8192 --repeat 1 --warmup 0 --quiet --output /tmp/n-$v.json > $R/ncu-$v.csv 2>&1; echo "ncu $v rc=$?"
done
unset SUITE_NO_WGMMA
timeout 120 ncu --clock-control none --kernel-name regex:"conv1_wgmma_kernel" --section SpeedOfLight --section WarpStateStats --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables --section Occupancy --section InstructionStats -c 1 $S $in --backend cuda:winograd_mma --images 8192 --batch 8192 --repeat 1 --warmup 0 --quiet --output /tmp/n-d.json > $R/ncu-conv1-wgmma-detail.txt 2>&1; echo "ncu detail rc=$?"
python3 - $R/*.json $R/ncu-pixels.csv $R/ncu-wgmma.csv <<'PY'
import json,sys,collections,statistics as st,csv
e=collections.defaultdict(list); bad=0
for f in sys.argv[1:]:
  if f.endswith('.csv'):
    rows=[r for r in csv.reader(open(f)) if len(r)>10]
    if not rows: print(f, 'no rows'); continue
    h=rows[0]; ki=h.index('Kernel Name'); mi=h.index('Metric Name'); vi=h.index('Metric Value')
    for r in rows[1:]: print(f.split('/')[-1], r[ki][:40], r[mi], r[vi])
    continue
  for r in json.load(open(f))['runs']:
    ok=r['validation']['passed']; bad+=not ok
    if '/ab-' in f: e[(f.split('/')[-1].split('-')[1], r['images'])].append((r['phases_ms'].get('end_to_end'), r['forward_ms']['median']))
    else: print(f.split('/')[-1], r['images'], ok, r['validation']['max_abs_prob_diff'], r.get('accuracy'))
print('not validated:', bad)
for k in sorted(e): print(k, 'fwd', ['%.4f'%b for a,b in e[k]], 'median fwd %.4f e2e %.4f'%(st.median(b for a,b in e[k]), st.median(a for a,b in e[k])))
PY
cd $OUT && tar czf r.tgz r && rm -rf r
