#!/usr/bin/env bash
# Quick start 1: installs what is missing (Debian packages), prepares what a backend's manifest asks the
# quick start for (scripts/quick-start-backends.sh: a toolchain Debian lacks, built once), configures the `default` preset (Release, every backend whose toolchain is
# found), shows which backends are built and why not, builds only the `suite` binary and runs it. Arguments
# go to `suite` (default: every backend this machine can run, 1200 images; table on screen, JSON report in
# results/local/). scripts/run-tests.sh reuses this build.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/quick-start-backends.sh
# A tree an older checkout configured with Makefiles: CMake will not switch it to Ninja in place.
[ -f build/default/Makefile ] && [ ! -f build/default/build.ninja ] && rm -rf build/default/CMakeCache.txt build/default/CMakeFiles
cmake --preset default | sed -n 's/^-- \(backend .*\)/\1/p'
cmake --build --preset suite -j"$(nproc)"
exec build/default/bin/suite "$@"
