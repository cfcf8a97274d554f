#!/usr/bin/env bash
# Builds, here, what scripts/gpu-bench.sh runs on the GPU machine: <build> (default build/cuda) with every
# GPU backend for sm_90 + PTX and a host ISA any x86-64 GPU server runs (x86-64-v2), plus the runtime
# libraries that machine lacks: GCC's OpenACC runtime (<build>/openacc-runtime) and Google Benchmark
# (<build>/testlibs, for suite_tests). Kokkos is off here: Kokkos-CUDA needs every C++ file compiled by
# nvcc_wrapper, so it is its own build (backends/kokkos/README.md), which gpu-bench.sh runs when carried.
# Usage: scripts/gpu-build.sh [build-dir]; carry the folder (about 25 MB) to the GPU machine.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/cuda}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DSUITE_MARCH=x86-64-v2 -DWITH_KOKKOS=OFF >/dev/null
cmake --build "$build" -j2 --target suite suite_tests
scripts/openacc-runtime.sh "$build"
mkdir -p "$build/testlibs"
for lib in $(ldd "$build/tests/suite_tests" | awk '/libbenchmark/ {print $3}'); do cp -L "$lib" "$build/testlibs/"; done
echo "gpu-build: $build ready; on the GPU machine: scripts/gpu-bench.sh $build <out-dir>"
