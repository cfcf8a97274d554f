#!/usr/bin/env bash
# On the GPU machine: the Winograd sessions' default chunk, 16384 images (suite-before, HEAD of run.sh) against
# 65536 (suite-after, change.diff), each at its default --batch: cuda:winograd, winograd_conv1_mma and
# winograd_mma at 1200 and 50000 images, one process each, alternating, 3 rounds; then suite-after on 1000000
# images and at the rounds' edges. Packed as build/exp/chunk.tar.xz (both binaries, build/cuda/lib, offload-runtime).
source results/ab/device-setup.sh build/exp/chunk.tar.xz || exit 1
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
python3 results/ab/side_medians.py "$R"/*.json | tee "$R/summary.txt"
tar -C "$OUT" -czf "$OUT/r3.tgz" r && rm -rf "$R"
