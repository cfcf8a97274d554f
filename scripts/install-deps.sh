#!/usr/bin/env bash
# Installs, from Debian's packages, whatever the project needs and the machine lacks. Each tool lists its
# packages in scripts/deps/<name>.txt, each backend in the file its manifest's "packages" names in its folder
# (backends/<model>/packages.txt; '#' starts a comment). This script reads them all, or only the lists named
# as arguments (e.g. `install-deps.sh core extra/fuzz`, or a backend: `install-deps.sh <model>`). Lists under
# scripts/deps/extra/ (tools only some jobs need) are installed only when named.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
backends=$(dirname "$here")/backends

# The package list a backend's manifest names, or nothing. Read with sed, not a JSON parser: this runs
# before python3 is installed, and manifests keep one field per line.
backend_list() {
  local file
  file=$(sed -n 's/^ *"packages": *"\([^"/]*\)".*/\1/p' "$backends/$1/manifest.json" 2>/dev/null)
  [ -n "$file" ] && [ -f "$backends/$1/$file" ] && echo "$backends/$1/$file"
}

files=()
if [ $# -eq 0 ]; then
  files=("$here"/deps/*.txt)
  for m in "$backends"/*/manifest.json; do
    f=$(backend_list "$(basename "$(dirname "$m")")") && files+=("$f")
  done
fi
for l in "$@"; do
  if [ -f "$here/deps/$l.txt" ]; then files+=("$here/deps/$l.txt")
  elif f=$(backend_list "$l"); then files+=("$f")
  else echo "install-deps: no list scripts/deps/$l.txt, nor a backend '$l' whose manifest names one" >&2; exit 2
  fi
done

wanted=()
for f in "${files[@]}"; do
  while read -r pkg _; do
    [ -z "$pkg" ] || [ "${pkg:0:1}" = "#" ] && continue
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || wanted+=("$pkg")
  done < "$f"
done
[ ${#wanted[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${wanted[*]}" >&2
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q >&2
$sudo apt-get install -y -q --no-install-recommends "${wanted[@]}" >&2
