#!/usr/bin/env python3
"""The summary the A/B scripts under results/ab/ print after their runs: per backend:variant, image count and
side (a report's file name up to its first '-' or '.', e.g. before-r1.json -> before), the forward medians of
its runs in file order, their median, the end-to-end median where the runs have one, the batch, whether every
run validated, the largest |dp| and the device memory at its peak (the first run's).
Usage: side_medians.py REPORT.json ..."""
import json
import statistics
import sys
from pathlib import Path


def main(paths):
    rows = {}
    for path in sorted(paths):
        side = Path(path).name.split("-")[0].split(".")[0]
        for r in json.loads(Path(path).read_text())["runs"]:
            key = (f"{r['backend']}:{r['variant']}", r["images"], side)
            rows.setdefault(key, []).append(r)
    for (name, images, side), runs in sorted(rows.items()):
        ms = [r["forward_ms"]["median"] for r in runs]
        e2e = [r["phases_ms"]["end_to_end"] for r in runs if r["phases_ms"].get("end_to_end") is not None]
        print(f"{name:26s} {images:8d} {side:8s} batch {runs[0]['batch']:6d} forward "
              f"{' '.join(f'{m:.4f}' for m in ms)} median {statistics.median(ms):.4f}"
              + (f" e2e median {statistics.median(e2e):.3f}" if e2e else "")
              + f" validated {all(r['validation']['passed'] for r in runs)}"
              f" max dp {max(r['validation']['max_abs_prob_diff'] for r in runs):.1e}"
              f" device MB {(runs[0]['memory_bytes'].get('device_peak') or 0) // 2**20}")


if __name__ == "__main__":
    main(sys.argv[1:])
