#!/usr/bin/env bash
# On the same warm H200 after run.sh: chunks larger than the default 16384 (--batch 16384, 25000, 50000),
# alternating, 3 rounds; then 1000000 images at 16384 and 50000 a chunk.
source results/ab/device-setup.sh build/exp/batch.tar.xz
for round in 1 2 3; do
  for b in 16384 25000 50000; do
    $B/suite $in --backend cuda:winograd_mma --images 50000 --batch $b --repeat 20 --quiet \
      --output "$R/c$b-r$round.json" || echo "batch $b round $round: rc $?"
  done
done
for b in 16384 50000; do
  $B/suite $in --backend cuda:winograd_mma --images 1000000 --batch $b --repeat 5 --quiet \
    --output "$R/m$b.json" || echo "million batch $b: rc $?"
done
python3 - "$R" <<'PY'
import json, sys, glob, statistics
rows = {}
for f in sorted(glob.glob(sys.argv[1] + "/[cm]*.json")):
    d = json.load(open(f))
    for r in d["runs"]:
        key = (r["images"], r["batch"])
        rows.setdefault(key, []).append((r["forward_ms"]["median"], r["validation"]["passed"], r.get("memory_bytes", {}).get("device_peak")))
for (n, b) in sorted(rows):
    ms = [m for m, _, _ in rows[(n, b)]]
    print(f"{n} images, batch {b}: forward ms {' '.join(f'{m:.3f}' for m in ms)}  median {statistics.median(ms):.3f}"
          f"  validated {all(p for _, p, _ in rows[(n, b)])}  device peak {rows[(n, b)][0][2]}")
PY
tar -C "$OUT" -czf "$OUT/r2.tgz" r && rm -rf "$R"
