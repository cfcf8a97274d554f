#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz preset, clang + ASan + UBSan) and runs each for a bounded time
# (default 60 s) from a copy of the seed corpus in fuzz/corpus/. Exits non-zero on the first crash.
set -euo pipefail
seconds=${1-60}
# libFuzzer reads 0, a negative or a non-number as "no time limit": such a run would never end.
[[ $seconds =~ ^[0-9]{1,9}$ ]] && ((10#$seconds >= 1)) ||
  { echo "run-fuzzers: seconds must be a positive whole number, not '$seconds'" >&2; exit 2; }
seconds=$((10#$seconds))
cd "$(dirname "$0")/.."
scripts/install-deps.sh core extra/fuzz
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j"$(nproc)"
for target in cifar10 weights; do
  work=build/fuzz/corpus-$target
  mkdir -p "$work"
  cp -n fuzz/corpus/$target/* "$work"/
  echo "fuzzing the $target parser for $seconds s"
  # Part of an `||` list, so that set -e leaves a failing fuzzer to the check below.
  rc=0
  build/fuzz/fuzz/${target}_fuzzer "$work" -max_total_time="$seconds" -max_len=20000 -print_final_stats=1 \
    -artifact_prefix=build/fuzz/crash-$target- 2>&1 | tail -n 12 || { st=("${PIPESTATUS[@]}"); rc=${st[0]}; ((rc)) || rc=${st[1]}; }
  [ "$rc" -eq 0 ] ||
    { echo "run-fuzzers: the $target fuzzer failed (exit $rc), a crash is in build/fuzz/crash-$target-*" >&2; exit 1; }
done
