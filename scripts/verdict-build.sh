#!/usr/bin/env bash
# Builds, here, what scripts/verdict-bench.sh runs on each platform of the portability verdict:
#   scripts/verdict-build.sh cpu [dir]   (default build/verdict-cpu) every CPU model for any AVX-512 x86-64
#       (-march=x86-64-v4: the same binary on this machine's CPU and the GPU machine's host), the portable
#       models on what their manifests' "cpu_build" hooks prepare (Kokkos: its OpenMP space), fma_peak, and
#       the libraries the GPU machine lacks (runlibs/)
#   scripts/verdict-build.sh gpu [dir]   (default build/verdict-gpu) every GPU backend for sm_90 and
#       gpu_peak, then the manifests' "gpu_build" hooks with <dir> (Kokkos: a second binary beside <dir>,
#       Kokkos-CUDA and the backends built with nvcc, when its CUDA space is installed), as scripts/gpu-build.sh
# Carry the folder(s) to the GPU machine; verdict-bench.sh cpu|gpu <dir> <out> runs them.
set -euo pipefail
if [ $# -lt 1 ] || [ $# -gt 2 ] || { [ "$1" != cpu ] && [ "$1" != gpu ]; } || [ "${2-x}" = "" ]; then
  echo "verdict-build.sh: usage: verdict-build.sh cpu|gpu [dir]" >&2; exit 2
fi
kind=$1
# A relative [dir] is the caller's; the default is the repository's.
given=""; [ $# -lt 2 ] || given=$(realpath -m -- "$2")
cd "$(dirname "$0")/.."
if [ "$kind" = cpu ]; then
  dir=${given:-build/verdict-cpu}
  # What the backends' "cpu_build" hooks prepare (a toolchain) and the CMake arguments they print, one a
  # line, so that a clone path with a space stays one argument.
  hook_out=$(scripts/backend-hooks.sh cpu_build)
  hook_args=()
  [ -z "$hook_out" ] || mapfile -t hook_args <<<"$hook_out"
  # The backends of kind cpu and portable (their manifests), the portable ones required.
  # shellcheck disable=SC2046  # scripts/backends' flags are words without spaces
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSUITE_MARCH=x86-64-v4 "${hook_args[@]}" \
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
  dir=${given:-build/verdict-gpu}
  # As scripts/gpu-build.sh: backends whose libraries the GPU machine lacks ("host_libraries") and the one
  # that needs nvcc_wrapper (its "gpu_build" hook builds it) are left out; the CPU models run from the cpu build.
  main_off=$(scripts/backends --where '!host_libraries' --where '!cuda_build=nvcc_wrapper' --cmake-off)
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSUITE_MARCH=x86-64-v2 $main_off \
    -DSUITE_BUILD_BENCHMARKS=ON -DBUILD_TESTING=OFF >/dev/null
  cmake --build "$dir" -j2 --target suite gpu_peak
  scripts/gcc-offload-runtime.sh "$dir"
  # The hooks' binaries beside it (as scripts/gpu-build.sh), without tests and micro-benchmarks.
  scripts/backend-hooks.sh gpu_build "$dir" -G Ninja -DBUILD_TESTING=OFF -DSUITE_BUILD_BENCHMARKS=OFF
fi
echo "verdict-build: $dir ready"
