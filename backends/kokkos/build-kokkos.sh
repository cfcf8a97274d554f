#!/usr/bin/env bash
# Builds Kokkos 3.4.1 (the one in Debian's trilinos 13.2 source package) with the OpenMP space, and with the
# CUDA space when nvcc is present, into <prefix>/openmp and <prefix>/cuda. The suite takes either with
# -DKokkos_ROOT=<prefix>/<space> (CUDA: also -DCMAKE_CXX_COMPILER=<prefix>/cuda/bin/nvcc_wrapper); the
# presets point at build/kokkos-install/openmp.
# Usage: backends/kokkos/build-kokkos.sh [--openmp-only] [prefix]   (default build/kokkos-install; sources go to
#        build/kokkos-src)
#        backends/kokkos/build-kokkos.sh --quick-start   the manifest's "quick_start", which
#        scripts/run-suite.sh and run-tests.sh run: the OpenMP space only, the log in
#        build/kokkos-src/quick-start.log, one line on screen; never fails (without it, the kokkos backend
#        falls back to Debian's Serial Kokkos, and the line says why).
# A space is rebuilt only when this script, the compiler or CMake changed (<prefix>/<space>/.suite-stamp).
# The Kokkos sources (2 MB) are kept in scripts/cache-dir's folder (~/.cache/cnn-suite), outside the clone, so that
# another clone on the machine (CI) does not download the 166 MB trilinos source package again.
# Env: KOKKOS_CUDA_ARCH (default HOPPER90; AMPERE80 etc. as Kokkos names them), JOBS (default: all cores).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
self=$root/backends/kokkos/build-kokkos.sh

if [ "${1:-}" = --quick-start ]; then
  mkdir -p "$root/build/kokkos-src"
  log=$root/build/kokkos-src/quick-start.log
  t0=$(date +%s)
  if "$self" --openmp-only >"$log" 2>&1; then
    grep -q '^build-kokkos: openmp space up to date' "$log" ||
      echo "kokkos: built Kokkos' OpenMP space into build/kokkos-install/openmp ($(( $(date +%s) - t0 )) s)"
  else
    # `|| true`: a log without an error line (set -e, pipefail) must still give the note, not end this script.
    why=$(grep '^build-kokkos: error: ' "$log" | tail -1 | sed 's/^build-kokkos: error: //' || true)
    echo "kokkos: note: Kokkos' OpenMP space not built (${why:-see build/kokkos-src/quick-start.log}): the kokkos backend runs on Debian's Kokkos, Serial space, one thread"
  fi
  exit 0
