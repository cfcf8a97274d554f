#!/usr/bin/python3
"""How far from FP64 the network's probabilities land when its three 5x5 convolutions run as Winograd
F(m_h x m_w, 5x5) in FP32 (numpy emulation), for tile shapes and interpolation points beyond the F(4x4, 5x5)
that every Winograd variant uses, and with the element-wise products in BF16 splits (what AMX-BF16 would
execute) or FP16 splits (cuda:winograd_mma's tensor cores: 3 products, or 2 with one operand unsplit; and the
transforms too on the tensor cores, their data split in 2). The suite's tolerance is 1e-4 (max |p - p_fp64|).
Indicative, not a kernel: numpy's sums run in another order than any kernel's.

Transforms by Toom-Cook over the given points plus infinity, built exactly (fractions) and then rounded:
AT[i][j] = p_j^i, G[j][k] = p_j^k / N_j (N_j = prod_{l != j} (p_j - p_l)), BT = N W^-1 with W[s][j] = p_j^s.
Checked: every construction reproduces the direct convolution in FP64 (to 1e-9), or the script exits 1.

    /usr/bin/python3 results/numerics/winograd-tiles/tile_error.py [--images N] [--data FILE_OR_DIR]
"""
import argparse
import os
import sys
from fractions import Fraction as Fr

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..", "..")
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import peer_pytorch as peer  # noqa: E402  (the weight and image loaders)

BASE = [0, 1, -1, 2, -2, Fr(1, 2), Fr(-1, 2)]  # F(4, 5)'s points, as winograd_f4x5.hpp
EXTRA = {"3, 1/3": [3, -3, Fr(1, 3), Fr(-1, 3)], "4, 1/4": [4, -4, Fr(1, 4), Fr(-1, 4)],
         "3/2, 2/3": [Fr(3, 2), Fr(-3, 2), Fr(2, 3), Fr(-2, 3)], "3/4, 4/3": [Fr(3, 4), Fr(-3, 4), Fr(4, 3), Fr(-4, 3)]}


def solve(a):
    """Inverse of a square matrix of Fractions (Gauss-Jordan)."""
    n = len(a)
    m = [row[:] + [Fr(int(i == j)) for j in range(n)] for i, row in enumerate(a)]
    for c in range(n):
        p = next(r for r in range(c, n) if m[r][c] != 0)
        m[c], m[p] = m[p], m[c]
        m[c] = [x / m[c][c] for x in m[c]]
        for r in range(n):
            if r != c and m[r][c] != 0:
                m[r] = [x - m[r][c] * y for x, y in zip(m[r], m[c])]
    return [row[n:] for row in m]


def toom_cook(m, r, points):
    n = m + r - 1
    p = [Fr(x) for x in points]
    assert len(p) == n - 1, "n - 1 finite points"
    norm = [np.prod([p[j] - p[l] for l in range(n - 1) if l != j]) for j in range(n - 1)] + [Fr(1)]
    power = lambda j, s: p[j] ** s if j < n - 1 else Fr(int(s == n - 1))  # infinity: the top coefficient
    w_inv = solve([[power(j, s) for j in range(n)] for s in range(n)])
    bt = [[norm[j] * w_inv[j][t] for t in range(n)] for j in range(n)]
    at = [[p[j] ** i if j < n - 1 else Fr(int(i == m - 1)) for j in range(n)] for i in range(m)]
    g = [[p[j] ** k / norm[j] if j < n - 1 else Fr(int(k == r - 1)) for k in range(r)] for j in range(n)]
    as_float = lambda a: np.array([[float(x) for x in row] for row in a])
    return m, as_float(at), as_float(g), as_float(bt)


def bf16(x):
    """Round to nearest even BF16, kept in float32."""
    b = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    return (((b + 0x7FFF + ((b >> 16) & 1)) >> 16) << 16).astype(np.uint32).view(np.float32)


def fp16(x):
    """Round to nearest FP16, kept in float32."""
    return np.asarray(x, dtype=np.float32).astype(np.float16).astype(np.float32)


def split(x, rnd=bf16):
    hi = rnd(x)
    return hi, rnd(x - hi)


