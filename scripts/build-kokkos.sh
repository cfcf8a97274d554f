#!/usr/bin/env bash
# Builds Kokkos 3.4.1 (the one in Debian's trilinos 13.2 source package) with the OpenMP space, and with the
# CUDA space when nvcc is present, into <prefix>/openmp and <prefix>/cuda. The suite takes either with
# -DKokkos_ROOT=<prefix>/<space> (CUDA: also -DCMAKE_CXX_COMPILER=<prefix>/cuda/bin/nvcc_wrapper).
# Usage: scripts/build-kokkos.sh [prefix]   (default build/kokkos-install; sources go to build/kokkos-src)
# Env: KOKKOS_CUDA_ARCH (default HOPPER90; AMPERE80 etc. as Kokkos names them), JOBS (default 2).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
prefix=$(realpath -m "${1:-$root/build/kokkos-install}")
work=$root/build/kokkos-src
arch=${KOKKOS_CUDA_ARCH:-HOPPER90}
jobs=${JOBS:-2}
sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo
mkdir -p "$work"
cd "$work"

# 1. Sources: apt-get source needs a deb-src entry; add one for bookworm main if there is none.
if ! ls trilinos_*.orig.tar.* >/dev/null 2>&1; then
  if ! grep -rqsE '^(deb-src|Types:.*deb-src)' /etc/apt/sources.list /etc/apt/sources.list.d/; then
    echo "build-kokkos: adding a deb-src entry for bookworm main (/etc/apt/sources.list.d/bookworm-src.sources)"
    printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: bookworm\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' |
      $sudo tee /etc/apt/sources.list.d/bookworm-src.sources >/dev/null
    $sudo apt-get update -qq
  fi
  apt-get source --download-only trilinos  # 166 MB
fi
src=$(ls -d "$work"/Trilinos-*/packages/kokkos 2>/dev/null | head -1 || true)
if [ -z "$src" ]; then
  echo "build-kokkos: extracting packages/kokkos only (12 MB of the archive)"
  tar xzf trilinos_*.orig.tar.gz --wildcards '*/packages/kokkos/*'
  src=$(ls -d "$work"/Trilinos-*/packages/kokkos | head -1)
fi

# 2. Patches for CUDA 12/13 and Hopper; each is idempotent and says what it does.
space_cpp=$src/core/src/Cuda/Kokkos_CudaSpace.cpp
if ! grep -q 'cudaMemLocation' "$space_cpp"; then
  echo "build-kokkos: patch Kokkos_CudaSpace.cpp: cudaMemPrefetchAsync takes a cudaMemLocation since CUDA 13"
  perl -0pi -e 's/CUDA_SAFE_CALL\(cudaMemPrefetchAsync\(ptr, bytes, space.cuda_device\(\),\s*space.cuda_stream\(\)\)\);/#if CUDART_VERSION >= 13000\n    cudaMemLocation location{cudaMemLocationTypeDevice, space.cuda_device()};\n    CUDA_SAFE_CALL(cudaMemPrefetchAsync(ptr, bytes, location, 0, space.cuda_stream()));\n#else\n    CUDA_SAFE_CALL(cudaMemPrefetchAsync(ptr, bytes, space.cuda_device(), space.cuda_stream()));\n#endif/' "$space_cpp"
fi
half=$src/core/src/Cuda/Kokkos_Cuda_Half.hpp
if ! grep -q '__CUDACC_VER_MAJOR__ < 12' "$half"; then
  echo "build-kokkos: patch Kokkos_Cuda_Half.hpp: skip the cuda_fp16 half_t block for CUDA >= 12"
  sed -i 's/^#if !(defined(KOKKOS_COMPILER_CLANG) && KOKKOS_COMPILER_CLANG < 900) && \\$/#if (defined(__CUDACC_VER_MAJOR__) \&\& __CUDACC_VER_MAJOR__ < 12) \&\& !(defined(KOKKOS_COMPILER_CLANG) \&\& KOKKOS_COMPILER_CLANG < 900) \&\& \\/' "$half"
  grep -q '__CUDACC_VER_MAJOR__ < 12' "$half" || { echo "build-kokkos: half patch did not apply" >&2; exit 1; }
fi
archfile=$src/cmake/kokkos_arch.cmake
if ! grep -q HOPPER90 "$archfile"; then
  echo "build-kokkos: patch kokkos_arch.cmake: add HOPPER90 (sm_90), counted as the Ampere family"
  sed -i -e '/^KOKKOS_ARCH_OPTION(AMPERE86 /a KOKKOS_ARCH_OPTION(HOPPER90        GPU  "NVIDIA Hopper generation CC 9.0")' \
         -e '/^CHECK_CUDA_ARCH(AMPERE86 /a CHECK_CUDA_ARCH(HOPPER90  sm_90)' \
         -e 's/IF (KOKKOS_ARCH_AMPERE80 OR KOKKOS_ARCH_AMPERE86)/IF (KOKKOS_ARCH_AMPERE80 OR KOKKOS_ARCH_AMPERE86 OR KOKKOS_ARCH_HOPPER90)/' "$archfile"
fi

# 3. Builds: Kokkos core/containers/algorithms only, no tests.
build_one() {  # name, cmake args...
  local name=$1; shift
  cmake -S "$src" -B "$work/build-$name" -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix/$name" \
    -DKokkos_ENABLE_SERIAL=ON -DKokkos_ENABLE_OPENMP=ON -DKokkos_ENABLE_TESTS=OFF "$@"
  cmake --build "$work/build-$name" -j"$jobs"
  cmake --install "$work/build-$name"
}
build_one openmp -DCMAKE_CXX_COMPILER=g++
nvcc=$(command -v nvcc || ls /usr/local/cuda/bin/nvcc 2>/dev/null || true)
if [ -n "$nvcc" ]; then
  # nvcc_wrapper defaults to sm_35, which nvcc 13 refuses even in CMake's compiler check: name the arch.
  sm=$(sed -n "s/^CHECK_CUDA_ARCH($arch *\(sm_[0-9]*\))/\1/p" "$archfile")
  export PATH=$(dirname "$nvcc"):$PATH
  echo "build-kokkos: patch bin/nvcc_wrapper: default arch sm_35 -> $sm (nvcc 13 refuses sm_35)"
  sed -i "s/^default_arch=\"sm_[0-9]*\"/default_arch=\"$sm\"/" "$src/bin/nvcc_wrapper"
  # The suite is C++20; 3.4.1's wrapper does not know -std=c++20 and hands it to the host compiler only,
  # so nvcc's front end parses the host headers as C++17 (char8_t undefined). Pass it to nvcc as well.
  if ! grep -q -- '-std=c++20|' "$src/bin/nvcc_wrapper"; then
    echo "build-kokkos: patch bin/nvcc_wrapper: pass -std=c++20 to nvcc"
    sed -i 's/^  --std=c++11|-std=c++11|--std=c++14|-std=c++14)$/  --std=c++11|-std=c++11|--std=c++14|-std=c++14|--std=c++20|-std=c++20)/' "$src/bin/nvcc_wrapper"
  fi
  echo "build-kokkos: CUDA space for $arch ($sm) with $nvcc"
  build_one cuda -DKokkos_ENABLE_CUDA=ON -DKokkos_ENABLE_CUDA_LAMBDA=ON -DKokkos_ARCH_$arch=ON \
    -DCMAKE_CXX_COMPILER="$src/bin/nvcc_wrapper"
else
  echo "build-kokkos: no nvcc, CUDA space skipped"
fi
echo "build-kokkos: installed under $prefix"
