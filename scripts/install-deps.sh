#!/usr/bin/env bash
# Installs, from Debian's packages, whatever the project needs and the machine lacks. Each backend or
# tool lists its packages in scripts/deps/<name>.txt ('#' starts a comment); this script reads them all,
# or only the lists named as arguments (e.g. `install-deps.sh core extra/fuzz`). Lists under
# scripts/deps/extra/ (tools only some jobs need) are installed only when named.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
lists=("$@")
[ ${#lists[@]} -gt 0 ] || lists=($(cd "$here/deps" && ls *.txt | sed 's/\.txt$//'))

wanted=()
for l in "${lists[@]}"; do
  [ -f "$here/deps/$l.txt" ] || { echo "install-deps: no list scripts/deps/$l.txt" >&2; exit 2; }
  while read -r pkg _; do
    [ -z "$pkg" ] || [ "${pkg:0:1}" = "#" ] && continue
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || wanted+=("$pkg")
  done < "$here/deps/$l.txt"
done
[ ${#wanted[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${wanted[*]}" >&2
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q >&2
$sudo apt-get install -y -q --no-install-recommends "${wanted[@]}" >&2
