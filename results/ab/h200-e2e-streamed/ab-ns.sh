#!/bin/bash
# end_to_end, the chunked way: chunks of C images over N streams, untraced, alternating configs twice.
exec > $OUT/log.txt 2>&1
build=$PWD/build/gpu-carry/cuda; source scripts/gpu-libs.sh
S=$PWD/build/gpu-carry/ab/suite-stream
R=$OUT/r; mkdir -p $R
in="--data data/cifar10 --weights data/convnetjs-cifar10"
for round in 1 2; do
for cfg in 4-3125 2-3125 3-3125 2-2500 3-2500 2-4167 3-4167 3-2084; do
  ns=${cfg%-*}; c=${cfg#*-}
  CNN_E2E_CHUNKED=1 CNN_E2E_CHUNK=$c CNN_E2E_NSTREAMS=$ns $S $in --backend cuda:winograd_mma --images 50000,50000,50000 --repeat 1 --quiet --output $R/n$cfg-$round.json || echo "$cfg rc=$?"
done; done
python3 - $R/*.json <<'PY'
import json,sys,collections,statistics as st
d=collections.defaultdict(list)
for f in sys.argv[1:]:
  for r in json.load(open(f))['runs']:
    assert r['validation']['passed']
    d[f.split('/')[-1][1:].rsplit('-',1)[0]].append((r['phases_ms']['end_to_end'], r['phases_ms']['h2d_pinned']))
for k in sorted(d):
  e=[x[0] for x in d[k]]; p=st.median(x[1] for x in d[k]); print(k, 'e2e median %.4f'%st.median(e), 'pinned %.4f ratio %.3f'%(p, st.median(e)/p), ' '.join('%.3f'%x for x in e))
PY
cd $OUT && tar czf r.tgz r && rm -rf r
