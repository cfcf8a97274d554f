#!/usr/bin/env bash
# No function in suite/ or common/ is longer than 80 lines (issue 29): clang-tidy's readability-function-size
# on every C++ file of those folders that the build compiles (compile_commands.json), their headers included.
# A canary function of 81 lines must be reported first, so that a checker that finds nothing cannot pass.
#   function_size_test.sh <source dir> <build dir>     exit 77 (skipped) without clang-tidy
set -uo pipefail
src=$1 build=$2
limit=80
tidy=$(command -v clang-tidy || command -v clang-tidy-14 || true)
if [ -z "$tidy" ]; then echo "function_size_test: skipped: no clang-tidy (Debian package clang-tidy)"; exit 77; fi
db=$build/compile_commands.json
[ -f "$db" ] || { echo "function_size_test: FAILED: no $db (CMAKE_EXPORT_COMPILE_COMMANDS)" >&2; exit 1; }
config="{CheckOptions: [{key: readability-function-size.LineThreshold, value: $limit}]}"
check() { "$tidy" --quiet --checks='-*,readability-function-size' --config="$config" "$@" 2>&1; }

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
{ echo "int canary(int x) {"; for i in $(seq 1 $limit); do echo "  x += $i;"; done; echo "  return x;"; echo "}"; } >"$tmp/canary.cpp"
# The whole output first: `check | grep -q` would stop reading at the match, and under pipefail the
# SIGPIPE clang-tidy then gets would fail the pipeline (a flaky test under load).
canary=$(check "$tmp/canary.cpp" -- -std=c++20)
if ! grep -q "function 'canary' exceeds" <<<"$canary"; then
  echo "function_size_test: FAILED: clang-tidy did not report a function of $((limit + 2)) lines" >&2
  exit 1
fi

files=$(/usr/bin/python3 - "$db" "$src" <<'PY'
import json, os, sys
db, src = sys.argv[1], os.path.realpath(sys.argv[2])
seen = set()
for entry in json.load(open(db)):
    f = os.path.realpath(os.path.join(entry["directory"], entry["file"]))
    rel = os.path.relpath(f, src)
    if rel.split(os.sep)[0] in ("suite", "common") and f.endswith(".cpp") and f not in seen:
        seen.add(f)
        print(f)
PY
)
[ -n "$files" ] || { echo "function_size_test: FAILED: no file of suite/ or common/ in $db" >&2; exit 1; }
headers="^$(realpath "$src")/(suite|common)/"
found=$(printf '%s\n' $files | xargs -P "$(nproc)" -n 4 "$tidy" --quiet -p "$build" --header-filter="$headers" \
          --checks='-*,readability-function-size' --config="$config" 2>&1 |
        grep -E "error: |warning: function .* exceeds recommended size" | sort -u)
if grep -q "error: " <<<"$found"; then  # a file clang cannot parse is a file not checked
  echo "function_size_test: FAILED: clang-tidy could not check every file:" >&2
  grep "error: " <<<"$found" | head -n 5 >&2
  exit 1
fi
if [ -n "$found" ]; then
  echo "function_size_test: FAILED: functions over $limit lines:" >&2
  echo "$found" >&2
  exit 1
fi
echo "function_size_test: no function over $limit lines in $(printf '%s\n' $files | wc -l) files of suite/ and common/ and their headers"
