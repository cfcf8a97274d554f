#!/usr/bin/env python3
"""Reads the event traces of end_to_end passes (timelines/*.trace: "trace land|copy|chunk <images> <ms>", ms from
the pass' start) and prints, per pass of 50000 images, when the last piece landed, when the last chunk was done,
and per chunk the time the piece holding its last image landed and how long after that its compute was done (the lag)."""
import sys


def passes(path):
    out, cur = [], []
    for line in open(path, encoding="utf-8"):
        if not line.startswith("trace "):
            continue
        _, kind, images, ms = line.split()
        ev = (kind, int(images), float(ms))
        if cur and kind in ("land", "copy") and ev[1] <= cur[0][1] and cur[0][0] == kind:
            out.append(cur)
            cur = []
        cur.append(ev)
    if cur:
        out.append(cur)
    return out


for path in sys.argv[1:]:
    for p in passes(path):
        n = max(images for _, images, _ in p)
        lands = sorted((i, t) for k, i, t in p if k in ("land", "copy"))
        chunks = sorted((i, t) for k, i, t in p if k == "chunk")
        print(f"{path}: {n} images, last piece landed at {lands[-1][1]:.3f} ms, last chunk done at {chunks[-1][1]:.3f}")
        if n == 50000:
            cells = []
            for i, t in chunks:
                landed = dict(lands)[min(ii for ii, _ in lands if ii >= i)]  # the piece holding image i - 1
                cells.append(f"{i}:{landed:.3f}+{t - landed:.3f}")
            print("  chunk end image: landed + lag ms:", " ".join(cells))
