#!/usr/bin/env bash
# Quick start 1: installs what is missing (Debian packages), builds Kokkos' OpenMP space once
# (scripts/build-kokkos.sh), configures the `default` preset (Release, every backend whose toolchain is
# found), shows which backends are built and why not, builds only the `suite` binary and runs it. Arguments
# go to `suite` (default: every backend this machine can run, 1200 images; table on screen, JSON report in
# results/local/). scripts/run-tests.sh reuses this build.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
# Kokkos with its OpenMP space into build/kokkos-install/openmp (once; the presets' Kokkos_ROOT), so that the
# kokkos rows run on every core like the openmp ones; without it, Debian's Serial Kokkos (one line says why).
scripts/build-kokkos.sh --quick-start
# A tree an older checkout configured with Makefiles: CMake will not switch it to Ninja in place.
[ -f build/default/Makefile ] && [ ! -f build/default/build.ninja ] && rm -rf build/default/CMakeCache.txt build/default/CMakeFiles
cmake --preset default | sed -n 's/^-- \(backend .*\)/\1/p'
cmake --build --preset suite -j"$(nproc)"
exec build/default/bin/suite "$@"
