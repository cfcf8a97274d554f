#!/usr/bin/env bash
# On the GPU machine: cuda:winograd_mma's conv2 with parts of its round left out (results wrong, timing only).
#   run.sh [variants]   default "base noA noB noAB" (change.diff: phase A, B or both left out); "base s4 s5 s6"
#                       ran for phase-b/ (change-b.diff)
# build/exp/carry/bins.tar.xz holds suite-<variant> for each, built here from this commit with the edit and its
# CNN_CONV2_SKIP value, beside the runtime libraries (a carried build's offload-runtime/ and lib/).
set -u
variants=${1:-base noA noB noAB}
R=$OUT/r
mkdir -p "$R"
tar -C build/exp/carry -xJf build/exp/carry/bins.tar.xz
build=build/exp/carry
source scripts/gpu-libs.sh
in="--data data/cifar10 --weights data/convnetjs-cifar10"
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; cat /proc/sys/kernel/random/boot_id; } > "$R/device.txt"
M=gpu__time_duration.sum,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active
for v in $variants; do
  timeout 100 ncu --clock-control none --csv --kernel-name regex:"winograd_layer_kernel|conv1_pixels_kernel" --metrics $M -c 6 \
    build/exp/carry/suite-$v $in --backend cuda:winograd_mma --images 8192 --batch 8192 --repeat 1 --warmup 0 --quiet \
    --output /tmp/n-$v.json > "$R/ncu-$v.csv" 2>&1
  echo "ncu $v rc=$?"
done
for round in 1 2; do
  for v in $variants; do
    build/exp/carry/suite-$v $in --backend cuda:winograd_mma --images 1200,50000 --repeat 20 --quiet --output "$R/ab-$v-$round.json" \
      > /dev/null 2> "$R/ab-$v-$round.err"
    echo "suite $v round $round rc=$?"
  done
done
python3 results/ab/ncu_layers.py $(for v in $variants; do echo "$v=$R/ncu-$v.csv"; done)
python3 - "$R" <<'PY'
import glob, json, os, sys
R = sys.argv[1]
for f in sorted(glob.glob(f"{R}/ab-*.json")):
    try:
        for r in json.load(open(f))["runs"]:
            print(os.path.basename(f), r["images"], "median %.4f" % r["forward_ms"]["median"], r["validation"]["passed"])
    except Exception as e:
        print(os.path.basename(f), "unreadable:", e)
PY
tar -C "$OUT" -czf "$OUT/r.tgz" r && rm -rf "$R"
