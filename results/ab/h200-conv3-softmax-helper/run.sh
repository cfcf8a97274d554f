#!/usr/bin/env bash
# On the GPU machine: conv3's softmax through softmax_to_lanes, shared with fc_softmax_warp (shared, the code of
# the commit that adds this folder), against ddb11e3 (head): the same arithmetic, its lane's probability picked
# from z[0] on rather than from the summed logit, checked for a change in time. build/exp/softmax.tar.xz, made
# here: suite-head, suite-shared, build/cuda/lib/, build/cuda/offload-runtime/ and unseen_batch.bin.
source results/ab/device-setup.sh build/exp/softmax.tar.xz || exit 1
wg=cuda:winograd_mma,cuda:winograd,cuda:winograd_conv1_mma
timeout 250 $B/suite-shared $in --backend $wg --images 1,7,264,265,529,1200,4223,8191 --repeat 1 --warmup 0 --quiet \
  --output "$R/checks-shared.json" 2> "$R/checks-shared.err"; echo "checks rc=$?"
timeout 60 $B/suite-shared --data $B/unseen_batch.bin --weights data/convnetjs-cifar10 --backend $wg --images 1000 \
  --repeat 2 --quiet --output "$R/unseen-shared.json" 2> "$R/unseen-shared.err"; echo "unseen rc=$?"
M=gpu__time_duration.sum,smsp__inst_executed.sum
for v in head shared; do
  timeout 100 ncu --clock-control none --csv --kernel-name regex:"winograd_layer_kernel|conv1_pixels_kernel" \
    --metrics $M -c 6 $B/suite-$v $in --backend cuda:winograd_mma --images 8192 --batch 8192 --repeat 1 --warmup 0 \
    --quiet --output /tmp/n-$v.json > "$R/ncu-$v.csv" 2>&1; echo "ncu $v rc=$?"
done
for round in 1 2 3; do
  for v in head shared; do
    timeout 60 $B/suite-$v $in --backend cuda:winograd_mma --images 1200,50000 --repeat 20 --quiet \
      --output "$R/ab-$v-$round.json" 2> "$R/ab-$v-$round.err"; echo "suite $v round $round rc=$?"
  done
done
python3 results/ab/ncu_layers.py head="$R/ncu-head.csv" shared="$R/ncu-shared.csv"
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
