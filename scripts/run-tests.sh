#!/usr/bin/env bash
# Quick start 2: installs what is missing, builds the `ci` preset (the same tree as scripts/run-suite.sh,
# build/default, warnings are errors) and runs every test under ctest. Pass `asan` to use the
# AddressSanitizer + UBSan preset (its own tree) instead.
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${1-ci}
# The preset names a folder under build/ that is cleaned below: only a workflow preset of CMakePresets.json,
# a plain name (no '/' or '..' that would reach a folder outside build/).
workflows=$(sed -n '/"workflowPresets"/,$p' CMakePresets.json)
[[ $preset =~ ^[A-Za-z0-9_-]+$ ]] && grep -q "\"name\": *\"$preset\"" <<< "$workflows" ||
  { echo "run-tests: '$preset' is no workflow preset of CMakePresets.json" >&2; exit 2; }
scripts/install-deps.sh
# The tree of the quick start: what the manifests ask it to prepare (scripts/run-suite.sh).
[ "$preset" = ci ] && scripts/quick-start-backends.sh
tree=build/$([ "$preset" = ci ] && echo default || echo "$preset")
# A tree an older checkout configured with Makefiles: CMake will not switch it to Ninja in place.
[ -f "$tree/Makefile" ] && [ ! -f "$tree/build.ninja" ] && rm -rf "$tree/CMakeCache.txt" "$tree/CMakeFiles"
cmake --workflow --preset "$preset"
