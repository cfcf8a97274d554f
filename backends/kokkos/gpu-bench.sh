#!/usr/bin/env bash
# The manifest's "gpu_bench" and "verdict_bench", run ON the GPU machine from the repository root, by
# scripts/gpu-bench.sh and scripts/verdict-bench.sh gpu: Kokkos-CUDA in one process beside hand-written CUDA
# (and cuDNN), from the second binary <build>-kokkos that gpu-build.sh makes, when it was carried.
#   backends/kokkos/gpu-bench.sh <build> <out>             beside cuda:fused_persistent and cudnn, 20 passes
#       (<out>/kokkos-cuda-suite.json and .txt)
#   backends/kokkos/gpu-bench.sh --verdict <build> <out>   beside the fastest CUDA variant (the verdict; the
#       README's table "gpu-h200-kokkos" is the H200's)
# Without <build>-kokkos it does nothing. Exits 1 if the run failed.
set -uo pipefail
verdict=false
[ "${1:-}" = --verdict ] && { verdict=true; shift; }
build=${1:?usage: backends/kokkos/gpu-bench.sh [--verdict] <build> <out>}
out=${2:?usage: backends/kokkos/gpu-bench.sh [--verdict] <build> <out>}
suite=$build-kokkos/bin/suite
[ -x "$suite" ] || exit 0
step() { echo; echo "=== $*"; }
status=0
if $verdict; then
  step "Kokkos-CUDA beside the fastest CUDA variant, one process ($(date -u +%T))"
  # A carried build is no build tree there (no CMakeCache.txt above it): name the data (suite's build_info).
  "$suite" --data data/cifar10 --weights data/convnetjs-cifar10 --backend kokkos,cuda:winograd_mma \
    --images 1200,50000 --repeat 20 --output "$out/kokkos-cuda-suite.json" 2>&1 |
    grep -E '^[a-z]+:[a-z0-9_]+ +[0-9]|report:|error' || status=1
else
  step "Kokkos-CUDA beside the hand-written CUDA and cuDNN, one process ($build-kokkos)"
  "$suite" --backend kokkos,cuda:fused_persistent,cudnn --images 1200,50000 --repeat 20 \
    --output "$out/kokkos-cuda-suite.json" 2>&1 | tee "$out/kokkos-cuda-suite.txt" | grep -v '^   [a-z]*[0-9]* ' || status=1
fi
exit $status
