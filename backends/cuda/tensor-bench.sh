#!/usr/bin/env bash
# The evidence for the tensor-core variants (issue 16), run ON the GPU machine from the repository root with
# a build folder made by scripts/gpu-build.sh and carried over:
#   backends/cuda/tensor-bench.sh <build-dir> <out-dir>
# Their tests (the generic every-variant test), one suite run of cuda:fused_persistent, cuda:fused_tf32x3,
# cuda:fused_fp16x3 and cudnn:fp32 at 1200, 50000 and 1000000 images (<out>/tensor-suite.json),
# compute-sanitizer memcheck/racecheck, and a full Nsight Compute report of each new kernel at 50000 images
# (<out>/ncu-<variant>.txt). A failing step is reported and the next one still runs.
set -uo pipefail
build=${1:?usage: tensor-bench.sh <build-dir> <out-dir>}
out=${2:?usage: tensor-bench.sh <build-dir> <out-dir>}
mkdir -p "$out"
status=0
step() { echo; echo "=== $*"; }
source "$(dirname "$0")/../../scripts/gpu-libs.sh"
suite=$build/bin/suite
variants="fused_tf32x3 fused_fp16x3"

step "device"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv

step "tests of the fused CUDA variants"
"$build/tests/suite_tests" --gtest_filter='*EveryVariant*cuda_fused*' 2>&1 | tail -n 8 || status=1

step "suite: cuda:fused_persistent, the tensor-core variants and cudnn:fp32 at 1200, 50000 and 1000000 images"
backends=cuda:fused_persistent$(printf ',cuda:%s' $variants),cudnn
"$suite" --backend "$backends" --images 1200,50000,1000000 --repeat 10 --output "$out/tensor-suite.json" \
  2>&1 | tee "$out/tensor-suite.txt" | grep -v '^   [a-z]*[0-9]* ' || status=1

if command -v compute-sanitizer >/dev/null; then
  step "compute-sanitizer memcheck and racecheck, 40 images"
  list=$(printf 'cuda:%s,' $variants)
  {
    compute-sanitizer --tool memcheck "$suite" --backend "${list%,}" --images 40 --quiet --output /tmp/m.json 2>&1 | tail -n 2
    compute-sanitizer --tool racecheck "$suite" --backend "${list%,}" --images 40 --quiet --output /tmp/r.json 2>&1 | tail -n 2
  } | tee "$out/compute-sanitizer-tensor.txt"
fi

if command -v ncu >/dev/null; then
  for v in $variants; do
    step "Nsight Compute (full set): cuda:$v at 50000 images"
    ncu --clock-control none --set full --kernel-name regex:fused_mma_kernel --launch-count 1 \
        --metrics "smsp__inst_executed_pipe_tensor.sum,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio" \
        "$suite" --backend cuda:$v --images 50000 --repeat 1 --warmup 0 --quiet --output /tmp/n.json > "$out/ncu-$v.txt" 2>&1
    grep -E "Duration|tensor|Issue Slots|Eligible|stalled_(wait|math|dispatch|short|barrier)" "$out/ncu-$v.txt" | head -n 20
  done
fi
exit $status
