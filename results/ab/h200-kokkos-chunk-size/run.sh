#!/usr/bin/env bash
# On the GPU machine: kokkos:winograd_layers (Kokkos-CUDA) in chunks of 16384 images (suite-k16384, the Kokkos
# binary of backends/kokkos/gpu-build.sh at 61e58ae) against up to 65536 (suite-k65536, change.diff), each beside
# cuda:winograd_mma in its process as the verdict runs them; one process per side and round, alternating,
# 3 rounds. Packed as build/exp/kchunk.tar.xz (both binaries, build/cuda/lib, offload-runtime).
source results/ab/device-setup.sh build/exp/kchunk.tar.xz
for round in 1 2 3; do
  for side in k16384 k65536; do
    $B/suite-$side $in --backend kokkos:winograd_layers,cuda:winograd_mma --images 1200,50000 --repeat 20 --quiet \
      --output "$R/$side-r$round.json" || echo "$side round $round: rc $?"
  done
done
$B/suite-k65536 $in --backend kokkos:winograd_layers --images 1,7,300,4223,65537 --repeat 3 --quiet \
  --output "$R/edges.json" || echo "edges: rc $?"
python3 - "$R" <<'PY'
import json, sys, glob, statistics
rows = {}
for f in sorted(glob.glob(sys.argv[1] + "/*.json")):
    side = f.split("/")[-1].split("-")[0].split(".")[0]
    for r in json.load(open(f))["runs"]:
        rows.setdefault((r["backend"] + ":" + r["variant"], r["images"], side), []).append(
            (r["forward_ms"]["median"], r["batch"], r["validation"]["passed"], r["validation"]["max_abs_prob_diff"],
             r["memory_bytes"]["device_peak"]))
for key in sorted(rows):
    v = rows[key]
    print(f"{key[0]:24s} {key[1]:6d} {key[2]:7s} batch {v[0][1]:6d} forward {' '.join(f'{x[0]:.4f}' for x in v)}"
          f" median {statistics.median(x[0] for x in v):.4f} validated {all(x[2] for x in v)}"
          f" max dp {max(x[3] for x in v):.1e} device MB {v[0][4] // 2**20}")
PY
tar -C "$OUT" -czf "$OUT/r.tgz" r
