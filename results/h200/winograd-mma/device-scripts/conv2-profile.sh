#!/bin/bash
# Where conv2 (winograd_mma) spends its issue slots and stalls: per-SASS-instruction samples.
build=$PWD/build/gpu-carry/cuda; source scripts/gpu-libs.sh
in="--data data/cifar10 --weights data/convnetjs-cifar10"
R=$OUT/p; mkdir -p $R
nvidia-smi --query-gpu=name --format=csv,noheader
for k in 1 2; do  # 1: conv2, 2: conv3 (the first launches of winograd_layer_kernel)
timeout 150 ncu --clock-control none --kernel-name winograd_layer_kernel --launch-skip $((k-1)) -c 1 --section SourceCounters --section WarpStateStats --section MemoryWorkloadAnalysis_Tables --section SchedulerStats -o /tmp/prof$k $build/bin/suite $in --backend cuda:winograd_mma --images 4096 --batch 4096 --repeat 1 --warmup 0 --quiet --output /tmp/n.json > $R/ncu$k.log 2>&1; echo "ncu $k rc=$?"
ncu --import /tmp/prof$k.ncu-rep --page source --csv --print-source sass > $R/sass$k.csv 2>&1; echo "sass $k rc=$?"
ncu --import /tmp/prof$k.ncu-rep --page details > $R/details$k.txt 2>&1
done
ls -la $R; head -3 $R/sass1.csv | cut -c1-600
cd $OUT && tar czf p.tgz p && rm -rf p
