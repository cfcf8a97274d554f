#!/usr/bin/env bash
# The manifest's "cpu_build", run by scripts/verdict-build.sh cpu from the repository root before it configures:
# installs Kokkos' OpenMP space once (build-kokkos.sh, its output on stderr) and prints the CMake arguments
# that build this backend on it (stdout), one a line (a path may hold spaces). Fails if Kokkos cannot be built (the verdict needs it).
set -euo pipefail
kokkos=$PWD/build/kokkos-install
[ -f "$kokkos/openmp/lib/cmake/Kokkos/KokkosConfig.cmake" ] || "$(dirname "$0")/build-kokkos.sh" >&2
echo "-DKokkos_ROOT=$kokkos/openmp"
