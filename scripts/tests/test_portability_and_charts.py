"""Tests of the performance-portability verdict (Pennycook's metric, the cascade plot) and of what a
person reads in the charts: one colour per backend:variant, tick labels, thread counts, ratios."""

import csv
import io
import json
import shutil
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[1]
RESULTS = Path(__file__).resolve().parent / "data" / "results"
sys.path.insert(0, str(SCRIPTS))

from suitereport import analysis, charts, load, palette, portability  # noqa: E402
from tools_inprocess import run_tool  # noqa: E402


def run(tool, *args):
    """The tool, run in this process (tools_inprocess.py): what subprocess.run would return."""
    return run_tool(tool, *args)


def fixture_groups():
    return analysis.group_runs(load.all_runs(load.load_reports([RESULTS])))


def test_report_portability_table_in_every_format():
    # The fixture's two machines: AMD EPYC 2 cores (cpu/) and the H200 (its host's CPU runs none).
    r = run("report", RESULTS, "--table", "portability")
    assert r.returncode == 0, r.stderr
    assert "### Performance portability, application efficiency, 200 images" in r.stdout
    assert "| pytorch | 100.0 % | 50.0 % | 2 of 2 | 66.7 % | 66.7 % |" in r.stdout
    r = run("report", RESULTS, "--table", "portability", "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(r.stdout.split("\n\n")[0])))
    assert {"model", "eff_cpu-amd-epyc-2c", "eff_gpu-nvidia-h200", "pp", "pp_supported"} <= set(rows[0])
    r = run("report", RESULTS, "--table", "portability", "--format", "latex")
    assert r.returncode == 0 and r"PP (application)" in r.stdout


def test_plot_draws_the_cascades(tmp_path):
    r = run("plot", RESULTS, "--out", tmp_path)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "portability-application-200.png").is_file()
    assert (tmp_path / "portability-pp-application-200.png").is_file()


def test_one_colour_per_backend_variant_whatever_the_chart():
    runs = load.all_runs(load.load_reports([RESULTS]))
    palette.register(runs)
    names = sorted({r.name for r in runs})
    colours = [palette.color(n) for n in names]
    assert len(set(colours)) == len(names)  # no two series share a colour
    # a new backend (a folder no tool knows) gets its own colours too, no edit needed
    assert palette.color("sycl:naive") not in colours and palette.color("sycl:naive") == palette.color("sycl:naive")
    openmp = [palette.color(n) for n in names if n.startswith("openmp:")]
    assert len(set(openmp)) == 2


def test_tick_labels_are_short_and_thread_counts_only_on_cpu_runs():
    assert [charts.plain_number(x) for x in (50, 1200, 50000, 100000, 200000, 0.5)] == \
        ["50", "1.2k", "50k", "100k", "200k", "0.5"]
    runs = load.all_runs(load.load_reports([RESULTS]))
    gpu = next(r for r in runs if r.backend == "cuda")
    cpu = next(r for r in runs if r.backend == "openmp" and r.threads == 2)
    gpu.threads = 270336  # a Kokkos-CUDA-like launch width
    assert charts._label(gpu, True) == gpu.name
    assert charts._label(cpu, True) == "openmp:naive (2 thr)"


def test_speedups_are_one_direction_and_peers_at_the_same_thread_count(tmp_path):
    res = tmp_path / "results"
    shutil.copytree(RESULTS, res)
    data = json.loads((res / "cpu" / "pytorch-cpu.json").read_text())
    one = json.loads(json.dumps(data["runs"][0]))
    one["threads"] = 1
    one["forward_ms"]["median"] *= 2
    data["runs"].append(one)
    (res / "cpu" / "pytorch-cpu.json").write_text(json.dumps(data))
    r = run("report", res, "--table", "runs")
    assert "speedup vs X = X's forward time / this run's (above 1: faster than X)" in r.stdout
    header = next(line for line in r.stdout.splitlines() if line.startswith("| backend:variant"))
    assert "speedup vs serial:naive" in header and "speedup vs PyTorch" in header
    # openmp:tiled on 1 thread is compared with PyTorch on 1 thread (21.16 ms), not with 2 threads
    row = next(line for line in r.stdout.splitlines() if line.startswith("| openmp:tiled | CPU, 1 thread | 50 |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[10] == f"{21.16 / 56.42:.2f}×"
