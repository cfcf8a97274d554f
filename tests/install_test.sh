#!/usr/bin/env bash
# `cmake --install` into a temporary prefix, then the installed suite run from another directory: it must
# find its own data (not the source tree's), and the installed report script must read its report. The run
# is the baseline (backend:variant, from the manifests: tests/CMakeLists.txt), built wherever tests are.
set -euo pipefail
build=${1:?usage: install_test.sh <build-dir> <baseline backend:variant>}
baseline=${2:?usage: install_test.sh <build-dir> <baseline backend:variant>}
prefix=$(mktemp -d)
elsewhere=$(mktemp -d)
trap 'rm -rf "$prefix" "$elsewhere"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
cd "$elsewhere"
"$prefix/bin/suite" --version
"$prefix/bin/suite" --backend "$baseline" --images 20 --quiet --output r.json
grep -q "\"$prefix/share/cnn-suite/data/cifar10/data_batch_1.bin\"" r.json || {
  echo "the installed suite did not read its installed data:"; grep -A2 '"data"' r.json; exit 1; }
"$prefix/share/cnn-suite/scripts/report" r.json | grep -q "$baseline"
[ "$(ls -A)" = "r.json" ] || { echo "created more than the report: $(ls -A)"; exit 1; }
# Without its data the installed suite names the installed folder; it never falls back to the source tree's.
rm -rf "$prefix/share/cnn-suite/data"
if "$prefix/bin/suite" --backend "$baseline" --images 20 --quiet --output r2.json 2>err.txt; then
  echo "the installed suite ran without its data folder"; exit 1; fi
grep -q "^suite: error: $prefix/share/cnn-suite/data: the suite's data folder is missing" err.txt || {
  echo "the missing data folder was not named:"; cat err.txt; exit 1; }
rm err.txt
echo "installed suite ran from $elsewhere and read $prefix/share/cnn-suite/data"