# Split products: the rounding, U's scale before its split (cuda:winograd_mma scales U by 2^10 so that its FP16 lo
# parts stay normal), which (U part, V part) products are summed (0 = hi, 1 = lo), and the transforms' data
# scale where they too run on the tensor cores: BT and AT are exact in FP16 (their entries are sums of powers
# of two up to 8), so each matrix product of a transform is 2, the data split hi + lo and summed in FP32.
PRODUCTS = {"bf16x3": (bf16, 1.0, [(0, 0), (1, 0), (0, 1)], None),
            "bf16x4": (bf16, 1.0, [(0, 0), (1, 0), (0, 1), (1, 1)], None),
            "fp16x3": (fp16, 1024.0, [(0, 0), (1, 0), (0, 1)], None),
            "fp16x2, U unsplit": (fp16, 1024.0, [(0, 0), (0, 1)], None),
            "fp16x2, V unsplit": (fp16, 1024.0, [(0, 0), (1, 0)], None),
            "fp16x3, transforms fp16x2": (fp16, 1024.0, [(0, 0), (1, 0), (0, 1)], 1.0)}


def transform(left, x, right, dtype, scale):
    """left @ x @ right.T over the last two axes: in dtype, or (scale given) as two FP16 tensor-core products per
    matrix product, x scaled by `scale`, split hi + lo, the parts' products summed in FP32."""
    if scale is None:
        return left @ x @ right.T
    times = lambda a, y: sum(a @ part for part in split(y * np.float32(scale), fp16)) / np.float32(scale)
    return times(right, times(left, x).swapaxes(-1, -2)).swapaxes(-1, -2)


def direct(x, w, b):
    pad = np.pad(x, ((0, 0), (0, 0), (2, 2), (2, 2)))
    side = x.shape[2]
    out = np.zeros((x.shape[0], w.shape[0], side, side))
    for ky in range(5):
        for kx in range(5):
            out += np.einsum("ncij,fc->nfij", pad[:, :, ky:ky + side, kx:kx + side], w[:, :, ky, kx])
    return out + b[None, :, None, None]


