"""Tests of scripts/report, plot, compare and make-results-readme on the reports in data/
(data/serial.json is a real report; the rest is synthetic, see make_fixtures.py)."""

import copy
import csv
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[1]
DATA = Path(__file__).resolve().parent / "data"
RESULTS = DATA / "results"
SERIAL = DATA / "serial.json"
sys.path.insert(0, str(SCRIPTS))

from suitereport import analysis, load, tables  # noqa: E402
from tools_inprocess import TOOLS as IN_PROCESS_TOOLS, run_tool  # noqa: E402


def run(tool, *args, cwd=None):
    """The tool, run in this process (tools_inprocess.py): what subprocess.run would return."""
    return run_tool(tool, *args, cwd=cwd)


def run_program(tool, *args):
    return subprocess.run([str(SCRIPTS / tool), *map(str, args)], capture_output=True, text=True, timeout=120)


def write_report(path, data):
    path.write_text(json.dumps(data))
    return path


def scaled(src, factor, path):
    """A copy of src with every forward time multiplied by factor."""
    data = json.loads(src.read_text())
    for r in data["runs"]:
        for k in ("min", "median", "max"):
            r["forward_ms"][k] *= factor
        r["forward_ms"]["samples"] = [s * factor for s in r["forward_ms"]["samples"]]
    return write_report(path, data)


# ---- the scripts as programs (every other test runs the tools in this process: tools_inprocess.py)


TOOLS = tuple(IN_PROCESS_TOOLS)  # every tool the other tests run in-process also runs once as a program


def test_scripts_are_executable_and_use_debians_python():
    for tool in TOOLS:
        path = SCRIPTS / tool
        assert path.stat().st_mode & 0o111, tool
        assert path.read_text().startswith("#!/usr/bin/python3\n"), tool
        r = run_program(tool, "--help")
        assert r.returncode == 0, (tool, r.stderr)
        assert r.stdout.startswith(f"usage: {tool} ") and r.stderr == "", (tool, r.stdout, r.stderr)


@pytest.mark.parametrize("tool, args", [
    ("report", ("--format", "xml", SERIAL)),  # a usage error (argparse)
    ("compare", (SERIAL, DATA / "bad" / "wrong-schema.json")),  # a bad report (ReportError)
    ("history", ("plot",)),  # a usage error of a subcommand (no --out): its prog is "history plot"
])
def test_errors_are_the_same_in_process_as_from_the_program(tool, args):
    program, here = run_program(tool, *args), run(tool, *args)
    assert program.returncode == 2 and len(program.stderr.splitlines()) == 1, program.stderr
    assert (here.returncode, here.stdout, here.stderr) == (program.returncode, program.stdout, program.stderr)


def without_packages(tmp_path, *packages):
    """The environment of a machine without these Python packages (the GPU machine has neither matplotlib nor
    numpy): a PYTHONPATH folder where each of them fails to import as a missing package does."""
    folder = tmp_path / "without"
    for name in packages:
        (folder / name).mkdir(parents=True)
        (folder / name / "__init__.py").write_text(f"raise ModuleNotFoundError(\"No module named '{name}'\", "
                                                   f"name='{name}')\n")
    return {**os.environ, "PYTHONPATH": str(folder)}


