#!/usr/bin/env bash
# The portability verdict's runs on one platform, every model that can run there, in one go:
#   scripts/verdict-bench.sh gpu <build> <out>   ON the GPU machine: the GPU's peaks (benchmarks/gpu_peak.cu),
#       every fast variant of kind gpu (backends/*/manifest.json) at 1200 and 50000 images, the manifests'
#       "verdict_bench" hooks (Kokkos-CUDA from its second binary beside <build>), then the PyTorch peer (torch.compile,
#       cudnn.benchmark)
#   scripts/verdict-bench.sh cpu <build> <out>   on a CPU (the GPU machine's host, or this machine): its FMA
#       peak (fma_peak), every model of kind cpu or portable with every core at 1200 and the fast variants
#       (not "slow" in their manifests) at 50000, thread scaling 1..all of the manifests' "scaling" variants,
#       the PyTorch peer
# <build>: made here by scripts/verdict-build.sh and carried over. Reports go to <out>; scripts/report
# --portability reads them. A failing step is reported and the next one still runs.
set -uo pipefail
if [ $# -ne 3 ] || [ -z "$2" ] || [ -z "$3" ] || { [ "$1" != cpu ] && [ "$1" != gpu ]; }; then
  echo "verdict-bench.sh: usage: verdict-bench.sh gpu|cpu <build> <out>" >&2; exit 2
fi
kind=$1
# Relative arguments are the caller's; the tools and data are named from the repository root.
build=$(realpath -m -- "$2")
out=$(realpath -m -- "$3")
# Checked before any work: without them every step fails with its own traceback.
[ -f "$build/bin/suite" ] && [ -x "$build/bin/suite" ] ||
  { echo "verdict-bench.sh: $2/bin/suite: no such program (make it with scripts/verdict-build.sh $kind)" >&2; exit 2; }
[ "$kind" = cpu ] || command -v nvidia-smi >/dev/null ||
  { echo "verdict-bench.sh: nvidia-smi not found: no NVIDIA driver here (run this on the GPU machine)" >&2; exit 4; }
cd "$(dirname "$0")/.." || exit 2
mkdir -p "$out" || exit 2
status=0
step() { echo; echo "=== $* ($(date -u +%T))"; }
# The libraries the GPU machine lacks travel packed (libdnnl alone is 40 MB of the 64 a call may carry).
if [ -f "$build/runlibs.tar.xz" ] && [ ! -d "$build/runlibs" ]; then tar -C "$build" -xJf "$build/runlibs.tar.xz"; fi
export LD_LIBRARY_PATH=$build/runlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# A carried build is no build tree there (no CMakeCache.txt above it): name the data (suite's build_info).
inputs=(--data data/cifar10 --weights data/convnetjs-cifar10)
py=/usr/bin/python3  # Debian's python3-torch here; the GPU machine's venv there
[ -x /opt/torch/.venv/bin/python3 ] && py=/opt/torch/.venv/bin/python3

if [ "$kind" = gpu ]; then
  source scripts/gpu-libs.sh
  suite=$build/bin/suite
  step "device"
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv
  step "the GPU's peaks: FP32 FMA, TF32 and FP16 tensor"
  # Into place only from a run that succeeded: an empty or partial file would be read as the peaks.
  peak=$(mktemp "$out/.gpu_peak.XXXXXX") &&
    { "$build/bin/gpu_peak" > "$peak" && chmod 644 "$peak" && mv -f "$peak" "$out/gpu_peak.json" && cat "$out/gpu_peak.json" ||
      { rm -f "$peak"; false; }; } || status=1
  # Every built variant of kind gpu (manifests) but those its manifest calls "slow".
  fast=$(python3 scripts/backends --suite "$suite" --where kind=gpu --variants --fast)
  step "suite: $fast at 1200 and 50000 images"
  "$suite" "${inputs[@]}" --backend "$fast" --images 1200,50000 --repeat 20 --output "$out/gpu-suite.json" \
    2>&1 | grep -E '^[a-z]+:[a-z0-9_]+ +[0-9]|report:|error' || status=1
  # What a backend runs beside the others (its manifest's "verdict_bench", scripts/backend-hooks.sh).
  scripts/backend-hooks.sh verdict_bench "$build" "$out" || status=1
  step "the PyTorch peer on the GPU"
  # The peer measures the code of this session's build: git on a carried copy of the tree may describe another.
  code_of=(); [ -f "$out/gpu-suite.json" ] && code_of=(--code-of "$out/gpu-suite.json")
  PYTHONUNBUFFERED=1 timeout 300 $py scripts/peer_pytorch.py --device cuda --images 1200,50000 --repeat 20 \
    "${code_of[@]}" --output "$out/pytorch-cuda.json" 2>&1 | tail -n 4 || status=1
else
  suite=$build/bin/suite
  cores=$(nproc)
  # Threads bound as Kokkos asks (and the same for every OpenMP model in the process), unless set.
  export OMP_PROC_BIND=${OMP_PROC_BIND:-spread} OMP_PLACES=${OMP_PLACES:-threads}
  step "CPU: $(grep -m1 'model name' /proc/cpuinfo), $cores logical cores, AVX-512: $(grep -qw avx512f /proc/cpuinfo && echo yes || echo no)"
  step "FMA peak (all threads, 5 repetitions)"
  "$build/bin/fma_peak" --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
    --benchmark_out="$out/fma_peak.json" --benchmark_out_format=json 2>&1 | grep -E "AllThreads.*median" || status=1
  step "suite: every CPU model, every core, 1200 images"
  cpu_kinds=(--suite "$suite" --where kind=cpu,portable)  # the CPU and portable backends (manifests)
  "$suite" "${inputs[@]}" --backend "$(python3 scripts/backends "${cpu_kinds[@]}")" --images 1200 --output "$out/cpu-suite-1200.json" \
    2>&1 | grep -E '^[a-z]+:[a-z0-9_]+ +[0-9]|report:|error|warning' || status=1
  fast=$(python3 scripts/backends "${cpu_kinds[@]}" --variants --fast)
  step "suite: the fast variants, every core, 50000 images"
  "$suite" "${inputs[@]}" --backend "$fast" --images 50000 --output "$out/cpu-suite-50000.json" \
    2>&1 | grep -E '^[a-z]+:[a-z0-9_]+ +[0-9]|report:|error|warning' || status=1
  step "thread scaling of the Winograd variants, 50000 images"
  for t in 1 2 4 8 16 32 64; do
    [ "$t" -le "$cores" ] || break
    "$suite" "${inputs[@]}" --backend "$(python3 scripts/backends "${cpu_kinds[@]}" --variants --scaling)" --images 50000 --threads "$t" --repeat 3 \
      --output "$out/threads-$t.json" 2>&1 | grep -E '^[a-z]+:[a-z0-9_]+ +[0-9]|error' || status=1
  done
  step "the PyTorch peer on the CPU, every core"
  code_of=(); [ -f "$out/cpu-suite-1200.json" ] && code_of=(--code-of "$out/cpu-suite-1200.json")
  PYTHONUNBUFFERED=1 timeout 420 $py scripts/peer_pytorch.py --device cpu --threads "$cores" --images 1200,50000 \
    "${code_of[@]}" --output "$out/pytorch-cpu.json" 2>&1 | tail -n 4 || status=1
  # The peak once more: a VM's neighbours can take cores for a minute, and a low peak makes efficiencies
  # above 100 % (results/cpu/xeon-16core/peak-method/). The higher of the two stays.
  step "FMA peak again (all threads, 5 repetitions): the higher of the two is the platform's"
  "$build/bin/fma_peak" --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
    --benchmark_out="$out/fma_peak-again.json" --benchmark_out_format=json 2>&1 | grep -E "AllThreads.*median" || status=1
  python3 - "$out/fma_peak.json" "$out/fma_peak-again.json" <<'PY' || status=1
import os, sys
from pathlib import Path
sys.path.insert(0, "scripts")
from suitereport.portability import fma_peak  # the peak the verdict reads from such a file
first, again = sys.argv[1:]
peak = {p: (fma_peak(Path(p)) or (0.0,))[0] for p in (first, again)}
keep = again if peak[again] > peak[first] else first
print(f"FMA peak: {peak[first]:.0f} then {peak[again]:.0f} GFLOP/s; kept the {'second' if keep == again else 'first'}")
if keep == again:
    os.replace(again, first)
elif os.path.exists(again):
    os.remove(again)
PY
fi
exit $status
