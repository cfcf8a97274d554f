#!/usr/bin/python3
"""1000 images the project does not carry, in CIFAR-10's binary layout: 500 mirrored, 250 shifted by 3 pixels
(both axes, wrapped) from a seeded random pick of data/cifar10's 4000, and 250 of uniform noise.
    /usr/bin/python3 results/ab/h200-conv1-rows/make_unseen.py OUT.bin"""
import sys

import numpy as np

raw = np.fromfile("data/cifar10/data_batch_1.bin", dtype=np.uint8).reshape(-1, 3073)
rng = np.random.default_rng(28)
pick = raw[rng.choice(len(raw), 750, replace=False)].copy()
img = pick[:, 1:].reshape(-1, 3, 32, 32)
mirrored = img[:500, :, :, ::-1]
shifted = np.roll(np.roll(img[500:750], 3, axis=3), 3, axis=2)
noise = rng.integers(0, 256, (250, 3, 32, 32), dtype=np.uint8)
pixels = np.concatenate([mirrored, shifted, noise]).reshape(-1, 3072)
labels = np.concatenate([pick[:, 0], rng.integers(0, 10, 250).astype(np.uint8)])
np.concatenate([labels[:, None], pixels], axis=1).astype(np.uint8).tofile(sys.argv[1])
