#!/usr/bin/env bash
# On the GPU machine: cuda:winograd_mma's conv1 (conv1_pixels_kernel) with parts of its round left out, timing only
# (results wrong): suite-s0 as it is, s1 without the pixels' staging after a block's first round, s2 without the
# pooling epilogue (the sums kept alive by a 32-add sink), s3 without both. Built here from this commit with
# change.diff and `#define CNN_CONV1_SKIP <n>` (ninja -C build/cuda suite), packed with build/cuda/lib and a carried
# build's offload-runtime as build/exp/c1.tar.xz.
source results/ab/device-setup.sh build/exp/c1.tar.xz || exit 1
M=gpu__time_duration.sum,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__warps_eligible.avg.per_cycle_active
for v in s0 s1 s2 s3; do
  timeout 120 ncu --clock-control none --csv --kernel-name regex:"winograd_layer_kernel|conv1_pixels_kernel" --metrics $M -c 6 \
    $B/suite-$v $in --backend cuda:winograd_mma --images 8192 --batch 8192 --repeat 1 --warmup 0 --quiet \
    --output /tmp/n-$v.json > "$R/ncu-$v.csv" 2>&1
  echo "ncu $v rc=$?"
done
python3 results/ab/ncu_layers.py $(for v in s0 s1 s2 s3; do echo "$v=$R/ncu-$v.csv"; done) | grep conv1
tar -C "$OUT" -czf "$OUT/r.tgz" r && rm -rf "$R"
