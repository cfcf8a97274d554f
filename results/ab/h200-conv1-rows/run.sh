#!/usr/bin/env bash
# On the GPU machine: cuda:winograd_mma (conv1 as a direct implicit GEMM, cuda_conv1_pixels.cuh) against
# cuda:winograd_mma_rows (conv1 as a 1D Winograd F(4,5) along x, cuda_conv1_rows.cuh), one binary.
# build/exp/rows.tar.xz, made here: `git apply change.diff && ninja -C build/cuda suite`, then build/cuda/bin/suite,
# build/cuda/lib/, a carried build's offload-runtime/ (scripts/gcc-offload-runtime.sh) and unseen_batch.bin
# (make_unseen.py) packed with `tar -C <dir> -cJf build/exp/rows.tar.xz .`.
source results/ab/device-setup.sh build/exp/rows.tar.xz || exit 1
both=cuda:winograd_mma,cuda:winograd_mma_rows
timeout 120 $B/suite $in --backend $both --images 1,7,300,1200,4223 --repeat 2 --quiet --output "$R/boundaries.json" \
  2> "$R/boundaries.err"; echo "boundaries rc=$?"
timeout 60 $B/suite --data $B/unseen_batch.bin --weights data/convnetjs-cifar10 --backend $both --images 1000 --repeat 2 \
  --quiet --output "$R/unseen.json" 2> "$R/unseen.err"; echo "unseen rc=$?"
if command -v compute-sanitizer > /dev/null; then
  for tool in memcheck racecheck; do
    timeout 120 compute-sanitizer --tool $tool $B/suite $in --backend cuda:winograd_mma_rows --images 40 --repeat 1 \
      --warmup 0 --quiet --output /tmp/san.json > "$R/sanitizer-$tool.txt" 2>&1; echo "sanitizer $tool rc=$?"
  done
fi
M=gpu__time_duration.sum,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,smsp__warps_eligible.avg.per_cycle_active
for v in winograd_mma winograd_mma_rows; do
  timeout 120 ncu --clock-control none --csv --kernel-name regex:"winograd_layer_kernel|conv1_pixels_kernel|conv1_rows_kernel" \
    --metrics $M -c 6 $B/suite $in --backend cuda:$v --images 8192 --batch 8192 --repeat 1 --warmup 0 --quiet \
    --output /tmp/n-$v.json > "$R/ncu-$v.csv" 2>&1
  echo "ncu $v rc=$?"
done
for round in 1 2 3; do
  for v in winograd_mma winograd_mma_rows; do
    timeout 60 $B/suite $in --backend cuda:$v --images 1200,50000 --repeat 20 --quiet --output "$R/ab-$v-$round.json" \
      2> "$R/ab-$v-$round.err"
    echo "suite $v round $round rc=$?"
  done
done
python3 results/ab/ncu_layers.py winograd_mma="$R/ncu-winograd_mma.csv" winograd_mma_rows="$R/ncu-winograd_mma_rows.csv"
python3 - "$R" <<'PY'
import glob, json, os, sys
R = sys.argv[1]
for f in sorted(glob.glob(f"{R}/*.json")):
    try:
        for r in json.load(open(f))["runs"]:
            val = r["validation"]
            print(os.path.basename(f), r["variant"], r["images"], "median %.4f" % r["forward_ms"]["median"],
                  "acc", r.get("accuracy"), "passed", val["passed"], "maxdp", val.get("max_abs_prob_diff"))
    except Exception as e:
        print(os.path.basename(f), "unreadable:", e)
PY
tar -C "$OUT" -czf "$OUT/r.tgz" r && rm -rf "$R"
