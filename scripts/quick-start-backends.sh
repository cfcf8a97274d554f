#!/usr/bin/env bash
# What the quick start (scripts/run-suite.sh, run-tests.sh) prepares for the backends: each manifest's
# "quick_start", a command run in the repository root from the backend's folder (e.g. a toolchain the
# backend wants and Debian lacks, built once). Each prints at most a line and never fails the quick start.
# Read with sed, as scripts/install-deps.sh reads "packages": manifests keep one field per line.
set -euo pipefail
cd "$(dirname "$0")/.."
for m in backends/*/manifest.json; do
  cmd=$(sed -n 's/^ *"quick_start": *"\([^"]*\)".*/\1/p' "$m")
  [ -n "$cmd" ] || continue
  # The command is the folder's own script and its arguments, split as the shell splits words.
  read -r -a words <<<"$cmd"
  "$(dirname "$m")/${words[0]}" "${words[@]:1}" || echo "quick start: $(dirname "$m"): '$cmd' failed ($?)"
done
