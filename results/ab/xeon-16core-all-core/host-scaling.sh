#!/bin/bash
# Where openmp:winograd loses per-core speed on the 16-core host (issue 28, item 3): 1 thread 906 ms, 16 threads
# 80.6 (11.2x), while fma_peak scales 14.7x. The layer_bench stages (scratch in cache) alone and as 16 copies,
# one per core; fma_peak over a longer window; the suite at 1, 8, 16 threads.
exec > $OUT/log.txt 2>&1
cb=$PWD/build/gpu-carry/verdict-cpu
[ -d $cb/runlibs ] || tar -C $cb -xJf $cb/runlibs.tar.xz
export LD_LIBRARY_PATH=$cb/runlibs
R=$OUT/r; mkdir -p $R
nproc; lscpu | grep -E "Model name|MHz|Thread"
in="--data data/cifar10 --weights data/convnetjs-cifar10"
lb() {  # copies, filter name
  local n=$1 f=$2
  for c in $(seq 0 $((n - 1))); do
    taskset -c $c $cb/bin/layer_bench --benchmark_filter="winograd_forward/$f\$" --benchmark_repetitions=5 \
      --benchmark_min_time=0.3 --benchmark_out=$R/lb-$f-$n-$c.json --benchmark_out_format=json >/dev/null &
  done
  wait
}
for f in conv_relu_pool1 conv_relu_pool2 conv_relu_pool3 conv2_elementwise; do
  for n in 1 16 8 1; do lb $n $f; done
done
echo "layer_bench done $(date +%T)"
$cb/bin/fma_peak --benchmark_min_time=3 --benchmark_repetitions=2 --benchmark_out=$R/fma-long.json --benchmark_out_format=json | tail -4
export OMP_PROC_BIND=spread OMP_PLACES=threads
for t in 16 8 1 16; do
  $cb/bin/suite $in --backend openmp:winograd --images 50000 --threads $t --repeat 8 --quiet --output $R/s-$t-$RANDOM.json; echo "suite $t rc=$? $(date +%T)"
done
$cb/bin/suite $in --backend openmp:winograd --images 16000 --threads 16 --repeat 20 --quiet --output $R/s-16-16000.json; echo "suite 16000 rc=$?"
python3 - $R <<'PY'
import json,sys,glob,collections,statistics as st
R=sys.argv[1]
d=collections.defaultdict(list)
for f in glob.glob(R+'/lb-*.json'):
  name=f.split('/')[-1][3:-5]; stage,n,c=name.rsplit('-',2)
  for b in json.load(open(f))['benchmarks']:
    if b.get('aggregate_name')=='median': d[(stage,int(n))].append(b['real_time'])
for k in sorted(d): print('layer_bench', k, 'copies', len(d[k]), 'median of medians %.0f ns'%st.median(d[k]), 'max %.0f'%max(d[k]))
for f in sorted(glob.glob(R+'/s-*.json')):
  for r in json.load(open(f))['runs']:
    print(f.split('/')[-1], r['threads'], r['images'], 'median %.1f ms'%r['forward_ms']['median'], 'samples', ' '.join('%.1f'%x for x in r['forward_ms']['samples']), r['validation']['passed'])
PY
cd $OUT && tar czf r.tgz r && rm -rf r