def test_tables_need_no_matplotlib_and_what_is_missing_is_one_line(tmp_path):
    def program(env, tool, *args):
        return subprocess.run([str(SCRIPTS / tool), *map(str, args)], capture_output=True, text=True, timeout=120,
                              env=env)

    # tables: without any of the three, the same as with them
    bare = without_packages(tmp_path, "matplotlib", "numpy", "scipy")
    r = program(bare, "report", "--format", "csv", SERIAL)
    assert (r.returncode, r.stderr, r.stdout) == (0, "", run("report", "--format", "csv", SERIAL).stdout)
    # the portability verdict's tables need numpy (the peers' rule), not matplotlib; its charts do
    no_charts = without_packages(tmp_path / "charts", "matplotlib")
    r = program(no_charts, "report", "--portability", RESULTS)
    assert r.returncode == 0 and r.stdout == run("report", "--portability", RESULTS).stdout, r.stderr
    for env, missing, tool, args in (
            (no_charts, "matplotlib", "report", ("--portability", RESULTS, "--out", tmp_path / "verdict")),
            (no_charts, "matplotlib", "plot", ("--out", tmp_path / "png", SERIAL)),
            (bare, "numpy", "compare", (SERIAL, SERIAL)),
            (bare, "numpy", "history", ("steps",))):
        r = program(env, tool, *args)
        assert r.returncode == 2 and r.stdout == "", (tool, r.stdout, r.stderr)
        errors = [line for line in r.stderr.splitlines() if not line.startswith("note: ")]  # notes: the folder's
        assert errors == [f"{tool}: error: needs the Python package {missing}, which is not installed here (Debian: "
                          f"python3-{missing}; scripts/deps/reports.txt lists what the report tools need)"], r.stderr
    assert not (tmp_path / "verdict").exists() and not (tmp_path / "png").exists()  # nothing made


def test_a_missing_module_of_the_tools_themselves_is_no_missing_package():
    """A module of suitereport that is gone is a broken checkout, a traceback to report, never "install it"."""
    from suitereport import cli

    def main(argv):
        raise ModuleNotFoundError("No module named 'suitereport.gone'", name="suitereport.gone")
    with pytest.raises(ModuleNotFoundError):
        cli.run("report", main, [])


# ---- scripts/report


