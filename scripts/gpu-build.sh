#!/usr/bin/env bash
# Builds, here, what scripts/gpu-bench.sh runs on the GPU machine: <build> (default build/cuda) with every
# GPU backend for sm_90 + PTX and a host ISA any x86-64 GPU server runs (x86-64-v2), plus the runtime
# libraries that machine lacks: GCC's OpenACC/OpenMP runtime (<build>/offload-runtime) and Google Benchmark
# (<build>/testlibs, for suite_tests). Kokkos is off there: Kokkos-CUDA needs every C++ file compiled by
# nvcc_wrapper. When backends/kokkos/build-kokkos.sh has installed Kokkos with CUDA (build/kokkos-install/cuda), a
# second binary, <build>-kokkos (20 MB), holds Kokkos-CUDA together with the cuda and cudnn backends, so
# that gpu-bench.sh compares them in one process (OpenACC is left out of it: GCC's offloading and nvcc_wrapper
# do not mix).
# Usage: scripts/gpu-build.sh [build-dir]; carry the folder(s) (about 25 + 20 MB) to the GPU machine.
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
kokkos=$PWD/build/kokkos-install/cuda
if [ -x "$kokkos/bin/nvcc_wrapper" ]; then
  # The backends built with nvcc or nvcc_wrapper (manifest "cuda_build"), each required.
  with_cuda="--where cuda_build=nvcc,nvcc_wrapper"
  PATH=/usr/local/cuda/bin:$PATH cmake -S . -B "$build-kokkos" -DCMAKE_BUILD_TYPE=Release -DSUITE_MARCH=x86-64-v2 \
    $(scripts/backends $with_cuda --cmake-off) $(scripts/backends $with_cuda --cmake-on) \
    -DKokkos_ROOT="$kokkos" -DCMAKE_CXX_COMPILER="$kokkos/bin/nvcc_wrapper" >/dev/null
  PATH=/usr/local/cuda/bin:$PATH cmake --build "$build-kokkos" -j2 --target suite
else
  echo "gpu-build: no Kokkos with CUDA in $kokkos (backends/kokkos/build-kokkos.sh builds it): Kokkos-CUDA skipped"
fi
echo "gpu-build: $build ready; on the GPU machine: scripts/gpu-bench.sh $build <out-dir>"
