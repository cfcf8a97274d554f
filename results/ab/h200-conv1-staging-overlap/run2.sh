#!/usr/bin/env bash
# On the same H200 after run.sh: two smaller forms. suite-prefetch (change-prefetch.diff): a round's pixels read
# from global memory into registers during the round before, the staging still between two barriers;
# suite-refactor (change-refactor.diff): the parent's order with run.sh's helper functions (load_quad,
# stage_quad, pooled_row), to tell the code shape from the order. Against suite-before (the parent),
# cuda:winograd_mma at 1200 and 50000 images, alternating, 4 rounds; ncu on conv1_pixels_kernel.
# Packed as build/exp/stage2.tar.xz.
source results/ab/device-setup.sh build/exp/stage2.tar.xz || exit 1
source results/ab/h200-conv1-staging-overlap/ncu-conv1.sh
for round in 1 2 3 4; do
  for side in before prefetch refactor; do
    $B/bin/suite-$side $in --backend cuda:winograd_mma --images 1200,50000 --repeat 20 --quiet \
      --output "$R/$side-r$round.json" || echo "$side round $round: rc $?"
  done
done
python3 results/ab/side_medians.py "$R"/*-r?.json | tee "$R/summary2.txt"
ncu_conv1 prefetch refactor
tar -C "$OUT" -czf "$OUT/r2.tgz" r
