#!/usr/bin/env bash
# Runs one hook of every backend that has it: scripts/backend-hooks.sh FIELD [args...] runs each manifest's
# FIELD (e.g. "gpu_build"), a script of the backend's folder and its arguments, with [args...] after them,
# from the caller's folder (the repository root), so that what one model needs beyond the generic steps
# (Kokkos' second GPU binary, its comparisons) lives in its folder. Folders in name order; a failing hook is
# reported and the next still runs; exits 1 if one failed.
# Read with sed, as scripts/install-deps.sh reads "packages" (before Python is installed): manifests keep one
# field per line.
set -uo pipefail
# Only the manifests' hook fields (README.md, "Adding a backend"): another field is a typo or no script.
hooks="quick_start cpu_build gpu_build gpu_bench verdict_bench cpu_bench"
case " $hooks " in
  *" ${1:-} "*) [ -n "${1:-}" ] ;;
  *) false ;;
esac || { echo "backend-hooks.sh: usage: backend-hooks.sh ${hooks// /|} [args...]" >&2; exit 2; }
field=$1
shift
backends=$(cd "$(dirname "$0")/../backends" && pwd)
status=0
for m in "$backends"/*/manifest.json; do
  cmd=$(sed -n "s/^ *\"$field\": *\"\\([^\"]*\\)\".*/\\1/p" "$m")
  [ -n "$cmd" ] || continue
  dir=$(dirname "$m")
  # The command is the folder's own script and its arguments, split as the shell splits words.
  read -r -a words <<<"$cmd"
  "$dir/${words[0]}" "${words[@]:1}" "$@" || { echo "backend-hooks: ${dir##*/}: $field '$cmd' failed ($?)" >&2; status=1; }
done
exit $status
