#!/usr/bin/env bash
# The suite under mpirun on one machine (README, "Under MPI"), each run's report into <out>:
#   scripts/mpi-scaling.sh cpu <build> <out> <backend:variant>   1, 2, 4, 8, 16 ranks of a CPU variant with
#       1 thread each (split, 50000 images, 10 passes each), then 1 rank x all cores;
#       scripts/report --scaling <out>/cpu-*.json
#   scripts/mpi-scaling.sh gpu <build> <out> <backend:variant>   a GPU variant on 50000 images with 1 rank and
#       with 2 ranks sharing the one GPU; the two must validate and give the same classes (probabilities
#       within 1e-4)
# The variants README.md ("Under MPI") reports are the fastest of each kind; `scripts/backends --suite
# <build>/bin/suite --where kind=cpu --variants --scaling` lists the CPU variants the verdict scales.
# <build>: made here (scripts/verdict-build.sh) and carried over; mpirun is the machine's (OpenMPI 4.1).
# The ranks take their share of the cores themselves (mpirun --bind-to none); the report names it.
set -uo pipefail
if [ $# -ne 4 ] || [ -z "$2" ] || [ -z "$3" ] || [ -z "$4" ] || { [ "$1" != cpu ] && [ "$1" != gpu ]; }; then
  echo "mpi-scaling.sh: usage: mpi-scaling.sh cpu|gpu <build> <out> <backend:variant>" >&2; exit 2
fi
kind=$1
variant=$4
# Relative arguments are the caller's; the data is named from the repository root.
build=$(realpath -m -- "$2")
out=$(realpath -m -- "$3")
# Checked before any work: mpirun -q would fail every step without a word.
[ -f "$build/bin/suite" ] && [ -x "$build/bin/suite" ] ||
  { echo "mpi-scaling.sh: $2/bin/suite: no such program (make it with scripts/verdict-build.sh $kind)" >&2; exit 2; }
command -v mpirun >/dev/null || { echo "mpi-scaling.sh: mpirun not found (install OpenMPI)" >&2; exit 2; }
[ "$kind" = cpu ] || command -v nvidia-smi >/dev/null ||
  { echo "mpi-scaling.sh: nvidia-smi not found: no NVIDIA driver here (run this on the GPU machine)" >&2; exit 4; }
cd "$(dirname "$0")/.." || exit 2
mkdir -p "$out" || exit 2
suite=$build/bin/suite
# OpenMPI refuses to start as root unless both are set (containers); harmless for other users.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
if [ -f "$build/runlibs.tar.xz" ] && [ ! -d "$build/runlibs" ]; then tar -C "$build" -xJf "$build/runlibs.tar.xz"; fi
export LD_LIBRARY_PATH=$build/runlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# A carried build is no build tree there: name the data (as scripts/verdict-bench.sh does).
inputs=(--data data/cifar10 --weights data/convnetjs-cifar10 --images 50000 --quiet)
status=0
step() { echo; echo "=== $* ($(date -u +%T))"; }
ranks() { local n=$1; shift; mpirun -q --oversubscribe --bind-to none -n "$n" "$suite" "${inputs[@]}" "$@"; }
summary() {  # one line of a report: ranks, images/s, imbalance, validation
  python3 -c "
import json, sys
r = json.load(open(sys.argv[1])); run = r['runs'][0]; m = run.get('mpi', {})
print(f\"{m.get('ranks', 1)} ranks x {run['threads']} threads: {m.get('aggregate_images_per_s', run['images_per_s']):.0f} images/s,\",
      f\"imbalance {m.get('load_imbalance', 1):.3f}, validation {'passed' if run['validation']['passed'] else 'FAILED'},\",
      f\"accuracy {100 * run['accuracy']:.2f} %\")" "$1"
}

if [ "$kind" = cpu ]; then
  cores=$(nproc)
  step "CPU: $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $cores logical cores; $(mpirun --version | head -1)"
  for n in 1 2 4 8 16; do
    step "$n ranks of $variant, 1 thread each, split"
    ranks "$n" --backend "$variant" --threads 1 --repeat 10 --output "$out/cpu-ranks$n.json" &&
      summary "$out/cpu-ranks$n.json" || status=1
  done
  step "1 rank x $cores threads"
  ranks 1 --backend "$variant" --threads "$cores" --repeat 10 --output "$out/cpu-1rank-${cores}threads.json" &&
    summary "$out/cpu-1rank-${cores}threads.json" || status=1
elif [ "$kind" = gpu ]; then
  step "GPU: $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); $(mpirun --version | head -1)"
  for n in 1 2; do
    step "$n rank(s) sharing the GPU, $variant, split"
    ranks "$n" --backend "$variant" --repeat 20 --output "$out/gpu-ranks$n.json" --save-probs "$out/gpu-ranks$n.npy" &&
      summary "$out/gpu-ranks$n.json" || status=1
  done
  # The same images through the same kernels: the same classes, probabilities within validation's tolerance
  # (bit for bit where the kernels do not depend on how many images a launch holds).
  python3 - "$out/gpu-ranks1.npy" "$out/gpu-ranks2.npy" <<'PY' || status=1
import array, struct, sys
def probs(path):  # the suite's .npy: little-endian float32, N x 10 (no numpy needed)
    raw = open(path, "rb").read()
    start = 10 + struct.unpack("<H", raw[8:10])[0]
    return array.array("f", raw[start:])
a, b = probs(sys.argv[1]), probs(sys.argv[2])
rows = lambda p: [p[i:i + 10] for i in range(0, len(p), 10)]
same = len(a) == len(b) and all(x.index(max(x)) == y.index(max(y)) for x, y in zip(rows(a), rows(b)))
diff = max((abs(x - y) for x, y in zip(a, b)), default=0.0) if len(a) == len(b) else float("inf")
print(f"2 ranks against 1: {'same' if same else 'OTHER'} classes, max |p2 - p1| {diff:.3g}", "(bit for bit)" if diff == 0 else "")
sys.exit(0 if same and diff <= 1e-4 else 1)
PY
fi
exit $status
