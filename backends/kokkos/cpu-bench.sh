#!/usr/bin/env bash
# The manifest's "cpu_bench", run by scripts/cpu-bench.sh from the repository root after its own runs:
#   backends/kokkos/cpu-bench.sh <out>
# Kokkos on its OpenMP space beside openmp:image_parallel, in one process, on every core, from a build against
# build-kokkos.sh's Kokkos-OpenMP (README.md here), $KOKKOS_OMP_BUILD (default build/kokkos-omp), when that
# build exists; otherwise nothing.
set -euo pipefail
out=${1:?usage: backends/kokkos/cpu-bench.sh <out>}
build=${KOKKOS_OMP_BUILD:-build/kokkos-omp}
[ -x "$build/bin/suite" ] || exit 0
all=$(nproc)
run() { echo "+ $*" >&2; "$@"; }
run "$build/bin/suite" --backend kokkos --images 1200 --threads "$all" --repeat 3 --quiet \
    --output "$out/kokkos-openmp-all-1200-t$all.json"
run "$build/bin/suite" --backend kokkos:register_tiles,openmp:image_parallel --images 1200,50000 --threads "$all" --repeat 5 \
    --quiet --output "$out/kokkos-openmp-t$all.json"
