#!/usr/bin/env bash
# On the GPU machine: conv3's asynchronous copies with their addresses worked out once (copies) and that with the
# FC's warps transforming too (both), against f1edcdc (base). build/exp/conv3.tar.xz, made here: suite-base,
# suite-copies, suite-both (build/cuda/bin/suite of each source), build/cuda/lib/, build/cuda/offload-runtime/
# and unseen_batch.bin (results/h200/checks-6e3c22e/make_unseen.py), packed with `tar -C <dir> -cJf`.
source results/ab/device-setup.sh build/exp/conv3.tar.xz || exit 1
wg=cuda:winograd_mma,cuda:winograd,cuda:winograd_conv1_mma
for v in copies both; do
  timeout 100 $B/suite-$v $in --backend $wg --images 1,7,133,264,265,529,1200,2112,4223,8191 --repeat 1 --warmup 0 \
    --quiet --output "$R/checks-$v.json" 2> "$R/checks-$v.err"; echo "checks $v rc=$?"
  timeout 60 $B/suite-$v --data $B/unseen_batch.bin --weights data/convnetjs-cifar10 --backend $wg --images 1000 \
    --repeat 2 --quiet --output "$R/unseen-$v.json" 2> "$R/unseen-$v.err"; echo "unseen $v rc=$?"
done
for tool in racecheck memcheck; do
  timeout 100 compute-sanitizer --tool $tool $B/suite-both $in --backend cuda:winograd_mma,cuda:winograd --images 40 \
    --repeat 1 --warmup 0 --quiet --output /tmp/san.json > "$R/sanitizer-$tool.txt" 2>&1; echo "sanitizer $tool rc=$?"
done
M=gpu__time_duration.sum,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,smsp__warps_eligible.avg.per_cycle_active
for v in base copies both; do
  timeout 100 ncu --clock-control none --csv --kernel-name regex:"winograd_layer_kernel|conv1_pixels_kernel" \
    --metrics $M -c 6 $B/suite-$v $in --backend cuda:winograd_mma --images 8192 --batch 8192 --repeat 1 --warmup 0 \
    --quiet --output /tmp/n-$v.json > "$R/ncu-$v.csv" 2>&1; echo "ncu $v rc=$?"
done
timeout 100 ncu --clock-control none --kernel-name regex:"winograd_layer_kernel<3" -c 1 --section SourceCounters \
  --section WarpStateStats -o /tmp/prof3 $B/suite-both $in --backend cuda:winograd_mma --images 4096 --batch 4096 \
  --repeat 1 --warmup 0 --quiet --output /tmp/n.json > "$R/ncu-prof3.log" 2>&1; echo "profile rc=$?"
ncu --import /tmp/prof3.ncu-rep --page source --csv --print-source sass 2>/dev/null | gzip > "$R/sass3-both.csv.gz"
for round in 1 2 3; do
  for v in base copies both; do
    timeout 60 $B/suite-$v $in --backend cuda:winograd_mma --images 1200,50000 --repeat 20 --quiet \
      --output "$R/ab-$v-$round.json" 2> "$R/ab-$v-$round.err"; echo "suite $v round $round rc=$?"
  done
done
for v in base both; do
  timeout 60 $B/suite-$v $in --backend cuda:winograd,cuda:winograd_conv1_mma --images 1200,50000 --repeat 10 --quiet \
    --output "$R/others-$v.json" 2> "$R/others-$v.err"; echo "others $v rc=$?"
done
python3 results/ab/ncu_layers.py base="$R/ncu-base.csv" copies="$R/ncu-copies.csv" both="$R/ncu-both.csv"
python3 - "$R" <<'PY'
import glob, json, os, statistics, sys
R = sys.argv[1]; ab = {}
for f in sorted(glob.glob(f"{R}/*.json")):
    name = os.path.basename(f)
    for r in json.load(open(f))["runs"]:
        val = r["validation"]
        if not val["passed"] or r["images"] in (1200, 8191) or "unseen" in name:
            print(name, r["variant"], r["images"], "acc", r.get("accuracy"), "passed", val["passed"],
                  "maxdp %.2e" % val.get("max_abs_prob_diff", -1))
        if name.startswith(("ab-", "others-")):
            ab.setdefault((r["variant"], r["images"], name.split("-")[1].split(".")[0]), []).append(r["forward_ms"]["median"])
for k in sorted(ab): print(*k, " ".join("%.4f" % x for x in ab[k]), "median %.4f" % statistics.median(ab[k]))
PY
tar -C "$OUT" -czf "$OUT/r.tgz" r && rm -rf "$R"
