#!/usr/bin/python3
"""Writes the test reports in scripts/tests/data/ (committed; run again only to change them).

data/serial.json is a real report: `suite --backend serial --images 50,200` on the developers' 2-core
machine. The others are SYNTHETIC, derived from it with made-up ratios, so that the tests and the
example charts see every case: several backends and report sets, threads 1 and 2, GPU runs with
h2d/d2h phases, the PyTorch peer without layer times. Their meta says so ("synthetic").
"""

import copy
import json
from pathlib import Path

HERE = Path(__file__).resolve().parent / "data"


def load(name):
    return json.loads((HERE / name).read_text())


def scaled_run(base, backend, variant, factor, device, threads=1, layers=True, gpu=False, accuracy=None):
    r = copy.deepcopy(base)
    r["backend"], r["variant"], r["device"], r["threads"] = backend, variant, device, threads
    fwd = r["forward_ms"]
    fwd["samples"] = [s * factor for s in fwd["samples"]]
    for k in ("min", "median", "max"):
        fwd[k] *= factor
    r["images_per_s"] /= factor
    r["gflop_per_s"] /= factor
    r["phases_ms"]["forward"] = fwd["median"]
    r["phases_ms"]["setup"] = 0.5 if gpu else 0.05
    if gpu:
        r["phases_ms"]["h2d"] = 0.004 * r["images"]
        r["phases_ms"]["d2h"] = 0.0002 * r["images"]
        r["device_info"] = {"gpu_name": "NVIDIA H200", "driver_version": "550.54"}
        r["memory_bytes"]["device_peak"] = 4096 * r["images"]
    r["phases_ms"]["total"] = sum(v for k, v in r["phases_ms"].items() if k not in ("load", "total"))
    if layers:
        r["layers_ms"] = {k: v * factor for k, v in r["layers_ms"].items()}
    else:
        r.pop("layers_ms", None)
    if accuracy is not None:
        r["accuracy"] = accuracy
    return r


def report(serial, runs, host, threads, gpu=False):
    rep = copy.deepcopy(serial)
    rep["meta"]["host"] = host
    rep["meta"]["threads"] = threads
    rep["meta"]["synthetic"] = "test data derived from data/serial.json with made-up ratios"
    if gpu:
        rep["meta"]["gpu"] = {"gpu_name": "NVIDIA H200", "driver_version": "550.54"}
        rep["meta"]["cpu_model"] = "Intel Xeon Platinum 8480C"
    rep["runs"] = runs
    return rep


def write(name, data):
    path = HERE / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")


def main():
    serial = load("serial.json")
    base = serial["runs"]
    write("results/cpu/serial.json", serial)
    for t, f in ((1, 0.8), (2, 0.42)):
        runs = []
        for b in base:
            runs.append(scaled_run(b, "openmp", "naive", f, f"CPU, {t} thread" + "s" * (t > 1), threads=t))
            runs.append(scaled_run(b, "openmp", "tiled", f / 3, f"CPU, {t} thread" + "s" * (t > 1), threads=t))
        write(f"results/cpu/openmp-t{t}.json", report(serial, runs, "vm", t))
    write("results/cpu/pytorch-cpu.json",
          report(serial, [scaled_run(b, "pytorch", "cpu", 0.05, "CPU, 2 threads", threads=2, layers=False)
                          for b in base], "vm", 2))
    gpu_runs = []
    for b in base:
        gpu_runs.append(scaled_run(b, "serial", "naive", 0.9, "CPU, 1 thread"))
        gpu_runs.append(scaled_run(b, "cuda", "naive", 0.01, "NVIDIA H200", gpu=True))
        gpu_runs.append(scaled_run(b, "cuda", "fused", 0.002, "NVIDIA H200", gpu=True, layers=False))
        gpu_runs.append(scaled_run(b, "cudnn", "fwd", 0.0025, "NVIDIA H200", gpu=True, layers=False))
    write("results/h200/suite.json", report(serial, gpu_runs, "gpu-node", 16, gpu=True))
    write("results/h200/pytorch-cuda.json",
          report(serial, [scaled_run(b, "pytorch", "cuda", 0.004, "NVIDIA H200 (cuda:0)", gpu=True, layers=False)
                          for b in base], "gpu-node", 16, gpu=True))
    # Skipped by a folder scan: results/local/ (private runs) and JSON that is no suite report.
    broken = copy.deepcopy(serial)
    broken["schema_version"] = 99
    write("results/local/private.json", broken)
    write("results/cpu/gbench-output.json", {"context": {"caches": []}, "benchmarks": []})
    # Bad input, one file per case.
    (HERE / "bad").mkdir(exist_ok=True)
    (HERE / "bad/not-json.json").write_text("{ this is not json\n")
    (HERE / "bad/empty-file.json").write_text("")
    wrong = copy.deepcopy(serial)
    wrong["schema_version"] = 2
    write("bad/wrong-schema.json", wrong)
    empty = copy.deepcopy(serial)
    empty["runs"] = []
    write("bad/empty-runs.json", empty)
    no_backend = copy.deepcopy(serial)
    del no_backend["runs"][0]["backend"]
    write("bad/run-without-backend.json", no_backend)
    write("bad/not-a-report.json", [1, 2, 3])


if __name__ == "__main__":
    main()
