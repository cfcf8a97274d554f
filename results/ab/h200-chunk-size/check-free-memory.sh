#!/usr/bin/env bash
# On the GPU machine, after the chunk became the free-memory rule (chunk_for in cuda_winograd.cu): every CUDA
# variant at 1200 and 50000 images (batch, time, validation, device memory), and the CUDA tests. Packed as
# build/exp/mem.tar.xz: bin/suite, tests/suite_tests, build/cuda/lib, offload-runtime, testlibs.
source results/ab/device-setup.sh build/exp/mem.tar.xz || exit 1
$B/bin/suite $in --backend cuda --images 1200,50000 --repeat 10 --quiet --output $R/cuda-all.json; echo "suite rc=$?"
python3 results/ab/side_medians.py "$R"/cuda-all.json | tee "$R/summary.txt"
# A carried test binary finds the data where an installed one would (<prefix>/share/cnn-suite/data).
mkdir -p $B/share/cnn-suite && ln -sfn $PWD/data $B/share/cnn-suite/data
echo "== tests"; $B/tests/suite_tests --gtest_filter='*EveryVariant*cuda_*:*Cuda*:*cuda*' 2>&1 | tail -3
tar -C "$OUT" -czf "$OUT/r.tgz" r
