#!/usr/bin/env bash
# On the GPU machine: conv3 (winograd_mma) with the FC inside its output stage and the next round's input
# transform in the same pass (fused), against the kept copies step of results/ab/h200-conv3-copies/ (kept).
# build/exp/fused.tar.xz, made here: suite-kept, suite-fused (build/cuda/bin/suite of each source),
# build/cuda/lib/, build/cuda/offload-runtime/ and unseen_batch.bin (results/h200/checks-6e3c22e/make_unseen.py),
# packed with `tar -C <dir> -cJf`.
source results/ab/device-setup.sh build/exp/fused.tar.xz || exit 1
wg=cuda:winograd_mma,cuda:winograd,cuda:winograd_conv1_mma
for v in fused kept; do
  timeout 250 $B/suite-$v $in --backend $wg --images 1,7,264,265,529,1200,4223,8191 --repeat 1 --warmup 0 \
    --quiet --output "$R/checks-$v.json" 2> "$R/checks-$v.err"; echo "checks $v rc=$?"
done
timeout 60 $B/suite-fused --data $B/unseen_batch.bin --weights data/convnetjs-cifar10 --backend $wg --images 1000 \
  --repeat 2 --quiet --output "$R/unseen-fused.json" 2> "$R/unseen-fused.err"; echo "unseen rc=$?"
timeout 200 compute-sanitizer --tool racecheck $B/suite-fused $in --backend cuda:winograd_mma --images 1100 --repeat 1 \
  --warmup 0 --quiet --output /tmp/san.json > "$R/sanitizer-racecheck.txt" 2>&1; echo "racecheck rc=$?"
timeout 100 compute-sanitizer --tool memcheck $B/suite-fused $in --backend cuda:winograd_mma --images 300 --repeat 1 \
  --warmup 0 --quiet --output /tmp/san.json > "$R/sanitizer-memcheck.txt" 2>&1; echo "memcheck rc=$?"
M=gpu__time_duration.sum,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,smsp__warps_eligible.avg.per_cycle_active
for v in kept fused; do
  timeout 100 ncu --clock-control none --csv --kernel-name regex:"winograd_layer_kernel|conv1_pixels_kernel" \
    --metrics $M -c 6 $B/suite-$v $in --backend cuda:winograd_mma --images 8192 --batch 8192 --repeat 1 --warmup 0 \
    --quiet --output /tmp/n-$v.json > "$R/ncu-$v.csv" 2>&1; echo "ncu $v rc=$?"
done
for round in 1 2 3; do
  for v in kept fused; do
    timeout 60 $B/suite-$v $in --backend cuda:winograd_mma --images 1200,50000 --repeat 20 --quiet \
      --output "$R/ab-$v-$round.json" 2> "$R/ab-$v-$round.err"; echo "suite $v round $round rc=$?"
  done
done
python3 results/ab/ncu_layers.py kept="$R/ncu-kept.csv" fused="$R/ncu-fused.csv" | grep -E "conv3|conv2 gpu__time"
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
        if name.startswith("ab-"):
            ab.setdefault((r["variant"], r["images"], name.split("-")[1]), []).append(r["forward_ms"]["median"])
    if name.startswith("checks-"):
        runs = json.load(open(f))["runs"]
        print(name, len(runs), "runs,", sum(r["validation"]["passed"] for r in runs), "validated")
for k in sorted(ab): print(*k, " ".join("%.4f" % x for x in ab[k]), "median %.4f" % statistics.median(ab[k]))
PY
grep -h "SUMMARY" "$R"/sanitizer-*.txt
tar -C "$OUT" -czf "$OUT/r.tgz" r && rm -rf "$R"
