#!/usr/bin/env bash
# On the GPU machine: kokkos:winograd_layers (Kokkos-CUDA) in chunks of 16384 images (suite-k16384, the Kokkos
# binary of backends/kokkos/gpu-build.sh at 61e58ae) against up to 65536 (suite-k65536, change.diff), each beside
# cuda:winograd_mma in its process as the verdict runs them; one process per side and round, alternating,
# 3 rounds. Packed as build/exp/kchunk.tar.xz (both binaries, build/cuda/lib, offload-runtime).
source results/ab/device-setup.sh build/exp/kchunk.tar.xz || exit 1
for round in 1 2 3; do
  for side in k16384 k65536; do
    $B/suite-$side $in --backend kokkos:winograd_layers,cuda:winograd_mma --images 1200,50000 --repeat 20 --quiet \
      --output "$R/$side-r$round.json" || echo "$side round $round: rc $?"
  done
done
$B/suite-k65536 $in --backend kokkos:winograd_layers --images 1,7,300,4223,65537 --repeat 3 --quiet \
  --output "$R/edges.json" || echo "edges: rc $?"
python3 results/ab/side_medians.py "$R"/*.json | tee "$R/summary.txt"
tar -C "$OUT" -czf "$OUT/r.tgz" r
