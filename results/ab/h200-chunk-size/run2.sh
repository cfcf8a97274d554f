#!/usr/bin/env bash
# On the same warm H200 after run.sh: chunks larger than the default 16384 (--batch 16384, 25000, 50000),
# alternating, 3 rounds; then 1000000 images at 16384 and 50000 a chunk.
source results/ab/device-setup.sh build/exp/batch.tar.xz || exit 1
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
python3 results/ab/side_medians.py "$R"/*.json | tee "$R/summary.txt"
tar -C "$OUT" -czf "$OUT/r2.tgz" r && rm -rf "$R"
