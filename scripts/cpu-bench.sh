#!/usr/bin/env bash
# The CPU comparison in one command, on this machine, in one run: the FMA peak, per-layer micro-benchmarks,
# the suite's CPU backends and the PyTorch peer at 1200 and 50000 images, on 1 thread and on all cores.
# Reports go to results/cpu/<host>/, or $CPU_BENCH_OUT (commit them); `scripts/report results/cpu` prints
# the tables.
# Usage: scripts/cpu-bench.sh [build-dir]   (default build/default, built by scripts/run-suite.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/default}
out=${CPU_BENCH_OUT:-results/cpu/$(hostname -s)}
mkdir -p "$out"
all=$(nproc)
py=/usr/bin/python3
scripts/install-deps.sh core extra/peer  # Debian's python3-torch for the peer
cmake --build "$build" -j"$all" --target suite layer_bench fma_peak
run() { echo "+ $*" >&2; "$@"; }
# The peer sweeps batch sizes (and eager vs TorchScript-frozen) at every image count; at 50000 images the
# sweep takes minutes a thread count, so PEER_BATCH_50000_T1 / PEER_BATCH_50000_TALL (e.g. 64 / 512) run the
# batch an earlier sweep chose on 1 thread / on all cores (still eager vs frozen).
peer_batch_t1=${PEER_BATCH_50000_T1:-sweep}
peer_batch_tall=${PEER_BATCH_50000_TALL:-sweep}

# The peak as the median of 5 (one measurement can land on a slow moment of a shared machine).
run "$build/bin/fma_peak" --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
    --benchmark_out="$out/fma_peak.json" --benchmark_out_format=json
run "$build/bin/layer_bench" --benchmark_min_time=0.2 --benchmark_out="$out/layer_bench.json" --benchmark_out_format=json

# Ours and the peer alternate, so that both see the same machine state.
for threads in 1 "$all"; do
  run "$build/bin/suite" --backend serial,openmp,stdpar,onednn --images 1200 --threads "$threads" --repeat 10 --quiet \
      --output "$out/suite-1200-t$threads.json"
  run $py scripts/peer_pytorch.py --device cpu --images 1200 --threads "$threads" --repeat 10 \
      --output "$out/pytorch-1200-t$threads.json"
  run "$build/bin/suite" --backend serial:register_tiles,serial:winograd,openmp:image_parallel,openmp:winograd,stdpar:image_blocks,onednn \
      --images 50000 --threads "$threads" --repeat 5 --quiet \
      --output "$out/suite-50000-t$threads.json"
  run $py scripts/peer_pytorch.py --device cpu --images 50000 --threads "$threads" --repeat 5 --batch "$([ "$threads" = 1 ] && echo "$peer_batch_t1" || echo "$peer_batch_tall")" \
      --output "$out/pytorch-50000-t$threads.json"
done
# Kokkos on its OpenMP space beside openmp:image_parallel, in one process (a build against backends/kokkos/build-kokkos.sh's
# Kokkos-OpenMP, backends/kokkos/README.md), when that build exists.
kokkos_omp=${KOKKOS_OMP_BUILD:-build/kokkos-omp}
if [ -x "$kokkos_omp/bin/suite" ]; then
  run "$kokkos_omp/bin/suite" --backend kokkos --images 1200 --threads "$all" --repeat 3 --quiet \
      --output "$out/kokkos-openmp-all-1200-t$all.json"
  run "$kokkos_omp/bin/suite" --backend kokkos:register_tiles,openmp:image_parallel --images 1200,50000 --threads "$all" --repeat 5 \
      --quiet --output "$out/kokkos-openmp-t$all.json"
fi
scripts/report "$out"
