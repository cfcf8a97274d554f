#!/usr/bin/python3
"""conv1's weights w / 255 cut to fewer bits, the pixels exact (p - 127.5, zero padding), everything else in
FP64: max |p - p_fp64| over the first 1200 training images (tolerance 1e-4). Which weight splits a conv1 on
BF16 (AMX) or FP16 (tensor cores) units can use.

    /usr/bin/python3 results/ab/xeon-2core-amx-conv1/weight_parts.py
"""
import os
import sys

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..")
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, os.path.join(ROOT, "results", "numerics", "winograd-tiles"))
import peer_pytorch as peer  # noqa: E402
import tile_error as te  # noqa: E402


def bf16_truncated(x):
    b = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    return (b & 0xFFFF0000).view(np.float32).astype(np.float64)


def main():
    convs, fc = peer.load_weights(os.path.join(ROOT, "data", "convnetjs-cifar10"))
    raw = peer.load_images([os.path.join(ROOT, "data", "cifar10")])[0][:1200].reshape(-1, 3, 32, 32).astype(np.float64)
    ref = te.network(raw / 255 - 0.5, convs, fc, te.direct)
    w1 = convs[0][0]
    w = (w1 / 255).astype(np.float32)
    hi = bf16_truncated(w)
    mid = bf16_truncated(w - hi)
    lo = bf16_truncated(w - hi - mid)
    cases = [("FP16, one part", (w1 / 255).astype(np.float16).astype(np.float64)),
             ("BF16, one part (hi)", hi), ("BF16, two parts (hi + mid)", hi + mid),
             ("BF16, three parts (hi + mid + lo)", hi + mid + lo)]
    for label, weights in cases:
        def conv(x, cw, b, weights=weights):
            return te.direct(raw - 127.5, weights, b) if cw is w1 else te.direct(x, cw, b)
        p = te.network(raw / 255 - 0.5, convs, fc, conv)
        err = np.abs(p - ref).max()
        print(f"{label:36s} {err:.1e}  {'within' if err <= 1e-4 else 'OVER'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