def test_report_markdown_tables_with_speedups_over_the_named_baselines():
    r = run("report", RESULTS)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "### Forward pass — AMD EPYC, 2 cores" in out
    assert "### Forward pass — Intel Xeon Platinum 8480C, 2 cores + NVIDIA H200" in out
    assert "### Per-layer breakdown — AMD EPYC, 2 cores" in out
    assert "### Phases — Intel Xeon Platinum 8480C, 2 cores + NVIDIA H200" in out  # GPU runs have h2d/d2h
    row = next(line for line in out.splitlines() if line.startswith("| cuda:fused | NVIDIA H200 | 200 |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    # x serial:naive (0.9 / 0.002), x cuDNN (0.0025 / 0.002), x PyTorch cuda (0.004 / 0.002)
    assert cells[8:11] == ["450×", "1.25×", "2.00×"]
    assert "speedups at 200 images: serial:naive (692.3 ms); cuDNN GPU = cudnn:fwd (1.923 ms); " \
           "PyTorch GPU = pytorch:cuda (3.077 ms)" in out
    # CPU runs: no cuDNN column value, PyTorch = pytorch:cpu of the same machine
    row = next(line for line in out.splitlines() if line.startswith("| openmp:tiled | CPU, 2 threads | 200 |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[8:11] == ["7.14×", "–", "0.36×"]
    # results/local/ and results/ab/ are never read (their reports have schema_version 99); non-reports are
    # skipped, said so
    assert "local" not in out and "ab/old" not in out and "ab/old" not in r.stderr
    assert "skipping" in r.stderr and "gbench-output.json" in r.stderr


def test_report_speedups_only_within_one_machine_and_image_count():
    # serial:naive exists on both machines with different times: each machine uses its own.
    r = run("report", RESULTS, "--table", "runs")
    assert "serial:naive (211.6 ms)" in r.stdout  # cpu, 50 images
    assert "serial:naive (190.5 ms)" in r.stdout  # h200, 50 images
    # the h200 serial run is 0.9 of the cpu one: a mix-up would show 1.11x or 0.90x for serial itself
    assert "| serial:naive | CPU, 1 thread | 50 | 1 | 1 | 190.5 | 263 | 2.06 | 1.00× |" in r.stdout

def test_speedups_are_over_the_fastest_valid_baseline_and_peer(tmp_path):
    """Of several runs of the baseline or a peer at one image count (other batches), the speedup is over the
    fastest that passed validation (a peer that does not validate counts as it is); a failed run is faster
    here, and is never what a speedup is taken over."""
    data = json.loads(SERIAL.read_text())
    template = data["runs"][0]  # serial:naive, 50 images, 1 thread, 211.6 ms
    for backend, variant, batch, ms, passed in (("serial", "naive", 4, 150.0, True),
                                               ("serial", "naive", 8, 100.0, False),
                                               ("pytorch", "cpu", 1, 40.0, None),
                                               ("pytorch", "cpu", 4, 20.0, False),
                                               ("pytorch", "cpu", 8, 60.0, True)):
        r = copy.deepcopy(template)
        r.update(backend=backend, variant=variant, batch=batch)
        r["forward_ms"] = {"min": ms, "median": ms, "max": ms, "samples": [ms]}
        r.pop("images_per_s", None)
        if passed is None:
            r.pop("validation")
        else:
            r["validation"] = dict(r["validation"], passed=passed)
        data["runs"].append(r)
    data["runs"] = [r for r in data["runs"] if r["images"] == 50]
    path = write_report(tmp_path / "batches.json", data)
    [group] = analysis.group_runs(load.all_runs(load.load_reports([path])))
    serial = group.runs[0]
    assert analysis.baseline_run(group, 50).forward_ms == 150.0
    assert analysis.peer_run(group, "pytorch", serial).forward_ms == 40.0
    r = run("report", path, "--table", "runs")
    assert "serial:naive (150.0 ms); PyTorch CPU 1 thr = pytorch:cpu (40.00 ms)" in r.stdout, r.stdout


def test_report_csv_is_flat_and_machine_readable():
    r = run("report", RESULTS, "--format", "csv", "--table", "runs")
    assert r.returncode == 0, r.stderr
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    assert len(rows) == 22
    assert {"machine", "backend:variant", "images", "forward_ms_median", "images_per_s", "speedup_vs_serial_naive",
            "speedup_vs_cudnn", "speedup_vs_pytorch", "accuracy"} <= set(rows[0])
    fused = [x for x in rows if x["backend:variant"] == "cuda:fused" and x["images"] == "200"][0]
    assert float(fused["speedup_vs_serial_naive"]) == pytest.approx(450)
    assert float(fused["forward_ms_median"]) == pytest.approx(1.5384, rel=1e-3)
    assert rows[0]["speedup_vs_cudnn"] == ""  # no baseline: empty, not a dash


def test_report_csv_all_tables_are_separated_by_a_blank_line():
    r = run("report", SERIAL, "--format", "csv")
    blocks = r.stdout.strip().split("\n\n")
    assert len(blocks) == 2  # runs, layers (no device phases)
    assert blocks[1].startswith("machine,backend:variant,images,threads,conv_ms")


def test_report_latex_is_booktabs_with_escapes():
    r = run("report", RESULTS, "--format", "latex")
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert out.count(r"\begin{table}") == out.count(r"\end{table}") >= 4
    assert r"\toprule" in out and r"\midrule" in out and r"\bottomrule" in out
    assert r"speedup vs serial:naive" in out and r"$\Sigma$ layers ms" in out
    assert r"80.00 \%" in out  # % escaped
    assert "×" not in out and "Σ" not in out and "–" not in out  # only ASCII LaTeX
    body = out.replace(r"\{", "").replace(r"\}", "")
    assert body.count("{") == body.count("}")


def test_report_image_filter_and_table_choice():
    r = run("report", RESULTS, "--images", "50", "--table", "layers")
    assert r.returncode == 0, r.stderr
    assert "| 200 |" not in r.stdout and "| serial:naive | 50 |" in r.stdout
    assert "Forward pass" not in r.stdout
    r = run("report", RESULTS, "--images", "7")
    assert r.returncode == 2 and r.stderr.splitlines()[-1] == "report: error: no run with --images 7"


def test_newest_duplicate_wins(tmp_path):
    old = json.loads(SERIAL.read_text())
    new = copy.deepcopy(old)
    new["meta"]["date_utc"] = "2030-01-01T00:00:00Z"
    for r in new["runs"]:
        r["forward_ms"]["median"] = 100.0
    write_report(tmp_path / "a.json", new)
    write_report(tmp_path / "b.json", old)
    groups = analysis.group_runs(load.all_runs(load.load_reports([tmp_path])))
    assert len(groups) == 1 and groups[0].superseded == 2
    assert [r.forward_ms for r in groups[0].runs] == [100.0, 100.0]
    r = run("report", tmp_path)
    assert "2 older run(s) of the same configuration left out" in r.stdout


def test_phases_show_end_to_end_against_the_slower_of_compute_and_link(tmp_path):
    data = json.loads(SERIAL.read_text())
    data["runs"] = data["runs"][:1]
    data["runs"][0]["phases_ms"].update({"h2d": 18.0, "forward": 2.5, "d2h": 0.2, "end_to_end": 3.22,
                                         "h2d_pinned": 2.8})
    write_report(tmp_path / "gpu.json", data)
    r = run("report", tmp_path, "--table", "phases")
    assert r.returncode == 0, r.stderr
    assert "| end_to_end / floor |" in r.stdout and "| 2.800 | 1.15× |" in r.stdout  # 3.22 / 2.8: the link's
    phases = {"forward": 4.0, "end_to_end": 4.4, "h2d_pinned": 2.8}
    assert tables.end_to_end_over_floor(phases) == pytest.approx(1.1)  # 4.4 / 4.0: the compute's
    for missing in ("forward", "end_to_end", "h2d_pinned"):
        assert tables.end_to_end_over_floor({k: v for k, v in phases.items() if k != missing}) is None


# ---- bad input: one clear line on stderr, exit 2, for every tool


BAD = {
    "missing": (DATA / "bad" / "no-such-file.json", "no such file or folder"),
    "not json": (DATA / "bad" / "not-json.json", "not JSON (line 1 column 3"),
    "empty file": (DATA / "bad" / "empty-file.json", "empty file, not a report"),
    "wrong schema": (DATA / "bad" / "wrong-schema.json", "schema_version 2 is not supported"),
    "empty report": (DATA / "bad" / "empty-runs.json", "the report has no runs"),
    "not a report": (DATA / "bad" / "not-a-report.json", "not a suite report (no schema_version)"),
    "bad run": (DATA / "bad" / "run-without-backend.json", "runs[0]: missing or empty 'backend'"),
}


@pytest.mark.parametrize("case", sorted(BAD))
@pytest.mark.parametrize("tool", ["report", "plot", "compare-new", "compare-base"])
def test_bad_input_is_one_line_and_exit_2(case, tool, tmp_path):
    path, message = BAD[case]
    if tool == "report":
        r = run("report", path)
    elif tool == "plot":
        r = run("plot", path, "--out", tmp_path)
    elif tool == "compare-new":
        r = run("compare", SERIAL, path)
    else:
        r = run("compare", path, SERIAL)
    prog = tool.split("-")[0]
    assert r.returncode == 2, r.stdout + r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith(f"{prog}: error: ") and path.name in lines[0] and message in lines[0], lines[0]
    assert "Traceback" not in r.stderr


def test_bad_report_in_a_folder_stops_unless_skipped(tmp_path):
    shutil.copy(SERIAL, tmp_path / "good.json")
    shutil.copy(DATA / "bad" / "wrong-schema.json", tmp_path / "bad.json")
    r = run("report", tmp_path)
    assert r.returncode == 2 and "bad.json: schema_version 2" in r.stderr
    out = tmp_path / "res"
    shutil.copytree(tmp_path, out, ignore=shutil.ignore_patterns("res"))
    r = run("make-results-readme", "--results", out, "--skip-bad")
    assert r.returncode == 0, r.stderr
    assert "note: skipping" in r.stderr and "bad.json" in r.stderr


def test_usage_errors_and_a_folder_without_reports(tmp_path):
    r = run("report", tmp_path)
    assert r.returncode == 2 and r.stderr.strip() == f"report: error: {tmp_path}: no suite reports found"
    r = run("report", "--format", "xml", SERIAL)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "invalid choice" in r.stderr


# ---- scripts/compare: the regression gate


def test_compare_flags_an_injected_20_percent_slowdown(tmp_path):
    slow = scaled(SERIAL, 1.20, tmp_path / "slow.json")
    r = run("compare", SERIAL, slow)
    assert r.returncode == 1, r.stdout + r.stderr
    assert ("| serial:naive/images:50/threads:1 | 211.6 | 254.0 | +20.0 % | +14.6 % … +25.7 % | 0.004 "
            "| 5 v 5 passes | SLOWER |") in r.stdout  # 5 passes a side: tested
    assert ("| serial:naive/images:200/threads:1 | 769.2 | 923.1 | +20.0 % | – | – | medians "
            "| SLOWER (medians only) |") in r.stdout  # 2 passes a side: too few to test
    assert "FAIL: 2 of 2 benchmark(s) slower than +10 % beyond noise" in r.stdout


def test_compare_passes_an_unchanged_pair_and_small_noise(tmp_path):
    r = run("compare", SERIAL, SERIAL)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "+0.0 % | -4.5 % … +4.7 % | 0.54 | 5 v 5 passes | ok |" in r.stdout and "OK: 0 of 2" in r.stdout
    noisy = scaled(SERIAL, 1.05, tmp_path / "noisy.json")
    assert run("compare", SERIAL, noisy).returncode == 0
    assert run("compare", SERIAL, noisy, "--threshold", "3%").returncode == 1
    assert run("compare", SERIAL, noisy, "--threshold", "4").returncode == 1  # plain number: percent
    faster = scaled(SERIAL, 0.5, tmp_path / "faster.json")
    r = run("compare", SERIAL, faster)
    assert r.returncode == 0 and "| -50.0 % | -52.3 % … -47.6 % | 1 | 5 v 5 passes | faster |" in r.stdout


def test_compare_folders_and_benchmarks_on_one_side_only(tmp_path):
    base, new = tmp_path / "base", tmp_path / "new"
    shutil.copytree(RESULTS / "cpu", base)
    shutil.copytree(RESULTS / "cpu", new)
    (new / "pytorch-cpu.json").unlink()
    scaled(RESULTS / "cpu" / "openmp-t2.json", 1.3, new / "openmp-t2.json")
    r = run("compare", base, new)
    assert r.returncode == 1
    assert ("| openmp:tiled/images:200/threads:2 | 107.7 | 140.0 | +30.0 % | – | – | medians "
            "| SLOWER (medians only) |") in r.stdout
    assert ("| openmp:tiled/images:200/threads:1 | 205.1 | 205.1 | +0.0 % | – | – | medians "
            "| ok (medians only) |") in r.stdout
    assert "| pytorch:cpu/images:50/threads:2 | 10.58 | – | – | – | – | – | only in BASE |" in r.stdout
    assert "4 of 10 benchmark(s) slower" in r.stdout and "not compared: 2 only in BASE, 0 only in NEW" in r.stdout


def test_compare_fails_on_a_run_that_failed_validation(tmp_path):
    data = json.loads(SERIAL.read_text())
    data["runs"][0]["validation"]["passed"] = False
    r = run("compare", SERIAL, write_report(tmp_path / "invalid.json", data))
    assert r.returncode == 1 and "INVALID (validation failed)" in r.stdout


def test_compare_csv_and_bad_threshold_and_nothing_in_common(tmp_path):
    r = run("compare", SERIAL, SERIAL, "--format", "csv")
    assert r.returncode == 0
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    assert rows[0]["benchmark"] == "serial:naive/images:50/threads:1" and float(rows[0]["delta"]) == 0.0
    assert float(rows[0]["p_slower"]) == pytest.approx(0.5, abs=0.1) and rows[1]["p_slower"] == ""
    r = run("compare", SERIAL, SERIAL, "--threshold", "ten")
    assert r.returncode == 2 and r.stderr.strip() == \
        "compare: error: --threshold 'ten': expected a percentage such as 10% or 2.5%"
    other = json.loads(SERIAL.read_text())
    for x in other["runs"]:
        x["images"] += 1
    r = run("compare", SERIAL, write_report(tmp_path / "other.json", other))
    assert r.returncode == 2 and "no benchmark in common" in r.stderr


# ---- scripts/plot and make-results-readme


def png_size(path):
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", path
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")


def test_plot_draws_every_chart_the_data_supports(tmp_path):
    r = run("plot", RESULTS, "--out", tmp_path)
    assert r.returncode == 0, r.stderr
    names = sorted(p.name for p in tmp_path.glob("*.png"))
    cpu, gpu = "cpu-amd-epyc-2c", "cpu-intel-xeon-platinum-8480c-2c-nvidia-h200"
    assert names == [f"{cpu}-images.png", f"{cpu}-layers.png", f"{cpu}-speedup.png", f"{cpu}-threads.png",
                     f"{cpu}-time.png", f"{gpu}-images.png", f"{gpu}-layers.png", f"{gpu}-speedup.png",
                     f"{gpu}-time.png",
                     "portability-application-200.png", "portability-application-50.png",
                     "portability-pp-application-200.png", "portability-pp-application-50.png"]
    # no architectural charts: the fixture reports predate the executed-FLOP record (`arithmetic`)
    for p in tmp_path.glob("*.png"):
        w, h = png_size(p)
        assert 400 < w < 2000 and 200 < h < 1500, (p.name, w, h)
    # one image count, no threads: no scaling charts; no serial:naive, no speedup chart
    only = tmp_path / "only"
    data = json.loads((RESULTS / "h200" / "pytorch-cuda.json").read_text())
    data["runs"] = data["runs"][:1]
    r = run("plot", write_report(tmp_path / "one.json", data), "--out", only)
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in only.glob("*.png")) == [f"{gpu}-time.png"]


def test_make_results_readme_tables_charts_and_determinism(tmp_path):
    res = tmp_path / "results"
    shutil.copytree(RESULTS, res)
    (res / "charts").mkdir()
    (res / "charts" / "stale.png").write_bytes(b"old")
    r = run("make-results-readme", "--results", res)
    assert r.returncode == 0, r.stderr
    text = (res / "README.md").read_text()
    assert text.startswith("# Results\n")
    assert "## AMD EPYC, 2 cores" in text and "## Intel Xeon Platinum 8480C, 2 cores + NVIDIA H200" in text
    assert "![Forward time per backend, AMD EPYC, 2 cores](charts/cpu-amd-epyc-2c-time.png)" in text
    assert "`cpu/serial.json`" in text and "**synthetic test data**" in text
    assert "local/" not in text.split("## How this page is made")[0]
    for link in [line.split("](")[1].rstrip(")") for line in text.splitlines() if line.startswith("![")]:
        assert (res / link).is_file(), link
    assert not (res / "charts" / "stale.png").exists()
    before = {p.name: p.read_bytes() for p in (res / "charts").glob("*.png")}
    assert run("make-results-readme", "--results", res).returncode == 0
    assert (res / "README.md").read_text() == text
    assert {p.name: p.read_bytes() for p in (res / "charts").glob("*.png")} == before


def test_make_results_readme_with_no_reports(tmp_path):
    (tmp_path / "local").mkdir()
    shutil.copy(SERIAL, tmp_path / "local" / "mine.json")
    (tmp_path / "charts").mkdir()
    (tmp_path / "charts" / "gone.png").write_bytes(b"old")
    r = run("make-results-readme", "--results", tmp_path)
    assert r.returncode == 0, r.stderr
    assert "No reports are committed yet." in (tmp_path / "README.md").read_text()
    assert not (tmp_path / "charts").exists()  # and the charts of reports that are gone with their folder



def test_a_results_readme_source_line_shows_the_reports_fields_as_they_are(tmp_path):
    # A commit is shown at 10 characters; "(dirty)" only for git_dirty true, never for the string "true";
    # no compiler is no empty cell; missing fields read "no date" and "unknown".
    from types import SimpleNamespace
    from suitereport import readme_main
    runs = [SimpleNamespace(name="serial:naive")] * 2 + [SimpleNamespace(name="openmp:<b>x</b>")]

    def line(**meta):
        rep = SimpleNamespace(meta=meta, path=tmp_path / "cpu" / "a.json", runs=runs)
        return readme_main._source_line(rep, tmp_path)
    assert line(git_commit="0123456789abcdef", git_dirty=True, compiler={"id": "GNU", "version": "12.2"},
                date_utc="2026-01-02T00:00:00Z") == ("- `cpu/a.json`, 2026-01-02T00:00:00Z, commit 0123456789 "
                                                     "(dirty), GNU 12.2: 3 run(s) of openmp:&lt;b&gt;x&lt;/b&gt;, "
                                                     "serial:naive")
    assert line(git_dirty="true") == "- `cpu/a.json`, no date, commit unknown: 3 run(s) of " \
        "openmp:&lt;b&gt;x&lt;/b&gt;, serial:naive"
    assert readme_main._code("a`b\nc") == "`a'b c`"  # one line, no backtick to end the span early


def test_a_results_readme_has_no_empty_portability_or_history_section(tmp_path):
    from suitereport import readme_main
    assert readme_main._portability_section([], tmp_path, tmp_path / "c", tmp_path / "d") == []
    (tmp_path / "history").mkdir()
    (tmp_path / "history" / "store.jsonl").write_text("")
    assert readme_main._history_section(tmp_path, tmp_path / "c", tmp_path / "d", {}) == []


def test_make_results_readme_shows_a_thread_scaling_without_an_image_scaling(tmp_path):
    data = json.loads(SERIAL.read_text())
    data["runs"] = [data["runs"][0], dict(data["runs"][0], threads=2)]  # one image count, two thread counts
    res = tmp_path / "results"
    res.mkdir()
    write_report(res / "threads.json", data)
    r = run("make-results-readme", "--results", res)
    assert r.returncode == 0, r.stderr
    text = (res / "README.md").read_text()
    assert "### Scaling — " in text and "![Scaling with threads, " in text and "Scaling with image count" not in text


def test_make_results_readme_bad_results_folders_are_one_line(tmp_path):
    r = run("make-results-readme", "--results", "", cwd=tmp_path)
    assert r.returncode == 2 and "--results: an empty folder name" in r.stderr, r.stderr
    assert not (tmp_path / "README.md").exists()
    r = run("make-results-readme", "--results", tmp_path / "missing")
    assert r.returncode == 2 and r.stderr.strip().endswith("missing: no such folder"), r.stderr


def test_make_results_readme_replaces_a_verdict_file_it_cannot_read_as_text(tmp_path):
    # results/verdict/verdict-5.json that is not UTF-8 is no suite report: not a reason to stop.
    (tmp_path / "verdict").mkdir()
    (tmp_path / "verdict" / "verdict-5.json").write_bytes(b"\xff\xfe")
    r = run("make-results-readme", "--results", tmp_path)
    assert r.returncode == 0, r.stderr

def test_a_machine_is_its_hardware_not_its_host_name_nor_its_folder(tmp_path):
    h200 = tmp_path / "h200"
    shutil.copytree(RESULTS / "h200", h200)
    data = json.loads((h200 / "pytorch-cuda.json").read_text())
    data["meta"]["host"] = "gpu-node.cluster"
    write_report(h200 / "pytorch-cuda.json", data)
    r = run("report", tmp_path, "--table", "runs")
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("### Forward pass") == 1
    assert "PyTorch GPU = pytorch:cuda (3.077 ms)" in r.stdout
    assert "several hosts (gpu-node.cluster, gpu-node)" in r.stdout  # in file order
    # given one by one, the same files are still one machine: the same CPU, cores and GPU
    r = run("report", h200 / "suite.json", h200 / "pytorch-cuda.json", "--table", "runs")
    assert r.stdout.count("### Forward pass") == 1 and "PyTorch GPU = pytorch:cuda" in r.stdout
    # the same hardware with another core count is another machine, whatever the folder
    data["meta"]["logical_cores"] = 16
    write_report(h200 / "pytorch-cuda.json", data)
    r = run("report", tmp_path, "--table", "runs")
    assert r.stdout.count("### Forward pass") == 2
