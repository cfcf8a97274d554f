#!/usr/bin/env bash
# On the GPU machine: cuda:winograd_mma's chunk split over 1, 2 (as committed), 3 or 4 side streams (kLanes) now
# that 50000 images are one chunk (d8b0d34). suite-L<k>: d8b0d34 built with kLanes = k for winograd_mma,
# packed with build/cuda/lib and offload-runtime as build/exp/lanes.tar.xz. One process each, in turn, 3 rounds.
source results/ab/device-setup.sh build/exp/lanes.tar.xz || exit 1
for round in 1 2 3; do
  for L in 1 2 3 4; do
    $B/suite-L$L $in --backend cuda:winograd_mma --images 50000,1000000 --repeat 10 --quiet \
      --output "$R/L$L-r$round.json" || echo "L$L round $round: rc $?"
  done
done
python3 results/ab/side_medians.py "$R"/*.json | tee "$R/summary.txt"
tar -C "$OUT" -czf "$OUT/r.tgz" r
