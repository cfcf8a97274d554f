#!/usr/bin/env bash
# On the GPU machine, from the repository root with $OUT set: one A/B of cuda:winograd_mma between two builds of a
# tarball made here (BEFORE and AFTER name its suite-BEFORE and suite-AFTER, beside build/cuda/lib/,
# build/cuda/offload-runtime/ and unseen_batch.bin). AFTER's checks: the three Winograd variants at the rounds'
# edges and on 1000 unseen images; ncu per kernel of both (8192 images); three rounds of 1200 and 50000 images,
# --repeat 20, the builds taking turns; then a summary. Everything lands in $OUT/r.tgz.
#   results/ab/ab-pair.sh build/exp/NAME.tar.xz BEFORE AFTER
[ $# -eq 3 ] || { echo "ab-pair.sh: usage: ab-pair.sh TARBALL BEFORE AFTER" >&2; exit 2; }
a=$2 b=$3
source results/ab/device-setup.sh "$1" || exit 1
wg=cuda:winograd_mma,cuda:winograd,cuda:winograd_conv1_mma
timeout 250 $B/suite-$b $in --backend $wg --images 1,7,264,265,529,1200,4223,8191 --repeat 1 --warmup 0 --quiet \
  --output "$R/checks-$b.json" 2> "$R/checks-$b.err"; echo "checks rc=$?"
timeout 60 $B/suite-$b --data $B/unseen_batch.bin --weights data/convnetjs-cifar10 --backend $wg --images 1000 \
  --repeat 2 --quiet --output "$R/unseen-$b.json" 2> "$R/unseen-$b.err"; echo "unseen rc=$?"
M=gpu__time_duration.sum,smsp__inst_executed.sum
for v in $a $b; do
  timeout 100 ncu --clock-control none --csv --kernel-name regex:"winograd_layer_kernel|conv1_pixels_kernel" \
    --metrics $M -c 6 $B/suite-$v $in --backend cuda:winograd_mma --images 8192 --batch 8192 --repeat 1 --warmup 0 \
    --quiet --output /tmp/n-$v.json > "$R/ncu-$v.csv" 2>&1; echo "ncu $v rc=$?"
done
for round in 1 2 3; do
  for v in $a $b; do
    timeout 60 $B/suite-$v $in --backend cuda:winograd_mma --images 1200,50000 --repeat 20 --quiet \
      --output "$R/ab-$v-$round.json" 2> "$R/ab-$v-$round.err"; echo "suite $v round $round rc=$?"
  done
done
python3 results/ab/ncu_layers.py $a="$R/ncu-$a.csv" $b="$R/ncu-$b.csv"
python3 - "$R" <<'PY'
import glob, json, os, statistics, sys
R = sys.argv[1]; ab = {}
for f in sorted(glob.glob(f"{R}/*.json")):
    name = os.path.basename(f); runs = json.load(open(f))["runs"]
    print(name, len(runs), "runs,", sum(r["validation"]["passed"] for r in runs), "validated, max |dp| %.2e"
          % max(r["validation"]["max_abs_prob_diff"] for r in runs))
    for r in runs:
        if name.startswith("ab-"):
            ab.setdefault((r["variant"], r["images"], name.split("-")[1]), []).append(r["forward_ms"]["median"])
for k in sorted(ab): print(*k, " ".join("%.4f" % x for x in ab[k]), "median %.4f" % statistics.median(ab[k]))
PY
tar -C "$OUT" -czf "$OUT/r.tgz" r && rm -rf "$R"
