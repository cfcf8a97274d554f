#!/usr/bin/env bash
# On the GPU machine: the Winograd sessions' default chunk, 16384 images (suite-before, HEAD of run.sh) against
# 65536 (suite-after, change.diff), each at its default --batch: cuda:winograd, winograd_conv1_mma and
# winograd_mma at 1200 and 50000 images, one process each, alternating, 3 rounds; then suite-after on 1000000
# images and at the rounds' edges. Packed as build/exp/chunk.tar.xz (both binaries, build/cuda/lib, offload-runtime).
source results/ab/device-setup.sh build/exp/chunk.tar.xz
V=cuda:winograd,cuda:winograd_conv1_mma,cuda:winograd_mma
for round in 1 2 3; do
  for side in before after; do
    $B/suite-$side $in --backend $V --images 1200,50000 --repeat 20 --quiet --output "$R/$side-r$round.json" \
      || echo "$side round $round: rc $?"
  done
done
$B/suite-after $in --backend cuda:winograd_mma --images 1000000 --repeat 5 --quiet --output "$R/million.json" \
  || echo "million: rc $?"
$B/suite-after $in --backend $V --images 1,7,300,4223,16385,65537 --repeat 3 --quiet --output "$R/edges.json" \
  || echo "edges: rc $?"
python3 - "$R" <<'PY'
import json, sys, glob, statistics
rows = {}
for f in sorted(glob.glob(sys.argv[1] + "/*.json")):
    side = f.split("/")[-1].split("-")[0].split(".")[0]
    for r in json.load(open(f))["runs"]:
        key = (r["backend"] + ":" + r["variant"], r["images"], side)
        ph = r["phases_ms"]
        rows.setdefault(key, []).append((r["forward_ms"]["median"], ph.get("end_to_end"), r["batch"],
                                         r["validation"]["passed"], r["validation"]["max_abs_prob_diff"]))
for key in sorted(rows):
    v = rows[key]
    fw = [x[0] for x in v]
    e2e = [x[1] for x in v if x[1] is not None]
    print(f"{key[0]:26s} {key[1]:8d} {key[2]:7s} batch {v[0][2]:6d} forward {' '.join(f'{m:.4f}' for m in fw)}"
          f" median {statistics.median(fw):.4f}"
          + (f" e2e median {statistics.median(e2e):.3f}" if e2e else "")
          + f" validated {all(x[3] for x in v)} max dp {max(x[4] for x in v):.1e}")
PY
tar -C "$OUT" -czf "$OUT/r3.tgz" r && rm -rf "$R"