def winograd(x, w, b, rows, cols, dtype, products=None):
    """Tiles of rows[0] x cols[0] outputs; products: None (FP32 or FP64) or a BF16 split scheme."""
    (mh, ath, gh, bth), (mw, atw, gw, btw) = rows, cols
    side = x.shape[2]
    assert side % mh == 0 and side % mw == 0, "whole tiles"
    pad = np.pad(x, ((0, 0), (0, 0), (2, 2), (2, 2))).astype(dtype)
    u = np.einsum("ak,fckl,bl->fcab", gh, w, gw).astype(dtype)  # in FP64, then rounded, as the kernels
    ath, atw, bth, btw = (a.astype(dtype) for a in (ath, atw, bth, btw))
    out = np.zeros((x.shape[0], w.shape[0], side, side), dtype=dtype)
    for ty in range(side // mh):
        for tx in range(side // mw):
            d = pad[:, :, ty * mh:ty * mh + mh + 4, tx * mw:tx * mw + mw + 4]
            tr = PRODUCTS[products][3] if products else None
            v = transform(bth, d, btw, dtype, tr)
            if products is None:
                m = np.einsum("fcab,ncab->nfab", u, v)
            else:
                rnd, scale, terms, _ = PRODUCTS[products]
                vs, us = split(v, rnd), split(u * np.float32(scale), rnd)
                m = sum(np.einsum("fcab,ncab->nfab", us[i], vs[j]) for i, j in terms) / np.float32(scale)
            out[:, :, ty * mh:ty * mh + mh, tx * mw:tx * mw + mw] = transform(ath, m, atw, dtype, tr)
    return out.astype(np.float64) + b[None, :, None, None]


def network(images, convs, fc, conv):
    x = images
    for w, b in convs:
        y = np.maximum(conv(x, w, b), 0)
        n, c, h, s = y.shape
        x = y.reshape(n, c, h // 2, 2, s // 2, 2).max(axis=(3, 5))
    z = x.reshape(x.shape[0], -1) @ fc[0].T + fc[1]
    e = np.exp(z - z.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


def setup(description):
    """The command line (--images, --data), the weights, the images' pixels (float64, 0 .. 255) and their FP64
    probabilities; prints the header of the table."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--images", type=int, default=1200)
    ap.add_argument("--data", default=os.path.join(ROOT, "data", "cifar10"))
    args = ap.parse_args()
    convs, fc = peer.load_weights(os.path.join(ROOT, "data", "convnetjs-cifar10"))
    pixels = peer.load_images([args.data])[0][:args.images].reshape(-1, 3, 32, 32).astype(np.float64)
    ref = network(pixels / 255 - 0.5, convs, fc, direct)
    print(f"{len(ref)} images; max |p - p_fp64| over all probabilities (tolerance 1e-4)")
    return convs, fc, pixels, ref


def conv1_study(description):
    """For the studies of conv1 alone (../conv1-int8/, ../conv1-1d-winograd/): setup()'s weights, images and FP64
    probabilities, conv1's weights, conv2 and conv3 as cuda:winograd_mma runs them (F(4x4), 3 FP16 products)
    and conv1 as the kernels compute it in FP32, the baseline row."""
    convs, fc, pixels, ref = setup(description)
    f4 = toom_cook(4, 5, BASE)
    later = lambda x, w, b: winograd(x, w, b, f4, f4, np.float32, "fp16x3")  # noqa: E731
    fp32 = lambda x, w, b: direct(x.astype(np.float32), w.astype(np.float32), b).astype(np.float64)  # noqa: E731
    return convs, fc, pixels, ref, convs[0][0], later, fp32


def report(label, p, ref, width):
    """A row of the table: the largest probability error against the tolerance, and the top-1 agreement."""
    err = np.abs(p - ref).max()
    print(f"  {label:{width}s} {err:.1e}  {'within' if err <= 1e-4 else 'OVER'}; top-1 as FP64: "
          f"{np.mean(p.argmax(1) == ref.argmax(1)) * 100:.2f} %")


def main():
    convs, fc, pixels, ref = setup(__doc__.split("\n\n")[0])
    images = pixels / 255 - 0.5
    f4 = toom_cook(4, 5, BASE)
    rows = [("F(4x4), FP32: the variants' tiles", f4, f4, None)]
    for name, extra in EXTRA.items():
        rows.append((f"F(8x8), FP32, points +-{name}", toom_cook(8, 5, BASE + extra), None, None))
    for name, extra in EXTRA.items():
        rows.append((f"F(4x8), FP32, points +-{name}", f4, toom_cook(8, 5, BASE + extra), None))
    f48 = toom_cook(8, 5, BASE + EXTRA["3/4, 4/3"])
    for layer in range(3):
        rows.append((f"F(4x8) in conv{layer + 1} only, +-3/4, 4/3", f4, f48, None, {layer}))
    for scheme in ("bf16x3", "bf16x4"):
        rows.append((f"F(4x4), products in {scheme}", f4, f4, scheme))
    for scheme in ("fp16x3", "fp16x2, U unsplit", "fp16x2, V unsplit", "fp16x3, transforms fp16x2"):
        rows.append((f"F(4x4), conv2+3 products in {scheme}", f4, f4, scheme, {1, 2}))
    for label, th, tw, products, *only in rows:
        tw = tw or th
        layers = only[0] if only else {0, 1, 2}

        def conv(x, w, b, dtype, products):
            layer = next(i for i, (cw, _) in enumerate(convs) if cw is w)
            return winograd(x, w, b, th, tw, dtype, products) if layer in layers else \
                winograd(x, w, b, f4, f4, dtype)
        exact = network(images[:50], convs, fc, lambda x, w, b: conv(x, w, b, np.float64, None))
        if np.abs(exact - ref[:50]).max() > 1e-9:
            print(f"{label}: the construction is not exact in FP64", file=sys.stderr)
            return 1
        report(label, network(images, convs, fc, lambda x, w, b: conv(x, w, b, np.float32, products)), ref, 44)
    return 0


if __name__ == "__main__":
    sys.exit(main())
