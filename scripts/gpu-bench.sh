#!/usr/bin/env bash
# The whole GPU benchmark, run ON the GPU machine (from any folder), with a build folder made on
# the development machine and carried over (see README.md, "GPU machine"):
#   scripts/gpu-bench.sh <build-dir> <out-dir>
# Every GPU backend/variant at 1200 and 50000 images in one suite run (so one binary, one process; the slow
# layer-wise offload ports in a second run), the four fastest up to 1000000 images beside the vendor
# yardsticks (<out>/tensor-suite.json), the PyTorch peer in the same session, the manifests' "gpu_bench"
# hooks (Kokkos-CUDA beside hand-written CUDA, from the second binary gpu-build.sh makes), an out-of-memory
# check and compute-sanitizer memcheck/racecheck of the backends built with nvcc, and Nsight Compute summaries
# of the four fastest variants. Each step says what it runs; a failing step is reported and the next one
# still runs.
set -uo pipefail
[ $# -eq 2 ] && [ -n "$1" ] && [ -n "$2" ] || { echo "gpu-bench.sh: usage: gpu-bench.sh <build-dir> <out-dir>" >&2; exit 2; }
# Relative arguments are the caller's; the tools are called from the repository root.
build=$(realpath -m -- "$1")
out=$(realpath -m -- "$2")
# Checked before any work: without them every step fails with its own traceback.
[ -f "$build/bin/suite" ] && [ -x "$build/bin/suite" ] ||
  { echo "gpu-bench.sh: $1/bin/suite: no such program (make it with scripts/gpu-build.sh)" >&2; exit 2; }
command -v nvidia-smi >/dev/null ||
  { echo "gpu-bench.sh: nvidia-smi not found: no NVIDIA driver here (run this on the GPU machine)" >&2; exit 4; }
cd "$(dirname "$0")/.." || exit 2
mkdir -p "$out" || exit 2
# Reports nobody reads (the OOM check, the sanitizers, ncu) go here, not to fixed names another user can plant.
scratch=$(mktemp -d) || exit 2
trap 'rm -rf "$scratch"' EXIT
status=0
step() { echo; echo "=== $*"; }

source scripts/gpu-libs.sh
suite=$build/bin/suite
# The GPU and portable backends (their manifests' "kind") this binary has built, by name and by variant.
gpu_kinds=(--suite "$suite" --where kind=gpu,portable)
gpu_names=$(python3 scripts/backends "${gpu_kinds[@]}")

step "device"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv
"$suite" --list

step "tests of the GPU variants (the generic every-variant test)"
"$build/tests/suite_tests" --gtest_filter="$(tr , '\n' <<<"$gpu_names" | sed 's/.*/*EveryVariant*&_*/' | paste -sd: -)" \
  2>&1 | tail -n 5 || status=1

# The variants a manifest calls "slow" (the directive-based layer-wise ports map their data on every call):
# seconds per pass at 50000 images. They run apart, with the automatic repeat (a pass over a second is its
# own sample) and a time limit, so that the others get 20 passes each.
fast_backends=$(python3 scripts/backends "${gpu_kinds[@]}" --variants --fast)
slow_backends=$(python3 scripts/backends "${gpu_kinds[@]}" --variants --slow)
step "suite: $fast_backends at 1200 and 50000 images"
"$suite" --backend "$fast_backends" --images 1200,50000 --repeat 20 --output "$out/gpu-suite.json" \
  2>&1 | tee "$out/gpu-suite.txt" | grep -v '^   [a-z]*[0-9]* ' || status=1
if [ -n "$slow_backends" ] && [ "${GPU_BENCH_SLOW:-1}" = 1 ]; then  # GPU_BENCH_SLOW=0: skip them
  step "suite: $slow_backends at 1200 and 50000 images (automatic repeat, at most 2 minutes)"
  timeout 120 "$suite" --backend "$slow_backends" --images 1200,50000 --output "$out/gpu-suite-offload-layerwise.json" \
    2>&1 | tee "$out/gpu-suite-offload-layerwise.txt" | grep -v '^   [a-z]*[0-9]* ' || status=1
fi

# What a backend runs beside the others (its manifest's "gpu_bench", scripts/backend-hooks.sh): its steps.
scripts/backend-hooks.sh gpu_bench "$build" "$out" || status=1

# The four fastest variants of that run at 50000 images and the vendor yardsticks, up to a million images:
# does the time stay linear in the images (a bounded working set, no allocation per pass)?
fastest=$(python3 - "$out/gpu-suite.json" <<'PY'
import json, os, sys
if not os.path.isfile(sys.argv[1]):
    sys.exit(0)  # the suite step failed and said so: nothing to take further
runs = [r for r in json.load(open(sys.argv[1])).get("runs", []) if r.get("images") == 50000]
runs.sort(key=lambda r: r["forward_ms"]["median"])
print(",".join(f"{r['backend']}:{r['variant']}" for r in runs[:4]))
PY
) && vendors=$(python3 scripts/backends "${gpu_kinds[@]}" --where vendor=true)
if [ -n "$fastest" ]; then
  step "suite: $fastest${vendors:+,$vendors} at 1200, 50000 and 1000000 images"
  "$suite" --backend "$fastest${vendors:+,$vendors}" --images 1200,50000,1000000 --repeat 10 \
    --output "$out/tensor-suite.json" 2>&1 | tee "$out/tensor-suite.txt" | grep -v '^   [a-z]*[0-9]* ' || status=1
fi

step "the PyTorch peer (cudnn.benchmark on, TF32 off)"
py=python3
[ -x /opt/torch/.venv/bin/python3 ] && py=/opt/torch/.venv/bin/python3
PYTHONUNBUFFERED=1 $py scripts/peer_pytorch.py --device cuda --images 1200,50000 --repeat 20 \
  --output "$out/pytorch-cuda.json" || status=1

# The backends built with nvcc (manifests' "cuda_build"): the hand-written CUDA and the vendor library; the
# sanitizers' race check takes the hand-written ones only (no vendor library).
nvcc_built=(--suite "$suite" --where cuda_build=nvcc)
# The batch is capped at the run's images, so the run is large: 2 million images in one launch need over
# 200 GB of layer outputs (6 GB of images on the host). The first variant of the first of them (the naive
# layer-wise one, whose layer outputs all live at once).
oom_variant=$(python3 scripts/backends "${nvcc_built[@]}" --variants | cut -d, -f1)
if [ -n "$oom_variant" ]; then
  step "GPU out of memory: $oom_variant, 2000000 images in one batch give one line and exit 1"
  "$suite" --backend "$oom_variant" --images 2000000 --batch 2000000 --quiet --output "$scratch/oom.json"
  oom=$?
  echo "exit code $oom"
  [ "$oom" = 1 ] || status=1
else
  step "GPU out of memory: skipped (note: this build has no backend built with nvcc)"
fi

if [ "${GPU_BENCH_SANITIZER:-1}" = 1 ] && command -v compute-sanitizer >/dev/null; then  # GPU_BENCH_SANITIZER=0: skip
  step "compute-sanitizer memcheck and racecheck, 40 images"
  {
    compute-sanitizer --tool memcheck "$suite" --backend "$(python3 scripts/backends "${nvcc_built[@]}")" \
      --images 40 --quiet --output "$scratch/m.json" 2>&1 | tail -n 2
    compute-sanitizer --tool racecheck "$suite" --backend "$(python3 scripts/backends "${nvcc_built[@]}" --where '!vendor')" \
      --images 40 --quiet --output "$scratch/r.json" 2>&1 | tail -n 2
  } | tee "$out/compute-sanitizer.txt"
fi

# The four fastest variants of the 50000-image run (as the million-image step), <out>/ncu-<variant>.txt: the
# first launch of a whole-network kernel (fused*_kernel) or, for a Winograd variant, of its first layer's.
if [ "${GPU_BENCH_NCU:-1}" = 1 ] && [ -n "$fastest" ] && command -v ncu >/dev/null; then  # GPU_BENCH_NCU=0: skip
  for bv in ${fastest//,/ }; do
    v=${bv#*:}
    step "Nsight Compute: $bv at 50000 images"
    ncu --clock-control none --kernel-name "regex:(fused|winograd).*_kernel" --launch-count 1 \
        --section SpeedOfLight --section Occupancy --section LaunchStats --section ComputeWorkloadAnalysis \
        --metrics "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum,gpu__time_duration.sum,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed_pipe_tensor.sum,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio" \
        "$suite" --backend "$bv" --images 50000 --repeat 1 --warmup 0 --quiet --output "$scratch/n.json" \
        > "$out/ncu-$v.txt" 2>&1
    grep -E "Duration|Throughput|Occupancy|Registers|ffma|Block Limit|Pipe|stalled" "$out/ncu-$v.txt" | awk '$NF != "0"' | head -n 40
  done
fi
exit $status
