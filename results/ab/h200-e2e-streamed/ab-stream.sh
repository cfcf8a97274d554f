#!/bin/bash
# A/B: end_to_end streamed (conv1 awaits each piece's arrival, one compute stream) against the chunked way.
# base = 15d1458's binary; chunked = the new binary with CNN_E2E_CHUNKED=1; sC-P = streamed, chunks of C, pieces of P.
exec > $OUT/log.txt 2>&1
build=$PWD/build/gpu-carry/cuda; source scripts/gpu-libs.sh
A=$PWD/build/gpu-carry/ab; cp $build/bin/suite $A/suite-base
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $R/device.txt
in="--data data/cifar10 --weights data/convnetjs-cifar10"
S=$A/suite-stream
$S $in --backend cuda:winograd_mma,cuda:fused_fp16x3 --images 1,7,513,1200,2112,8191 --repeat 2 --quiet --output $R/checks-stream.json; echo "checks rc=$?"
$S --data $build/unseen_batch.bin --weights data/convnetjs-cifar10 --backend cuda:winograd_mma --images 1000 --repeat 2 --quiet --output $R/unseen-stream.json; echo "unseen rc=$?"
CNN_E2E_NOWAIT=1 $S $in --backend cuda:winograd_mma --images 1200,50000 --repeat 1 --quiet --output $R/nowait.json; echo "nowait (must fail, 5) rc=$?"
cfg50="base s3125-781 s3125-390 s2048-512 s4096-1024 s6250-1562 s1562-390"
cfg12="base s1024-256 s600-300 s1200-300 s600-150"
run() { # config images-list tag
  local c=$1 imgs=$2 tag=$3 bin=$S env=()
  case $c in base) bin=$A/suite-base;; chunked) env=(CNN_E2E_CHUNKED=1);; s*) x=${c#s}; env=(CNN_E2E_CHUNK=${x%-*} CNN_E2E_PIECE=${x#*-});; esac
  env "${env[@]}" $bin $in --backend cuda:winograd_mma --images $imgs --repeat 2 --quiet --output $R/ab-$c-$tag.json || echo "$c $tag rc=$?"
}
for c in $cfg50; do run $c 50000,50000,50000,50000,50000 50k; done
for c in $cfg12; do run $c 1200,1200,1200,1200,1200,1200 1k; done
date
python3 - $R/*.json <<'PY' | tee $OUT/summary.txt
import json,sys,collections,statistics as st
d=collections.defaultdict(list); bad=collections.Counter()
for f in sys.argv[1:]:
  n=f.split('/')[-1]
  if not n.endswith('.json'): continue
  for r in json.load(open(f))['runs']:
    if not r['validation']['passed']: bad[n]+=1
    if 'unseen' in n: print('unseen', r['variant'], r['validation']['max_abs_prob_diff'])
    if n.startswith('ab-'):
      p=r['phases_ms']; k=n[3:].rsplit('-',1)[0]; d[(r['images'], k)].append((p['end_to_end'], p['forward'], p['h2d_pinned']))
print('not validated per file:', dict(bad))
for k in sorted(d):
  e=[x[0] for x in d[k]]; pin=st.median(x[2] for x in d[k]); print(k, 'e2e median %.4f min %.4f'%(st.median(e), min(e)), 'n=%d'%len(e), 'fwd %.4f pinned %.4f'%(st.median(x[1] for x in d[k]), pin), 'e2e/pinned %.3f'%(st.median(e)/pin), ' '.join('%.3f'%x for x in e))
PY
cd $OUT && tar czf r.tgz r && rm -rf r
