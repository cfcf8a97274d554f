#!/usr/bin/env bash
# One variant against the PyTorch peer on this CPU, like for like (same images, same threads), in pairs of
# neighbouring processes: is ours at most X times PyTorch's time? A VM's speed changes from one minute to the
# next for both programs alike, so one run of each says little; each pair runs ours and the peer back to back
# (the order swaps every pair) and the answer is the median of the pairs' ratios, with its spread.
#   scripts/peer-ratio.sh <build> <out> <variant> <images> <threads> [pairs (default 8)] [peer batch (default sweep)]
# <variant>: one suite variant (backend:variant); ratio = its fastest pass / PyTorch's fastest pass, per pair.
# PEER_RATIO_REPEAT (default 5) passes each; PEER_RATIO_PYTHON: the peer's Python (default /usr/bin/python3). Out: <out>/ours-K.json, <out>/peer-K.json, <out>/order.txt (start
# time and load average of each process), <out>/peer-K.log, <out>/ratio.md. Exit 0, or 1 when a run failed or did not validate.
set -uo pipefail
usage="usage: peer-ratio.sh <build> <out> <variant> <images> <threads> [pairs] [peer batch]"
[ $# -ge 5 ] && [ $# -le 7 ] && [ -n "$1" ] && [ -n "$2" ] && [ -n "$3" ] && [ -n "$4" ] && [ -n "$5" ] ||
  { echo "peer-ratio: $usage" >&2; exit 2; }
# Path arguments are the caller's: resolved against the caller's folder before the cd to the repository.
build=$(realpath -m -- "$1") out=$(realpath -m -- "$2") variant=$3 images=$4 threads=$5
pairs=${6:-8} batch=${7:-sweep} repeat=${PEER_RATIO_REPEAT:-5}
cd "$(dirname "$0")/.." || exit 2
# Every argument is checked before the first run: a bad one would otherwise fail every pair, one by one.
posint() { [[ $1 =~ ^[0-9]{1,9}$ ]] && ((10#$1 >= 1)); }
[ -x "$build/bin/suite" ] || { echo "peer-ratio: $build/bin/suite: no such program" >&2; exit 2; }
[[ $pairs =~ ^[0-9]{1,4}$ ]] && ((10#$pairs >= 1 && 10#$pairs <= 1000)) ||
  { echo "peer-ratio: pairs must be a whole number from 1 to 1000, not '$pairs'" >&2; exit 2; }
posint "$images" || { echo "peer-ratio: images must be a positive whole number, not '$images'" >&2; exit 2; }
posint "$threads" || { echo "peer-ratio: threads must be a positive whole number, not '$threads'" >&2; exit 2; }
posint "$repeat" ||
  { echo "peer-ratio: PEER_RATIO_REPEAT must be a positive whole number, not '$repeat'" >&2; exit 2; }
pairs=$((10#$pairs)) images=$((10#$images)) threads=$((10#$threads)) repeat=$((10#$repeat))
if { [ -e "$out" ] || [ -L "$out" ]; } && [ ! -d "$out" ]; then
  echo "peer-ratio: $out: exists and is no folder" >&2; exit 2
fi
py=${PEER_RATIO_PYTHON:-/usr/bin/python3}  # the peer's Python: Debian's python3-torch
"$py" -c 'import torch' 2>/dev/null || { echo "peer-ratio: $py cannot import torch (apt-get install python3-torch)" >&2; exit 2; }
mkdir -p -- "$out" 2>/dev/null && [ -w "$out" ] || { echo "peer-ratio: $out: cannot create or write the folder" >&2; exit 2; }
echo "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-), $(nproc) logical cores" > "$out/order.txt"
# Threads bound as for every CPU measurement of the suite (scripts/verdict-bench.sh), for both programs.
export OMP_PROC_BIND=${OMP_PROC_BIND:-spread} OMP_PLACES=${OMP_PLACES:-threads}
status=0
note() { echo "$(date -u +%T) load $(cut -d' ' -f1 /proc/loadavg) $1" | tee -a "$out/order.txt"; }
ours() {
  note "ours-$1"
  "$build/bin/suite" --data data/cifar10 --weights data/convnetjs-cifar10 --backend "$variant" --images "$images" \
    --threads "$threads" --repeat "$repeat" --quiet --output "$out/ours-$1.json" || status=1
}
peer() {
  note "peer-$1"
  "$py" scripts/peer_pytorch.py --device cpu --images "$images" --threads "$threads" --batch "$batch" \
    --repeat "$repeat" --output "$out/peer-$1.json" > "$out/peer-$1.log" 2>&1 || status=1
}
for k in $(seq 1 "$pairs"); do
  if [ $((k % 2)) = 1 ]; then ours "$k"; peer "$k"; else peer "$k"; ours "$k"; fi
done
note done
python3 - "$out" "$pairs" "$variant" "$images" "$threads" <<'PY' || status=1
import json, statistics, sys
out, pairs, variant, images, threads = sys.argv[1], int(sys.argv[2]), *sys.argv[3:]
def run(path):
    try:
        r = json.load(open(path))["runs"][0]
    except (OSError, ValueError, KeyError, IndexError):
        return None
    return r if r["validation"]["passed"] else None
rows, ratios = [], []
for k in range(1, pairs + 1):
    o, p = run(f"{out}/ours-{k}.json"), run(f"{out}/peer-{k}.json")
    if o is None or p is None:
        rows.append(f"| {k} | {'failed' if o is None else o['forward_ms']['min']} | "
                    f"{'failed' if p is None else p['forward_ms']['min']} | |")
        continue
    ratio = o["forward_ms"]["min"] / p["forward_ms"]["min"]
    ratios.append(ratio)
    rows.append(f"| {k} | {o['forward_ms']['min']:.2f} | {p['forward_ms']['min']:.2f} "
                f"(batch {p.get('batch')}) | {ratio:.3f} |")
cpu = open(f"{out}/order.txt").readline().strip()
lines = [f"# {variant} against PyTorch: {images} images, {threads} thread(s), {pairs} pairs", "", f"CPU: {cpu}.", "",
         "| pair | ours, fastest pass (ms) | PyTorch, fastest pass (ms) | ratio |", "|---:|---:|---:|---:|", *rows, ""]
if ratios:
    q = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else [ratios[0]] * 3
    lines.append(f"Median ratio **{statistics.median(ratios):.3f}** (quartiles {q[0]:.3f}-{q[2]:.3f}, "
                 f"range {min(ratios):.3f}-{max(ratios):.3f}, {len(ratios)} validated pairs of {pairs}).")
open(f"{out}/ratio.md", "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
sys.exit(0 if len(ratios) == pairs else 1)
PY
exit "$status"
