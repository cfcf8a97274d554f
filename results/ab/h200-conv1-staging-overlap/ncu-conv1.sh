# Sourced by run.sh and run2.sh after results/ab/device-setup.sh: ncu_conv1 SIDE... profiles two
# conv1_pixels_kernel launches of each side's suite (8192 images in chunks of 4096) into $R/ncu-SIDE.csv.
ncu_conv1() {
  local M=gpu__time_duration.sum,smsp__inst_executed.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active
  for side in "$@"; do
    timeout 120 ncu --clock-control none --csv --kernel-name regex:conv1_pixels_kernel --metrics $M -c 2 \
      $B/bin/suite-$side $in --backend cuda:winograd_mma --images 8192 --batch 4096 --repeat 1 --warmup 0 --quiet \
      --output /tmp/n-$side.json > "$R/ncu-$side.csv" 2>&1
    echo "ncu $side rc=$?"
  done
}
