#!/usr/bin/env bash
# The manifest's "gpu_build", run by scripts/gpu-build.sh and scripts/verdict-build.sh gpu from the repository
# root: backends/kokkos/gpu-build.sh <dir> [cmake args...] builds <dir>-kokkos, a second GPU binary (20 MB)
# holding Kokkos-CUDA together with the backends built with nvcc (manifests' "cuda_build"), so that
# gpu-bench.sh and verdict-bench.sh compare them in one process. Kokkos-CUDA needs every C++ file compiled by
# nvcc_wrapper, so it is off in <dir> itself; OpenACC is left out here (GCC's offloading and nvcc_wrapper do
# not mix). Needs Kokkos with CUDA from build-kokkos.sh (build/kokkos-install/cuda, or $KOKKOS_CUDA_ROOT);
# without it, one line and exit 0 (the comparison is skipped, the rest of the GPU build stands).
set -euo pipefail
dir=${1:?usage: backends/kokkos/gpu-build.sh <dir> [cmake args...]}
shift
kokkos=${KOKKOS_CUDA_ROOT:-$PWD/build/kokkos-install/cuda}
if [ ! -x "$kokkos/bin/nvcc_wrapper" ]; then
  echo "kokkos: no Kokkos with CUDA in $kokkos (backends/kokkos/build-kokkos.sh builds it): Kokkos-CUDA skipped"
  exit 0
fi
# The backends built with nvcc or nvcc_wrapper (manifest "cuda_build"), each required.
with_cuda="--where cuda_build=nvcc,nvcc_wrapper"
# shellcheck disable=SC2046,SC2086  # the flags are words
PATH=/usr/local/cuda/bin:$PATH cmake -S . -B "$dir-kokkos" -DCMAKE_BUILD_TYPE=Release -DSUITE_MARCH=x86-64-v2 \
  $(scripts/backends $with_cuda --cmake-off) $(scripts/backends $with_cuda --cmake-on) "$@" \
  -DKokkos_ROOT="$kokkos" -DCMAKE_CXX_COMPILER="$kokkos/bin/nvcc_wrapper" >/dev/null
PATH=/usr/local/cuda/bin:$PATH cmake --build "$dir-kokkos" -j2 --target suite
