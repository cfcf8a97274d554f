#!/usr/bin/python3
"""How far from FP64 the network's probabilities land when conv1 runs as a one-dimensional Winograd F(m, 5) along
x and a direct sum along y (numpy emulation): per output row segment of m pixels, each of the m + 4 transformed
positions is one GEMM whose K is (channel, ky), 3 x 5 = 15, one tensor-core K step of 16; its products in
3xFP16 (U scaled by 2^10 before its split, as cuda:winograd_mma's conv2 and conv3), or in FP32. conv2 and conv3
as cuda:winograd_mma runs them (F(4x4), 3 FP16 products, tile_error.py). The suite's tolerance is 1e-4
(max |p - p_fp64|).

Why: conv1 as a direct implicit GEMM pads K = 75 to 80 and needs 2 FP16 products (pixels exact): 160 products
per output and filter. F(4, 5) along x needs 8 positions x 16 K per 4 outputs, 3 products (V is not exact in
FP16): 96, 1.67x fewer; F(2, 5): 144.

    /usr/bin/python3 results/numerics/conv1-1d-winograd/conv1_1d_error.py [--images N] [--data FILE_OR_DIR]
"""
import os
import sys
from fractions import Fraction as Fr

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "winograd-tiles"))
import tile_error as te  # noqa: E402  (the loaders, the network, Toom-Cook, Winograd with FP16 products)

# A direct sum along y as a "transform": one output row from 5 input rows, U = w, V = d, out = sum over ky.
DIRECT_Y = (1, np.ones((1, 5)), np.eye(5), np.eye(5))


def main():
    convs, fc, pixels, ref, w1, later, fp32 = te.conv1_study(__doc__.split("\n\n")[0])
    f4 = te.toom_cook(4, 5, te.BASE)
    rows = [("conv1 direct in FP32 (the kernels' accuracy)", fp32, None),
            ("conv1 2D F(4x4) in FP32 (serial:winograd)", lambda x, w, b: te.winograd(x, w, b, f4, f4, np.float32),
             None)]
    for label, fx in (("F(4,5) along x, points 0 +-1 +-2 +-1/2", f4),
                      ("F(2,5) along x, points 0 +-1 +-1/2", te.toom_cook(2, 5, [0, 1, -1, Fr(1, 2), Fr(-1, 2)]))):
        for products in (None, "fp16x3", "fp16x2, V unsplit"):
            rows.append((f"conv1 {label}, {products or 'FP32'}",
                         lambda x, w, b, fx=fx, pr=products: te.winograd(x, w, b, DIRECT_Y, fx, np.float32, pr),
                         (fx, products)))
    for label, first, construction in rows:
        if construction:  # the transform itself is exact: FP64 reproduces the direct convolution
            fx = construction[0]
            x = pixels[:20] / 255 - 0.5
            exact = te.winograd(x, w1, convs[0][1], DIRECT_Y, fx, np.float64)
            if np.abs(exact - te.direct(x, w1, convs[0][1])).max() > 1e-9:
                print(f"{label}: the construction is not exact in FP64", file=sys.stderr)
                return 1
        p = te.network(pixels / 255 - 0.5, convs, fc, lambda x, w, b: first(x, w, b) if w is w1 else later(x, w, b))
        te.report(label, p, ref, 64)
    return 0


if __name__ == "__main__":
    sys.exit(main())
