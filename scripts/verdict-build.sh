#!/usr/bin/env bash
# Builds, here, what scripts/verdict-bench.sh runs on each platform of the portability verdict:
#   scripts/verdict-build.sh cpu [dir]   (default build/verdict-cpu) every CPU model for any AVX-512 x86-64
#       (-march=x86-64-v4: the same binary on this machine's CPU and the GPU machine's host), Kokkos on its
#       OpenMP space (backends/kokkos/build-kokkos.sh), fma_peak, and the libraries the GPU machine lacks (runlibs/)
#   scripts/verdict-build.sh gpu [dir]   (default build/verdict-gpu) every GPU backend for sm_90 and
#       gpu_peak; with Kokkos' CUDA space installed, <dir>-kokkos holds Kokkos-CUDA and the backends built
#       with nvcc (manifest "cuda_build")
# Carry the folder(s) to the GPU machine; verdict-bench.sh cpu|gpu <dir> <out> runs them.
set -euo pipefail
cd "$(dirname "$0")/.."
kind=${1:?usage: verdict-build.sh cpu|gpu [dir]}
kokkos=$PWD/build/kokkos-install
if [ "$kind" = cpu ]; then
  dir=${2:-build/verdict-cpu}
  [ -f "$kokkos/openmp/lib/cmake/Kokkos/KokkosConfig.cmake" ] || backends/kokkos/build-kokkos.sh
  # The backends of kind cpu and portable (their manifests), the portable ones required.
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSUITE_MARCH=x86-64-v4 -DKokkos_ROOT="$kokkos/openmp" \
    -DSUITE_BACKEND_KINDS="cpu;portable" $(scripts/backends --where kind=portable --cmake-on) \
    -DSUITE_BUILD_BENCHMARKS=ON -DBUILD_TESTING=OFF >/dev/null
  cmake --build "$dir" -j2 --target suite fma_peak
  mkdir -p "$dir/runlibs"
  libs="$(scripts/backends --where host_libraries --libraries)|libbenchmark"  # manifests' "host_libraries"
  for lib in $(ldd "$dir/bin/suite" "$dir/bin/fma_peak" | awk -v libs="$libs" '$0 ~ libs {print $3}' | sort -u); do
    cp -L "$lib" "$dir/runlibs/"
  done
  tar -C "$dir" -cJf "$dir/runlibs.tar.xz" runlibs  # verdict-bench.sh unpacks it where the folder is missing
else
  dir=${2:-build/verdict-gpu}
  # As scripts/gpu-build.sh: backends whose libraries the GPU machine lacks ("host_libraries") and the one
  # that needs nvcc_wrapper are left out; the CPU models run from the cpu build.
  main_off=$(scripts/backends --where '!host_libraries' --where '!cuda_build=nvcc_wrapper' --cmake-off)
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSUITE_MARCH=x86-64-v2 $main_off \
    -DSUITE_BUILD_BENCHMARKS=ON -DBUILD_TESTING=OFF >/dev/null
  cmake --build "$dir" -j2 --target suite gpu_peak
  scripts/gcc-offload-runtime.sh "$dir"
  if [ -x "$kokkos/cuda/bin/nvcc_wrapper" ]; then
    with_cuda="--where cuda_build=nvcc,nvcc_wrapper"  # as scripts/gpu-build.sh's second binary
    PATH=/usr/local/cuda/bin:$PATH cmake -S . -B "$dir-kokkos" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DSUITE_MARCH=x86-64-v2 $(scripts/backends $with_cuda --cmake-off) $(scripts/backends $with_cuda --cmake-on) -DBUILD_TESTING=OFF \
      -DSUITE_BUILD_BENCHMARKS=OFF -DKokkos_ROOT="$kokkos/cuda" -DCMAKE_CXX_COMPILER="$kokkos/cuda/bin/nvcc_wrapper" >/dev/null
    PATH=/usr/local/cuda/bin:$PATH cmake --build "$dir-kokkos" -j2 --target suite
  else
    echo "verdict-build: no Kokkos with CUDA in $kokkos/cuda (backends/kokkos/build-kokkos.sh builds it): Kokkos-CUDA skipped"
  fi
fi
echo "verdict-build: $dir ready"