fi
openmp_only=false
[ "${1:-}" = --openmp-only ] && { openmp_only=true; shift; }
# Checked before any work: realpath would take an option (--help) and print its help as the prefix.
if [ $# -gt 1 ] || [ "${1-x}" = "" ] || [[ ${1-} == -* ]]; then
  echo "build-kokkos.sh: usage: build-kokkos.sh [--openmp-only] [prefix] | --quick-start" >&2; exit 2
fi
prefix=$(realpath -m "${1:-$root/build/kokkos-install}")
work=$root/build/kokkos-src
cache=$("$root/scripts/cache-dir")
arch=${KOKKOS_CUDA_ARCH:-HOPPER90}
jobs=${JOBS:-$(nproc)}
sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo
fail() { echo "build-kokkos: error: $*" >&2; exit 1; }
mkdir -p "$work"
cd "$work"

# 1. Sources: packages/kokkos of Debian's trilinos source package, from the cache when an earlier run
# fetched it. apt-get source needs a deb-src entry; add one for bookworm main if there is none.
src=$(ls -d "$work"/Trilinos-*/packages/kokkos 2>/dev/null | head -1 || true)
if [ -z "$src" ]; then
  cached=$(ls "$cache"/kokkos-from-trilinos_*.tar.gz 2>/dev/null | tail -1 || true)
  if [ -z "$cached" ]; then
    if ! grep -rqsE '^(deb-src|Types:.*deb-src)' /etc/apt/sources.list /etc/apt/sources.list.d/; then
      [ -z "$sudo" ] || command -v sudo >/dev/null || fail "no deb-src entry for apt-get source, and no root or sudo to add one"
      echo "build-kokkos: adding a deb-src entry for bookworm main (/etc/apt/sources.list.d/bookworm-src.sources)"
      printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: bookworm\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' |
        $sudo tee /etc/apt/sources.list.d/bookworm-src.sources >/dev/null || fail "could not add a deb-src entry"
      $sudo apt-get update -qq || fail "apt-get update failed (no network?)"
    fi
    mkdir -p "$cache"
    fetch=$(mktemp -d "$cache/fetch.XXXXXX")
    # The .orig tarball (166 MB) is needed only for its packages/kokkos (12 MB, 2 MB compressed): keep that.
    (cd "$fetch" && apt-get source --download-only trilinos) || { rm -rf "$fetch"; fail "apt-get source trilinos failed (no network, or no deb-src entry apt can use)"; }
    orig=$(ls "$fetch"/trilinos_*.orig.tar.gz | head -1)
    echo "build-kokkos: extracting packages/kokkos of $(basename "$orig") into $cache"
    tar xzf "$orig" -C "$fetch" --wildcards '*/packages/kokkos/*'
    name=$(basename "$orig" .orig.tar.gz)
    tar czf "$fetch/kokkos.tar.gz" -C "$fetch" "$(cd "$fetch" && ls -d Trilinos-*)/packages/kokkos"
    mv "$fetch/kokkos.tar.gz" "$cache/kokkos-from-$name.tar.gz"  # whole or not at all, for concurrent clones
    rm -rf "$fetch"
    cached=$cache/kokkos-from-$name.tar.gz
  fi
  echo "build-kokkos: sources from $cached"
  tar xzf "$cached" -C "$work"
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
# Team scratch above 48 KB per team on CUDA, as Kokkos offers since kokkos/kokkos#9012 (2026): 3.4.1 caps level 0
# at sharedMemPerBlock (48 KB) and launches without the opt-in, so a larger request throws or (past the check)
# the kernel does not run. Limits from sharedMemPerBlockOptin (227 KB on Hopper), and the opt-in attribute set
# before a launch that asks for more than 48 KB. kokkos:winograd_layers needs it (up to 222 KB a team).
instance_cpp=$src/core/src/Cuda/Kokkos_Cuda_Instance.cpp
if ! grep -q 'm_maxShmemPerBlock = cudaProp.sharedMemPerBlockOptin' "$instance_cpp"; then
  echo "build-kokkos: patch Kokkos_Cuda_{Instance.cpp,BlockSize_Deduction.hpp,KernelLaunch.hpp}: team scratch up to sharedMemPerBlockOptin"
  sed -i 's/m_maxShmemPerBlock = cudaProp.sharedMemPerBlock;/m_maxShmemPerBlock = cudaProp.sharedMemPerBlockOptin;/' "$instance_cpp"
  sed -i -e 's/shmem_per_block         = properties.sharedMemPerBlock;/shmem_per_block         = properties.sharedMemPerBlockOptin;/' \
         -e 's/dynamic_shmem_per_block = attributes.maxDynamicSharedSizeBytes;/dynamic_shmem_per_block = properties.sharedMemPerBlockOptin - attributes.sharedSizeBytes;/' \
    "$src/core/src/Cuda/Kokkos_Cuda_BlockSize_Deduction.hpp"
  perl -0pi -e 's/(\n\s*)\(base_t::\s*get_kernel_func\(\)\)<<<grid, block, shmem,/$1if (shmem > 48 * 1024) CUDA_SAFE_CALL(cudaFuncSetAttribute(base_t::get_kernel_func(), cudaFuncAttributeMaxDynamicSharedMemorySize, shmem));$1(base_t::get_kernel_func())<<<grid, block, shmem,/g' \
    "$src/core/src/Cuda/Kokkos_Cuda_KernelLaunch.hpp"
  [ "$(grep -c 'cudaFuncAttributeMaxDynamicSharedMemorySize, shmem' "$src/core/src/Cuda/Kokkos_Cuda_KernelLaunch.hpp")" = 3 ] &&
    grep -q 'sharedMemPerBlockOptin - attributes' "$src/core/src/Cuda/Kokkos_Cuda_BlockSize_Deduction.hpp" &&
    grep -q 'sharedMemPerBlockOptin;' "$instance_cpp" || { echo "build-kokkos: scratch patch did not apply" >&2; exit 1; }
fi

# 3. Builds: Kokkos core/containers/algorithms only, no tests. Skipped when the stamp says the install was
# made by this script with this compiler and CMake.
build_one() {  # name, compiler, cmake args...
  local name=$1 cxx=$2; shift 2
  local stamp
  stamp="$(sha256sum "$self" | cut -c1-16) $("$cxx" --version 2>&1 | head -1) $(cmake --version | head -1) $*"
  if [ -f "$prefix/$name/.suite-stamp" ] && [ "$(cat "$prefix/$name/.suite-stamp")" = "$stamp" ]; then
    echo "build-kokkos: $name space up to date in $prefix/$name"
    return
  fi
  rm -f "$prefix/$name/.suite-stamp"
  cmake -S "$src" -B "$work/build-$name" -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix/$name" \
    -DKokkos_ENABLE_SERIAL=ON -DKokkos_ENABLE_OPENMP=ON -DKokkos_ENABLE_TESTS=OFF -DCMAKE_CXX_COMPILER="$cxx" "$@" ||
    fail "configuring Kokkos ($name) failed"
  cmake --build "$work/build-$name" -j"$jobs" || fail "building Kokkos ($name) failed"
  cmake --install "$work/build-$name" || fail "installing Kokkos ($name) failed"
  echo "$stamp" > "$prefix/$name/.suite-stamp"
}
build_one openmp g++
nvcc=$(command -v nvcc || ls /usr/local/cuda/bin/nvcc 2>/dev/null || true)
if $openmp_only; then
  :
elif [ -n "$nvcc" ]; then
  # nvcc_wrapper defaults to sm_35, which nvcc 13 refuses even in CMake's compiler check: name the arch.
  sm=$(sed -n "s/^CHECK_CUDA_ARCH($arch *\(sm_[0-9]*\))/\1/p" "$archfile")
  export PATH=$(dirname "$nvcc"):$PATH
  if ! grep -q "^default_arch=\"$sm\"" "$src/bin/nvcc_wrapper"; then
    echo "build-kokkos: patch bin/nvcc_wrapper: default arch sm_35 -> $sm (nvcc 13 refuses sm_35)"
    sed -i "s/^default_arch=\"sm_[0-9]*\"/default_arch=\"$sm\"/" "$src/bin/nvcc_wrapper"
  fi
  # The suite is C++20; 3.4.1's wrapper does not know -std=c++20 and hands it to the host compiler only,
  # so nvcc's front end parses the host headers as C++17 (char8_t undefined). Pass it to nvcc as well.
  if ! grep -q -- '-std=c++20|' "$src/bin/nvcc_wrapper"; then
    echo "build-kokkos: patch bin/nvcc_wrapper: pass -std=c++20 to nvcc"
    sed -i 's/^  --std=c++11|-std=c++11|--std=c++14|-std=c++14)$/  --std=c++11|-std=c++11|--std=c++14|-std=c++14|--std=c++20|-std=c++20)/' "$src/bin/nvcc_wrapper"
  fi
  echo "build-kokkos: CUDA space for $arch ($sm) with $nvcc"
  build_one cuda "$src/bin/nvcc_wrapper" -DKokkos_ENABLE_CUDA=ON -DKokkos_ENABLE_CUDA_LAMBDA=ON -DKokkos_ARCH_$arch=ON
else
  echo "build-kokkos: no nvcc, CUDA space skipped"
fi
echo "build-kokkos: installed under $prefix"
