#!/usr/bin/python3
"""The ncu metrics of cuda:winograd_mma's kernels, per layer, from `ncu --csv --metrics ...` output files (what
the GPU A/B scripts under results/ab/ print at their end). A layer is conv1 (any conv1 kernel), conv2
(winograd_layer_kernel<2, ...>) or conv3; each metric's values in kernel order.
    /usr/bin/python3 results/ab/ncu_layers.py LABEL=FILE.csv ..."""
import csv
import io
import sys


def layer(kernel):
    return "conv1" if "conv1" in kernel else ("conv2" if "winograd_layer_kernel<2" in kernel else "conv3")


def main(args):
    for arg in args:
        label, _, path = arg.partition("=")
        text = open(path).read()
        if '"ID"' not in text:  # ncu failed: its last words instead
            print(label, "ncu: no table:", text[-400:])
            continue
        rows = list(csv.reader(io.StringIO(text[text.find('"ID"'):])))
        head, rows = rows[0], rows[1:]
        k, m, val = head.index("Kernel Name"), head.index("Metric Name"), head.index("Metric Value")
        got = {}
        for r in rows:
            got.setdefault((layer(r[k]), r[m]), []).append(r[val])
        for (name, metric), values in sorted(got.items()):
            print(label, name, metric, values)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
