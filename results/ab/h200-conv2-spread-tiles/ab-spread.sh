#!/bin/bash
# A/B: conv2's V tiles 24 modulo 32 floats apart and its input transform on tiles two apart (spread) (base =
# build/gpu-carry/cuda at b26c07d); alternating; conv2's shared-memory counters; sanitizers; checks.
build=$PWD/build/gpu-carry/cuda; source scripts/gpu-libs.sh
A=$PWD/build/gpu-carry/ab; R=$OUT/r; mkdir -p $R
cp $build/bin/suite $A/suite-base
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $R/device.txt
in="--data data/cifar10 --weights data/convnetjs-cifar10"
timeout 90 $A/suite-spread $in --backend cuda:winograd_mma,cuda:winograd,cuda:winograd_conv1_mma --images 1,7,133,264,265,529,1200,2112,8191 --repeat 2 --quiet --output $R/checks.json; echo "checks rc=$?"
timeout 60 $A/suite-spread --data $build/unseen_batch.bin --weights data/convnetjs-cifar10 --backend cuda:winograd_mma --images 1000 --repeat 2 --quiet --output $R/unseen.json; echo "unseen rc=$?"
timeout 100 compute-sanitizer --tool racecheck $A/suite-spread $in --backend cuda:winograd_mma --images 40 --repeat 1 --warmup 0 --quiet --output /tmp/s2.json > $R/compute-sanitizer.txt 2>&1; echo "racecheck rc=$?"
timeout 100 compute-sanitizer --tool memcheck $A/suite-spread $in --backend cuda:winograd_mma --images 300 --repeat 1 --warmup 0 --quiet --output /tmp/s1.json >> $R/compute-sanitizer.txt 2>&1; echo "memcheck rc=$?"
grep SUMMARY $R/compute-sanitizer.txt
for round in 1 2 3 4; do
  for v in base spread; do
    timeout 60 $A/suite-$v $in --backend cuda:winograd_mma --images 1200,50000 --repeat 20 --quiet --output $R/ab-$v-$round.json; echo "$v $round rc=$?"
  done
done
M=gpu__time_duration.sum,sm__inst_executed.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum
for v in base spread; do
  timeout 90 ncu --clock-control none --csv --kernel-name regex:"winograd_layer_kernel" --metrics $M -c 4 $A/suite-$v $in --backend cuda:winograd_mma --images 8192 --batch 8192 --repeat 1 --warmup 0 --quiet --output /tmp/n-$v.json > $R/ncu-$v.csv 2>&1; echo "ncu $v rc=$?"
done
python3 - $R/*.json $R/ncu-base.csv $R/ncu-spread.csv <<'PY'
import json,sys,collections,statistics as st,csv
e=collections.defaultdict(list); bad=0
for f in sys.argv[1:]:
  if f.endswith('.csv'):
    rows=[r for r in csv.reader(open(f)) if len(r)>10]
    if not rows: print(f, 'no rows'); continue
    h=rows[0]; ki=h.index('Kernel Name'); mi=h.index('Metric Name'); vi=h.index('Metric Value')
    for r in rows[1:]: print(f.split('/')[-1], r[ki][:32], r[mi], r[vi])
    continue
  for r in json.load(open(f))['runs']:
    ok=r['validation']['passed']; bad+=not ok
    if '/ab-' in f: e[(f.split('/')[-1].split('-')[1], r['images'])].append((r['phases_ms'].get('end_to_end'), r['forward_ms']['median']))
    elif 'unseen' in f or r['images'] in (8191,): print(f.split('/')[-1], r['variant'], r['images'], ok, r['validation']['max_abs_prob_diff'])
print('not validated:', bad)
for k in sorted(e): print(k, 'fwd', ['%.4f'%b for a,b in e[k]], 'median fwd %.4f e2e %.4f'%(st.median(b for a,b in e[k]), st.median(a for a,b in e[k])))
PY
rm -f $A/suite-base
cd $OUT && tar czf r.tgz r && rm -rf r
