#!/bin/bash
# Timelines of end_to_end (events after each piece lands / each chunk computes), chunked and streamed ways.
exec > $OUT/log.txt 2>&1
build=$PWD/build/gpu-carry/cuda; source scripts/gpu-libs.sh
A=$PWD/build/gpu-carry/ab; S=$A/suite-stream
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $R/device.txt
in="--data data/cifar10 --weights data/convnetjs-cifar10"
t() { # tag env...
  local tag=$1; shift
  env CNN_E2E_TRACE=1 "$@" $S $in --backend cuda:winograd_mma --images 50000,50000,1200,1200 --repeat 2 --quiet --output $R/$tag.json 2> $R/$tag.trace; echo "$tag rc=$?"
}
t chunked CNN_E2E_CHUNKED=1
t value CNN_E2E_CHUNK=3125 CNN_E2E_PIECE=781
t nobarrier CNN_E2E_CHUNK=3125 CNN_E2E_PIECE=781 CNN_E2E_FLAG=nobarrier
t copy CNN_E2E_CHUNK=3125 CNN_E2E_PIECE=781 CNN_E2E_FLAG=copy
t value390 CNN_E2E_CHUNK=3125 CNN_E2E_PIECE=390
t nobarrier390 CNN_E2E_CHUNK=3125 CNN_E2E_PIECE=390 CNN_E2E_FLAG=nobarrier
t nowait CNN_E2E_CHUNK=3125 CNN_E2E_PIECE=781 CNN_E2E_NOWAIT=1
python3 - $R/*.json <<'PY' | tee $OUT/summary.txt
import json,sys
for f in sys.argv[1:]:
  for r in json.load(open(f))['runs']:
    p=r['phases_ms']; print(f.split('/')[-1], r['images'], 'e2e %.4f pinned %.4f fwd %.4f'%(p['end_to_end'], p['h2d_pinned'], p['forward']), r['validation']['passed'])
PY
cd $OUT && tar czf r.tgz r && rm -rf r
