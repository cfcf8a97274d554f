#!/usr/bin/env bash
# Quick start 1: installs what is missing (Debian packages), builds the `default` preset (Release, every
# backend whose toolchain is found) and runs the suite. Arguments go to `suite` (default: every backend
# this machine can run, 1200 images; table on screen, JSON report in results/local/).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --preset default >/dev/null
cmake --build --preset default -j"$(nproc)"
exec build/default/bin/suite "$@"
