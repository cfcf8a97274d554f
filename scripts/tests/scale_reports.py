#!/usr/bin/python3
"""Copies the reports of folder SRC to DST with every forward time (median, min, max, passes) x FACTOR:
an injected slowdown for checking the regression gate (scripts/README.md, "Evidence")."""
import json, sys
from pathlib import Path
src, dst, factor = Path(sys.argv[1]), Path(sys.argv[2]), float(sys.argv[3])
dst.mkdir(parents=True, exist_ok=True)
for f in sorted(src.glob("*.json")):
    d = json.loads(f.read_text())
    for r in d["runs"]:
        fw = r["forward_ms"]
        for k in ("min", "median", "max"):
            fw[k] *= factor
        fw["samples"] = [s * factor for s in fw["samples"]]
    (dst / f.name).write_text(json.dumps(d))
