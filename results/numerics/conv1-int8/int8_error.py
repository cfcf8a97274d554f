#!/usr/bin/python3
"""How far from FP64 the network's probabilities land when conv1 runs on the integer tensor cores (numpy
emulation): pixels as int8 (pixel - 128, exact), the weights as 1, 2 or 3 int8 digits of a scale per filter
or per (filter, channel), each digit's sums exact (int32), combined in FP32; the half-pixel offset and the
zero padding as an FP32 correction per output pixel. conv2 and conv3 as cuda:winograd_mma runs them
(F(4x4) with 3 FP16 products, tile_error.py). The suite's tolerance is 1e-4 (max |p - p_fp64|).

Why: an int8 m16n8k32 runs at twice the FP16 rate, so 2 digits would cost conv1 what one FP16 product costs;
today it runs 2 (weights split hi / lo, pixels exact in FP16).

    /usr/bin/python3 results/numerics/conv1-int8/int8_error.py [--images N] [--data FILE_OR_DIR]
"""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "winograd-tiles"))
import tile_error as te  # noqa: E402  (the loaders, the network, direct convolution, Winograd with FP16 products)


def digits_of(w, count, per_channel):
    """w = s * sum_k d_k 256^-k with int8 digits d_k; s per filter (or per filter and channel)."""
    axes = (2, 3) if per_channel else (1, 2, 3)
    s = np.abs(w).max(axis=axes, keepdims=True) / 127
    r, ds = w / s, []
    for _ in range(count):
        d = np.clip(np.round(r), -128, 127)
        ds.append(d)
        r = (r - d) * 256
    return s, ds


def conv1_int8(q, w, b, count, per_channel):
    """conv1 of x = (q + 0.5) / 255 inside the image, 0 in the padding; q = pixel - 128."""
    s, ds = digits_of(w, count, per_channel)
    out = np.zeros((len(q), w.shape[0], 32, 32), dtype=np.float32)
    for k, d in enumerate(ds):
        for c in range(3) if per_channel else [None]:
            dc = d if c is None else np.where(np.arange(3)[None, :, None, None] == c, d, 0)
            sums = te.direct(q, dc, np.zeros(w.shape[0])).astype(np.float32)  # integers, exact
            sc = s[:, 0 if c is None else c, 0, 0] / 255 * 256.0 ** -k
            out += sums * sc.astype(np.float32)[None, :, None, None]
    half = te.direct(np.ones((1, 3, 32, 32)), w, np.zeros(w.shape[0]))[0] * 0.5 / 255  # in-image taps only
    return out.astype(np.float64) + half.astype(np.float32)[None] + b[None, :, None, None]


def main():
    convs, fc, pixels, ref, w1, later, fp32 = te.conv1_study(__doc__.split("\n\n")[0])
    rows = [("conv1 in FP32 (the kernels' accuracy)", fp32)]
    for count in (1, 2, 3):
        for per_channel in (False, True):
            label = f"conv1 as {count} int8 digit(s), a scale per {'(filter, channel)' if per_channel else 'filter'}"
            rows.append((label, lambda x, w, b, n=count, pc=per_channel: conv1_int8(pixels - 128, w, b, n, pc)))
    for label, first in rows:
        p = te.network(pixels / 255 - 0.5, convs, fc, lambda x, w, b: first(x, w, b) if w is w1 else later(x, w, b))
        te.report(label, p, ref, 56)
    return 0


if __name__ == "__main__":
    sys.exit(main())
