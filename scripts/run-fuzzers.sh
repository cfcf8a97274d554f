#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz preset, clang + ASan + UBSan) and runs each for a bounded time
# (default 60 s) from a copy of the seed corpus in fuzz/corpus/. Exits non-zero on the first crash.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
scripts/install-deps.sh core extra/fuzz
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j"$(nproc)"
for target in cifar10 weights; do
  work=build/fuzz/corpus-$target
  mkdir -p "$work"
  cp -n fuzz/corpus/$target/* "$work"/
  echo "fuzzing the $target parser for $seconds s"
  build/fuzz/fuzz/${target}_fuzzer "$work" -max_total_time="$seconds" -max_len=20000 -print_final_stats=1 \
    -artifact_prefix=build/fuzz/crash-$target- 2>&1 | tail -n 12
  [ "${PIPESTATUS[0]}" -eq 0 ] || { echo "the $target fuzzer found a crash: build/fuzz/crash-$target-*"; exit 1; }
done
