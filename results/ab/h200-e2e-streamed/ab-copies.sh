#!/bin/bash
# The images' copy alone, in pieces of C images over N streams (no compute): per-copy cost against concurrency.
exec > $OUT/log.txt 2>&1
build=$PWD/build/gpu-carry/cuda; source scripts/gpu-libs.sh
S=$PWD/build/gpu-carry/ab/suite-stream
R=$OUT/r; mkdir -p $R
in="--data data/cifar10 --weights data/convnetjs-cifar10"
for cfg in 50000-1 12500-1 3125-1 3125-2 3125-4 781-1 781-2 781-4 390-2; do
  c=${cfg%-*}; ns=${cfg#*-}
  CNN_E2E_TRACE=1 CNN_E2E_CHUNKED=1 CNN_E2E_COPYONLY=1 CNN_E2E_CHUNK=$c CNN_E2E_NSTREAMS=$ns $S $in --backend cuda:winograd_mma --images 50000,50000,50000 --repeat 1 --quiet --output $R/c$cfg.json 2> $R/c$cfg.trace
  python3 - $R/c$cfg.json $cfg <<'PY'
import json,sys
e=[r['phases_ms']['end_to_end'] for r in json.load(open(sys.argv[1]))['runs']]
p=[r['phases_ms']['h2d_pinned'] for r in json.load(open(sys.argv[1]))['runs']]
print('copy-only', sys.argv[2], 'e2e(copies) ' + ' '.join('%.3f'%x for x in e), 'alone ' + ' '.join('%.3f'%x for x in p))
PY
done
# And with compute, chunks of 3125 over 1, 2, 4 streams, traced
for ns in 1 2 4; do
  CNN_E2E_TRACE=1 CNN_E2E_CHUNKED=1 CNN_E2E_NSTREAMS=$ns $S $in --backend cuda:winograd_mma --images 50000,50000,50000 --repeat 1 --quiet --output $R/k$ns.json 2> $R/k$ns.trace
  python3 -c "import json;d=json.load(open('$R/k$ns.json'));print('chunked ns=$ns', [round(r['phases_ms']['end_to_end'],3) for r in d['runs']])"
done
cd $OUT && tar czf r.tgz r && rm -rf r
