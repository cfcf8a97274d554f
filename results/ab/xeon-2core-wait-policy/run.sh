#!/usr/bin/env bash
# OpenMP wait policies under load on this machine: openmp:naive (11 parallel regions per image), onednn:fp32
# (about 12 per 64-image chunk), openmp:winograd and kokkos:naive at 300 images on every core, for each
# policy x load: quiet, one CPU hog, six CPU hogs, and two suites at once. Writes reports into OUT (default:
# a new temporary folder) and prints the table. Usage: run.sh [SUITE] [OUT]
set -euo pipefail
suite=${1:-build/default/bin/suite}
out=${2:-$(mktemp -d)}
mkdir -p "$out"
policies=("passive:OMP_WAIT_POLICY=PASSIVE" "spin10000:OMP_WAIT_POLICY=PASSIVE GOMP_SPINCOUNT=10000"
          "spin300000:OMP_WAIT_POLICY=PASSIVE GOMP_SPINCOUNT=300000")
hogs=()
start_hogs() { for _ in $(seq "$1"); do yes > /dev/null & hogs+=($!); done; }
stop_hogs() { [ ${#hogs[@]} -eq 0 ] || kill "${hogs[@]}" 2>/dev/null || true; hogs=(); }
trap stop_hogs EXIT
run() {  # load policy-name env...
  local load=$1 name=$2; shift 2
  env "$@" "$suite" --backend openmp:naive,onednn:fp32,openmp:winograd,kokkos:naive --images 300 --repeat 3 \
    --quiet --output "$out/$load-$name.json"
}
for load in quiet hog1 hog6 two; do
  case $load in hog1) start_hogs 1;; hog6) start_hogs 6;; esac
  for p in "${policies[@]}"; do
    name=${p%%:*}; read -r -a vars <<< "${p#*:}"
    if [ "$load" = two ]; then
      run two-a "$name" "${vars[@]}" & run two-b "$name" "${vars[@]}"; wait
    else
      run "$load" "$name" "${vars[@]}"
    fi
  done
  stop_hogs
done
/usr/bin/python3 - "$out" <<'PY'
import json, pathlib, sys
rows = {}
for f in sorted(pathlib.Path(sys.argv[1]).glob("*.json")):
    load, name = f.stem.rsplit("-", 1)
    for r in json.loads(f.read_text())["runs"]:
        assert r["validation"]["passed"], f
        rows.setdefault((r["backend"] + ":" + r["variant"], load), {}).setdefault(name, []).append(r["forward_ms"]["median"])
names = ["passive", "spin10000", "spin300000"]
print("| variant, 300 images | load | " + " | ".join(names) + " |")
print("|---|---|" + "---:|" * len(names))
for (v, load), d in sorted(rows.items()):
    print(f"| {v} | {load} | " + " | ".join("/".join(f"{x:.1f}" for x in d.get(n, [])) for n in names) + " |")
PY
echo "reports: $out"
