#!/bin/bash
# The committed code: the GPU verdict runs, then 1M images, then where conv2 spends its shared-memory traffic.
build=$PWD/build/gpu-carry/cuda; source scripts/gpu-libs.sh
in="--data data/cifar10 --weights data/convnetjs-cifar10"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout 420 scripts/verdict-bench.sh gpu $build $OUT/gv > $OUT/gv.log 2>&1; echo "gpu verdict rc=$?"
grep -E "winograd_mma|winograd_layers|pytorch|rc=" $OUT/gv.log | tail -12
mkdir -p $OUT/x
echo "== tests"; $build/tests/suite_tests --gtest_filter="*EveryVariant*cuda_*:*EveryVariant*cudnn_*" 2>&1 | tail -1
$build/bin/suite $in --backend cuda:winograd_mma --images 1000000 --repeat 3 --quiet --output $OUT/x/million.json; echo "1M rc=$?"
python3 - $OUT/x/million.json <<'PY'
import json,sys
for r in json.load(open(sys.argv[1]))['runs']:
  print(r['variant'], r['images'], r['forward_ms']['median'], r['phases_ms']['end_to_end'], r['validation']['passed'], r['validation']['max_abs_prob_diff'])
PY
cd $OUT && tar czf v.tgz gv gv.log x && rm -rf gv gv.log x
