#!/bin/bash
# What fills L1/shared in conv1_pixels (mma.sync) and conv1_wgmma: the throughput breakdown and the tables.
build=$PWD/build/gpu-carry/cuda; source scripts/gpu-libs.sh
A=$PWD/build/gpu-carry/ab; S=$A/suite-wgmma; R=$OUT/r; mkdir -p $R
in="--data data/cifar10 --weights data/convnetjs-cifar10"
for v in pixels wgmma; do
  [ $v = pixels ] && export SUITE_NO_WGMMA=1 || unset SUITE_NO_WGMMA
  timeout 150 ncu --clock-control none --kernel-name regex:"conv1_pixels_kernel|conv1_wgmma_kernel" --section SpeedOfLight --section MemoryWorkloadAnalysis_Tables --section ComputeWorkloadAnalysis --section WarpStateStats --print-details all --metrics sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio -c 1 $S $in --backend cuda:winograd_mma --images 8192 --batch 8192 --repeat 1 --warmup 0 --quiet --output /tmp/n-$v.json > $R/ncu-l1-$v.txt 2>&1; echo "ncu $v rc=$?"
done
ncu --query-metrics 2>/dev/null | grep -iE "gmma|wgmma" | head -20 > $R/gmma-metrics.txt; cat $R/gmma-metrics.txt
grep -hE "l1tex__|lsu|tensor_op|stalled|Duration|Shared|Wavefronts|Global" $R/ncu-l1-*.txt | cut -c1-150 | head -120
cd $OUT && tar czf r.tgz r && rm -rf r
