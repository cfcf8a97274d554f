#!/usr/bin/python3
"""Where conv2's warps wait (issue 28, item 1): ncu's per-instruction source counters of conv2's tensor-core
kernel, summed per phase of a round and per instruction class.

Usage: stall_regions.py [SASS_CSV_GZ]   (default: the base build's profile at a0308c2,
results/ab/h200-conv2-staged-rows/first/sass-base.csv.gz: `ncu --section SourceCounters --page source
--print-source sass --csv`, one conv2 kernel of 8192 images on an H200)

A round of conv2 is: barrier, element-wise stage on the tensor cores and the next image's staging (phase A),
barrier, the output transform of this image and the input transform of the next one (phase B). The phases
are cut at the kernel's barriers (BAR.SYNC) in address order: before the loop's first barrier is the set-up.
"""
import collections
import csv
import gzip
import sys
from pathlib import Path

DEFAULT = Path(__file__).resolve().parents[3] / "ab/h200-conv2-staged-rows/first/sass-base.csv.gz"
CLASSES = {"HMMA": "tensor", "F2FP": "split", "HADD2": "split", "FADD": "fp32", "FFMA": "fp32", "FMUL": "fp32",
           "FMNMX": "fp32", "LDS": "shared load", "STS": "shared store", "BAR": "barrier"}


def main(path):
    with gzip.open(path, "rt") as f:
        rows = list(csv.reader(f.read().splitlines()[1:]))
    head, body = rows[0], [r for r in rows[1:] if len(r) == len(rows[0]) and r[2].isdigit()]
    col = {name: i for i, name in enumerate(head)}
    stalls = [n for n in head if n.startswith("stall_") and "Not Issued" not in n]
    bars = [i for i, r in enumerate(body) if "BAR.SYNC" in r[col["Source"]]]
    # The round's two barriers are the last two; phase A between them, phase B after the last.
    a0, b0 = bars[-2], bars[-1]

    def phase(i):
        return "set-up" if i < a0 else "A: element-wise + staging" if i < b0 else "B: output + input transforms"

    total = sum(int(r[col["Warp Stall Sampling (All Samples)"]]) for r in body)
    instr = sum(int(r[col["Instructions Executed"]]) for r in body)
    print(f"{path.name}: {len(body)} SASS instructions, {instr / 1e6:.2f} M warp instructions, {total} samples")
    by_phase = collections.defaultdict(collections.Counter)
    by_class = collections.Counter()
    for i, r in enumerate(body):
        words = r[col["Source"]].split()
        op = (words[1] if words[0].startswith("@") else words[0]).split(".")[0]
        cls = CLASSES.get(op, "other")
        executed = int(r[col["Instructions Executed"]])
        by_class[cls] += executed
        p = by_phase[phase(i)]
        p["samples"] += int(r[col["Warp Stall Sampling (All Samples)"]])
        p["instructions"] += executed
        for s in stalls:
            p[s] += int(r[col[s]])
    print("\nwarp instructions by class (M):")
    for cls, n in by_class.most_common():
        print(f"  {cls:13s} {n / 1e6:6.2f}  {100 * n / instr:5.1f} %")
    print("\nper phase: share of the samples, warp instructions (M), the top stall reasons (share of the phase)")
    for name in ("set-up", "A: element-wise + staging", "B: output + input transforms"):
        p = by_phase[name]
        top = sorted(((p[s], s) for s in stalls), reverse=True)[:5]
        reasons = ", ".join(f"{s[6:]} {100 * n / max(p['samples'], 1):.0f} %" for n, s in top)
        print(f"  {name:30s} {100 * p['samples'] / total:5.1f} %  {p['instructions'] / 1e6:6.2f} M  {reasons}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT)
