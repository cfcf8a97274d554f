#!/usr/bin/env bash
# On the GPU machine: conv1_pixels staging each image while the image before it is multiplied (suite-after,
# change.diff) against staging a round's two images between two barriers (suite-before, its parent).
# cuda:winograd_mma at 1200 and 50000 images, one process a side, alternating, 4 rounds; the new kernel on odd
# and edge sizes (validation); Nsight Compute on conv1_pixels_kernel, both sides; the CUDA tests.
# Packed as build/exp/stage.tar.xz: bin/suite-before, bin/suite-after, tests/suite_tests, lib,
# offload-runtime, testlibs.
source results/ab/device-setup.sh build/exp/stage.tar.xz || exit 1
source results/ab/h200-conv1-staging-overlap/ncu-conv1.sh
for round in 1 2 3 4; do
  for side in before after; do
    $B/bin/suite-$side $in --backend cuda:winograd_mma --images 1200,50000 --repeat 20 --quiet \
      --output "$R/$side-r$round.json" || echo "$side round $round: rc $?"
  done
done
python3 results/ab/side_medians.py "$R"/before-*.json "$R"/after-*.json | tee "$R/summary.txt"
$B/bin/suite-after $in --backend cuda:winograd_mma --images 1,2,3,7,300,4223,16385,65537 --repeat 3 --quiet \
  --output "$R/edges.json"; echo "edges rc=$?"
ncu_conv1 before after
mkdir -p $B/share/cnn-suite && ln -sfn $PWD/data $B/share/cnn-suite/data
echo "== tests"; $B/tests/suite_tests --gtest_filter='*EveryVariant*cuda_*:*Cuda*:*cuda*' 2>&1 | tail -3
tar -C "$OUT" -czf "$OUT/r.tgz" r
