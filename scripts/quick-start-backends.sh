#!/usr/bin/env bash
# What the quick start (scripts/run-suite.sh, run-tests.sh) prepares for the backends: each manifest's
# "quick_start" hook (scripts/backend-hooks.sh), run in the repository root, e.g. a toolchain the backend
# wants and Debian lacks, built once. Each prints at most a line; one that fails is named and never fails
# the quick start.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/backend-hooks.sh quick_start || true
