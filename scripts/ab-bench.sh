#!/usr/bin/env bash
# Two builds of the suite on this machine, like for like: is B slower than A? Each round runs A's suite then
# B's (the order swaps every round, so that a machine warming up or cooling down favours neither), every
# listed variant at 1200 and 50000 images, then scripts/compare judges B's runs against A's.
#   scripts/ab-bench.sh <build-a> <build-b> <out> <backend list> [rounds (default 2)] [threshold (default 2%)]
# <build-x>: a build folder with bin/suite (a carried one too: scripts/gpu-libs.sh puts its libraries on the
# path); <backend list>: as suite --backend takes it, in names both builds know (an old name that a
# manifest's "renamed" maps is fine: the newer suite runs and reports the renamed variant).
# AB_IMAGES (default 1200,50000) and AB_REPEAT (default 20) change the runs. With 5 rounds or more, compare
# tests the rounds' medians against each other (a process's own spread counts), with fewer the newest round's
# passes. The benchmarks are tested together (compare --family: 24 variants at 2 image counts would otherwise
# be 48 chances of a step by chance), which 5 to 7 rounds cannot pass among many benchmarks: take 8 or more
# (compare says so).
# Out: <out>/a/round-N.json, <out>/b/round-N.json, <out>/compare.md; exit: scripts/compare's (0 none slower).
set -uo pipefail
usage="usage: ab-bench.sh <build-a> <build-b> <out> <backend list> [rounds] [threshold]"
[ $# -ge 4 ] && [ $# -le 6 ] && [ -n "$1" ] && [ -n "$2" ] && [ -n "$3" ] && [ -n "$4" ] ||
  { echo "ab-bench: $usage" >&2; exit 2; }
# Path arguments are the caller's: resolved against the caller's folder before the cd to the repository (an
# absolute path also keeps an OUT such as -out from reading as an option).
a=$(realpath -m -- "$1") b=$(realpath -m -- "$2") out=$(realpath -m -- "$3") list=$4 rounds=${5:-2} threshold=${6:-2%}
images=${AB_IMAGES:-1200,50000} repeat=${AB_REPEAT:-20}
cd "$(dirname "$0")/.." || exit 2
for build in "$a" "$b"; do
  [ -x "$build/bin/suite" ] || { echo "ab-bench: $build/bin/suite: no such program" >&2; exit 2; }
done
# Checked before any run, not after: a long A/B must not end in a usage error. The threshold's grammar is
# compare's (suitereport/compare_main.py, parse_threshold), which needs a Python with numpy to import.
[[ "$rounds" =~ ^[0-9]{1,4}$ ]] && ((10#$rounds >= 1 && 10#$rounds <= 1000)) ||
  { echo "ab-bench: rounds must be a whole number from 1 to 1000, not '$rounds'" >&2; exit 2; }
rounds=$((10#$rounds))
[[ "$threshold" =~ ^\+?([0-9]+(\.[0-9]*)?|\.[0-9]+)%?$ ]] ||
  { echo "ab-bench: threshold must be a percentage such as 2%, not '$threshold'" >&2; exit 2; }
[[ "$images" =~ ^[1-9][0-9]{0,8}(,[1-9][0-9]{0,8})*$ ]] ||
  { echo "ab-bench: AB_IMAGES must be positive whole numbers separated by commas, not '$images'" >&2; exit 2; }
[[ "$repeat" =~ ^[1-9][0-9]{0,8}$ ]] ||
  { echo "ab-bench: AB_REPEAT must be a positive whole number, not '$repeat'" >&2; exit 2; }
# scripts/compare needs numpy and scipy: the first Python that has them (the GPU machine's is its PyTorch one).
for py in python3 /usr/bin/python3 ""; do [ -n "$py" ] && "$py" -c 'import numpy, scipy' 2>/dev/null && break; done
[ -n "$py" ] || { echo "ab-bench: no Python with numpy and scipy: compare the reports elsewhere" >&2; exit 2; }
if { [ -e "$out" ] || [ -L "$out" ]; } && [ ! -d "$out" ]; then
  echo "ab-bench: $out: exists and is no folder" >&2; exit 2
fi
for side in a b; do
  mkdir -p -- "$out/$side" 2>/dev/null && [ -w "$out/$side" ] ||
    { echo "ab-bench: $out/$side: cannot create or write the folder" >&2; exit 2; }
done
run() {  # side build round
  local side=$1 build=$2 round=$3
  echo "=== $side ($build), round $round ($(date -u +%T))"
  # In a subshell: each build's own libraries first on the path (a carried GPU build's), nothing of the other's.
  (if [ -d "$build/offload-runtime" ] || [ -d "$build/lib" ]; then source scripts/gpu-libs.sh; fi
   "$build/bin/suite" --data data/cifar10 --weights data/convnetjs-cifar10 --backend "$list" --images "$images" \
     --repeat "$repeat" --quiet --format csv --output "$out/$side/round-$round.json") || echo "ab-bench: $side round $round failed" >&2
}
for round in $(seq 1 "$rounds"); do
  if [ $((round % 2)) = 1 ]; then run a "$a" "$round"; run b "$b" "$round"; else run b "$b" "$round"; run a "$a" "$round"; fi
done
"$py" scripts/compare "$out/a" "$out/b" --threshold "$threshold" --family --format md | tee "$out/compare.md"
exit "${PIPESTATUS[0]}"
