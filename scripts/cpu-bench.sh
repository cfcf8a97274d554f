#!/usr/bin/env bash
# The CPU comparison in one command, on this machine, in one run: the FMA peak, per-layer micro-benchmarks,
# the suite's CPU backends and the PyTorch peer at 1200 and 50000 images, on 1 thread and on all cores.
# Reports go to results/cpu/<host>/, or $CPU_BENCH_OUT (commit them); `scripts/report results/cpu` prints
# the tables.
# Usage: scripts/cpu-bench.sh [build-dir]   (default build/default, built by scripts/run-suite.sh)
set -euo pipefail
[ $# -le 1 ] && [ "${1-x}" != "" ] || { echo "cpu-bench.sh: usage: cpu-bench.sh [build-dir]" >&2; exit 2; }
# Relative paths are the caller's; the defaults are the repository's.
build=""; [ $# -eq 0 ] || build=$(realpath -m -- "$1")
out=""; [ -z "${CPU_BENCH_OUT:-}" ] || out=$(realpath -m -- "$CPU_BENCH_OUT")
cd "$(dirname "$0")/.."
build=${build:-build/default}
out=${out:-results/cpu/$(hostname -s)}
# Checked before any work, and before the output folder exists: a failed run leaves no empty folder.
[ -f "$build/CMakeCache.txt" ] ||
  { echo "cpu-bench.sh: ${1:-$build}: no CMake build folder (make it with scripts/run-suite.sh)" >&2; exit 2; }
all=$(nproc)
py=/usr/bin/python3
scripts/install-deps.sh core extra/peer  # Debian's python3-torch for the peer
cmake --build "$build" -j"$all" --target suite layer_bench fma_peak
mkdir -p "$out"
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

# The backends of kind cpu (manifests) this build has, and at 50000 images their fast variants (not "slow"
# in their manifests) and the vendor libraries' (each one variant).
cpu=$(scripts/backends --suite "$build/bin/suite" --where kind=cpu)
cpu_50000=$(scripts/backends --suite "$build/bin/suite" --where kind=cpu --variants --fast)
# Ours and the peer alternate, so that both see the same machine state.
for threads in 1 "$all"; do
  run "$build/bin/suite" --backend "$cpu" --images 1200 --threads "$threads" --repeat 10 --quiet \
      --output "$out/suite-1200-t$threads.json"
  run $py scripts/peer_pytorch.py --device cpu --images 1200 --threads "$threads" --repeat 10 \
      --output "$out/pytorch-1200-t$threads.json"
  run "$build/bin/suite" --backend "$cpu_50000" --images 50000 --threads "$threads" --repeat 5 --quiet \
      --output "$out/suite-50000-t$threads.json"
  run $py scripts/peer_pytorch.py --device cpu --images 50000 --threads "$threads" --repeat 5 --batch "$([ "$threads" = 1 ] && echo "$peer_batch_t1" || echo "$peer_batch_tall")" \
      --output "$out/pytorch-50000-t$threads.json"
done
# What a backend measures beside the others (its manifest's "cpu_bench", scripts/backend-hooks.sh; Kokkos on
# its OpenMP space beside the OpenMP model, from a build of its own).
scripts/backend-hooks.sh cpu_bench "$out"
scripts/report "$out"
