#!/usr/bin/env bash
# Builds, here, what scripts/gpu-bench.sh runs on the GPU machine: <build> (default build/cuda) with every
# GPU backend for sm_90 + PTX and a host ISA any x86-64 GPU server runs (x86-64-v2), plus the runtime
# libraries that machine lacks: GCC's OpenACC/OpenMP runtime (<build>/offload-runtime) and Google Benchmark
# (<build>/testlibs, for suite_tests). Kokkos is off there: Kokkos-CUDA needs every C++ file compiled by
# nvcc_wrapper. What a backend builds beside it is its manifest's "gpu_build" hook (scripts/backend-hooks.sh),
# run with <build>: Kokkos' second binary beside it (<build>-<backend>, 20 MB), which holds Kokkos-CUDA together
# with the backends built with nvcc, so that gpu-bench.sh compares them in one process.
# Usage: scripts/gpu-build.sh [build-dir]; carry the folder(s) (about 25 MB, + 20 for Kokkos') to the GPU machine.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/cuda}
# From the manifests: backends whose shared libraries the GPU machine lacks ("host_libraries": oneDNN, TBB)
# are left out, and so is the one whose CUDA build needs nvcc_wrapper for every file (the second binary).
main_off=$(scripts/backends --where '!host_libraries' --where '!cuda_build=nvcc_wrapper' --cmake-off)
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DSUITE_MARCH=x86-64-v2 $main_off >/dev/null
cmake --build "$build" -j2 --target suite suite_tests
scripts/gcc-offload-runtime.sh "$build"
mkdir -p "$build/testlibs"
for lib in $(ldd "$build/tests/suite_tests" | awk '/libbenchmark/ {print $3}'); do cp -L "$lib" "$build/testlibs/"; done
scripts/backend-hooks.sh gpu_build "$build"
echo "gpu-build: $build ready; on the GPU machine: scripts/gpu-bench.sh $build <out-dir>"
