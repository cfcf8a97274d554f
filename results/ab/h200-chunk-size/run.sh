#!/usr/bin/env bash
# On the GPU machine: cuda:winograd_mma at 50000 images with chunks (--batch) of 1024 .. 16384 images (16384 is
# the session's default). A chunk's conv1 output is 16 KB an image (conv2's input, [n][16][16][16] floats):
# 16384 images are 256 MB, which goes through HBM; 2048 are 32 MB, which the H200's 60 MB L2 can hold.
# Does keeping it in L2 pay for the extra launches and tails? Built here at HEAD (ninja -C build/cuda suite),
# packed with build/cuda/lib and a carried build's offload-runtime as build/exp/batch.tar.xz.
source results/ab/device-setup.sh build/exp/batch.tar.xz || exit 1
for round in 1 2 3; do
  for b in 16384 8192 4096 3072 2048 1024; do
    $B/suite $in --backend cuda:winograd_mma --images 50000 --batch $b --repeat 20 --quiet \
      --output "$R/b$b-r$round.json" || echo "batch $b round $round: rc $?"
  done
done
python3 results/ab/side_medians.py "$R"/*.json | tee "$R/summary.txt"
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct
for b in 16384 2048; do
  timeout 120 ncu --clock-control none --csv --kernel-name regex:"winograd_layer_kernel|conv1_pixels_kernel" --metrics $M -c 6 \
    $B/suite $in --backend cuda:winograd_mma --images $((2 * b)) --batch $b --repeat 1 --warmup 0 --quiet \
    --output /tmp/n-$b.json > "$R/ncu-b$b.csv" 2>&1
  echo "ncu batch $b rc=$?"
done
tar -C "$OUT" -czf "$OUT/r.tgz" r && rm -rf "$R"
