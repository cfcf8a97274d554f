"""Tests of what the report tools do with hostile or broken input and output paths (the failure table
"The report tools" in the top-level README): links at temporary names, devices and FIFOs, oversized
files, NaN and Infinity, crafted numbers, bad output paths, a gate that must not pass garbage, reports
of different platforms, of a busy machine, of a peer. Each test failed before its fix."""

import copy
import importlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
import tracemalloc
import types
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[1]
REPO = SCRIPTS.parent
DATA = Path(__file__).resolve().parent / "data"
RESULTS = DATA / "results"
SERIAL = DATA / "serial.json"
sys.path.insert(0, str(SCRIPTS))

from suitereport import gate, safe_io  # noqa: E402
from tools_inprocess import TOOLS, run_tool as run  # noqa: E402


def serial():
    return json.loads(SERIAL.read_text())


def write(path, data):
    path.write_text(json.dumps(data))  # json writes NaN and Infinity as the bare tokens Python reads
    return path


def one_error_line(r, prog):
    """The tool failed with exit 2 and one line `prog: error: ...`, no traceback; returns the line."""
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    lines = [line for line in r.stderr.strip().splitlines() if not line.startswith("note: ")]
    assert len(lines) == 1 and lines[0].startswith(f"{prog}: error: "), r.stderr
    return lines[0]


def leftovers(folder):
    """Files a failed write may have left: safe_io's `.<name>.*.tmp`, the old fixed names, staging."""
    return sorted(p.name for p in Path(folder).iterdir()
                  if p.name.endswith(".tmp") or ".tmp." in p.name or p.name.startswith(".charts-"))


# ---- 1. no write follows a link planted at a name the tool writes


def test_make_results_readme_does_not_follow_a_link_at_its_old_temporary_name(tmp_path):
    res = tmp_path / "results"
    shutil.copytree(RESULTS / "cpu", res / "cpu")
    victim = tmp_path / "victim.txt"
    victim.write_text("not yours\n")
    (res / "README.md.tmp.readme").symlink_to(victim)  # the name it used to write and rename
    r = run("make-results-readme", "--results", res)
    assert r.returncode == 0, r.stderr
    assert victim.read_text() == "not yours\n"
    assert (res / "README.md").read_text().startswith("# Results\n") and not (res / "README.md").is_symlink()


def test_plot_does_not_write_through_a_link_at_a_chart_name(tmp_path):
    out = tmp_path / "charts"
    out.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("not yours\n")
    (out / "cpu-amd-epyc-2c-time.png").symlink_to(victim)  # savefig(path) wrote the PNG into victim
    r = run("plot", SERIAL, "--out", out)
    assert victim.read_text() == "not yours\n"
    line = one_error_line(r, "plot")
    assert "cpu-amd-epyc-2c-time.png: is a symbolic link" in line
    assert leftovers(out) == []


def test_peer_pytorch_does_not_follow_a_link_at_output_tmp(tmp_path, monkeypatch):
    # peer_pytorch imports torch (absent here): a stand-in module is enough to reach write_output.
    torch = types.ModuleType("torch")
    torch.nn = types.SimpleNamespace(Module=object)  # the base of its two module-level classes
    monkeypatch.setitem(sys.modules, "torch", torch)
    monkeypatch.delitem(sys.modules, "peer_pytorch", raising=False)
    peer = importlib.import_module("peer_pytorch")
    out = tmp_path / "r.json"
    victim = tmp_path / "victim.txt"
    victim.write_text("not yours\n")
    (tmp_path / "r.json.tmp").symlink_to(victim)
    peer.write_output(str(out), {"schema_version": 1, "meta": {}, "runs": []})
    assert victim.read_text() == "not yours\n"
    assert json.loads(out.read_text())["schema_version"] == 1


# ---- 2. unbounded reads: devices, FIFOs, oversized files


@pytest.mark.parametrize("args", [("report", "/dev/zero"), ("compare", "/dev/zero", SERIAL),
                                  ("compare", SERIAL, "/dev/zero"), ("plot", "/dev/zero", "--out", "X")])
def test_a_device_is_refused_unread(args, tmp_path):
    args = [tmp_path / "out" if a == "X" else a for a in args]
    r = run(*args)
    line = one_error_line(r, args[0])
    assert "/dev/zero: not a regular file" in line


def test_a_fifo_in_a_scanned_folder_is_skipped_not_read(tmp_path):
    shutil.copy(SERIAL, tmp_path / "serial.json")
    os.mkfifo(tmp_path / "pipe.json")
    # A program, with a timeout: in this process a regression would block pytest forever on the FIFO.
    r = subprocess.run([str(SCRIPTS / "report"), str(tmp_path), "--table", "runs"], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "note: skipping" in r.stderr and "pipe.json: not a regular file" in r.stderr
    assert "| serial:naive |" in r.stdout


def test_an_oversized_report_is_refused_in_one_line(monkeypatch):
    monkeypatch.setattr(safe_io, "MAX_INPUT_BYTES", 1024)
    r = run("report", SERIAL)
    assert "over the" in one_error_line(r, "report")
    r = run("compare", SERIAL, SERIAL)
    assert "over the" in one_error_line(r, "compare")


# ---- 3. make-results-readme: all or nothing


def test_make_results_readme_keeps_the_old_charts_and_readme_when_it_fails(tmp_path, monkeypatch):
    res = tmp_path / "results"
    shutil.copytree(RESULTS, res)
    assert run("make-results-readme", "--results", res).returncode == 0
    before = {p.name: p.read_bytes() for p in (res / "charts").iterdir()}
    readme = (res / "README.md").read_bytes()
    assert before and b"charts/" in readme

    def unchanged():
        assert {p.name: p.read_bytes() for p in (res / "charts").iterdir()} == before
        assert (res / "README.md").read_bytes() == readme
        assert leftovers(res) == [] and leftovers(res / "charts") == []

    # A report with a NaN median: it deleted every chart, then failed drawing (ValueError: Axis limits
    # cannot be NaN or Inf), the README pointing at charts that were gone.
    data = serial()
    data["runs"][0]["forward_ms"]["median"] = float("nan")
    write(res / "cpu" / "nan.json", data)
    r = run("make-results-readme", "--results", res)
    assert "forward_ms.median is NaN" in one_error_line(r, "make-results-readme")
    unchanged()
    # A chart that fails half-way (any error while drawing): nothing is replaced either.
    (res / "cpu" / "nan.json").unlink()
    from suitereport import charts

    def broken(group, images, path):
        raise RuntimeError("drawing failed")

    monkeypatch.setattr(charts, "speedup_chart", broken)
    r = run("make-results-readme", "--results", res)
    assert r.returncode == 1 and "drawing failed" in r.stderr
    unchanged()


# ---- 4. the gate must not pass garbage


@pytest.mark.parametrize("field, value, message", [
    ("median", float("nan"), "forward_ms.median is NaN"),
    ("median", float("inf"), "forward_ms.median is Infinity"),
    ("median", -3.0, "forward_ms.median is -3.0"),
    ("median", "211", 'forward_ms.median is "211"'),
    ("samples", [200.0, float("nan"), 210.0, 215.0, 220.0], "forward_ms.samples[1] is NaN"),
    ("samples", [200.0, -1.0, 210.0, 215.0, 220.0], "forward_ms.samples[1] is -1.0"),
    ("samples", [200.0, "x", 210.0, 215.0, 220.0], 'forward_ms.samples[1] is "x"'),
])
def test_a_time_that_is_no_time_is_bad_input(tmp_path, field, value, message):
    data = serial()
    data["runs"][0]["forward_ms"][field] = value
    path = write(tmp_path / "bad-time.json", data)
    r = run("compare", SERIAL, path)  # it printed OK with NaN as 0 ms, exit 0
    assert message in one_error_line(r, "compare")
    r = run("report", path)
    assert message in one_error_line(r, "report")


def test_a_new_run_that_failed_without_a_time_fails_the_gate(tmp_path):
    data = serial()
    data["runs"][0]["forward_ms"] = {"min": 0, "median": 0, "max": 0, "samples": []}
    data["runs"][0]["validation"].update(passed=False, max_abs_prob_diff=None)
    r = run("compare", SERIAL, write(tmp_path / "failed.json", data))
    assert r.returncode == 1, r.stdout + r.stderr  # was "left out" and OK, exit 0
    assert "| serial:naive/images:50/threads:1 | 211.6 | – |" in r.stdout and "FAILED (no forward time)" in r.stdout
    assert r.stdout.strip().splitlines()[-1].startswith("FAIL: ")
    assert "failed (validation, or no forward time) in NEW: serial:naive/images:50/threads:1" in r.stdout


@pytest.mark.parametrize("value", ["false", "true", 0, None])
def test_validation_passed_must_be_a_boolean(tmp_path, value):
    data = serial()
    data["runs"][0]["validation"]["passed"] = value
    r = run("compare", SERIAL, write(tmp_path / "passed.json", data))
    assert "'validation.passed' must be true or false" in one_error_line(r, "compare")


# ---- 5. the gate's work is bounded


def test_a_million_passes_a_side_are_compared_quickly_in_bounded_memory():
    import numpy as np
    rng = np.random.default_rng(7)
    n = 10 ** 6
    base = list(100.0 * rng.lognormal(0.0, 0.05, n))
    new = list(101.0 * rng.lognormal(0.0, 0.05, n))
    tracemalloc.start()
    start = time.monotonic()
    try:
        d = gate.decide(base, new, 100.0, 101.0, threshold=0.10)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    took = time.monotonic() - start
    # A 2000 x N bootstrap array: 16 GB a side at 10^6. Now O(N): the test's data is 8 MB a side.
    assert peak < 400e6, f"{peak / 1e6:.0f} MB"
    assert took < 60, f"{took:.1f} s"  # a few seconds idle; the machine is shared
    assert d.status == "ok" and d.basis == "1000000 v 1000000 passes"
    assert d.ci[0] < 1.01 < d.ci[1] and d.ci[1] - d.ci[0] < 0.002
    assert d.p_slower < 1e-6 < d.p_faster


def test_the_large_sample_test_is_scipys():
    from scipy.stats import mannwhitneyu
    a, b = [float(x % 17) for x in range(900)], [float(x % 19) for x in range(700)]  # many ties
    ours = gate.mann_whitney_large(a, b)
    theirs = tuple(mannwhitneyu(a, b, alternative=alt, method="asymptotic").pvalue for alt in ("greater", "less"))
    assert ours == pytest.approx(theirs, rel=1e-9)


# ---- 6. crafted fields and bad output paths: one line, exit 2 (or, for long names, a working plot)


def _crafted(tmp_path, case):
    """(tool args, expected exit, text in the error line) for one case; files made in tmp_path."""
    data = serial()
    r0 = data["runs"][0]
    path = tmp_path / "crafted.json"
    if case == "threads Infinity":
        r0["threads"] = float("inf")
        return ("report", write(path, data)), 2, "'threads' must be an integer"
    if case == "logical_cores NaN":
        data["meta"]["logical_cores"] = float("nan")
        return ("compare", SERIAL, write(path, data)), 2, "'logical_cores' must be an integer"
    if case == "5000-digit integer":
        path.write_text(json.dumps(data).replace('"images": 50', '"images": ' + "9" * 5000, 1))
        return ("report", path), 2, "not a readable report"
    if case == "100000 nested brackets":
        path.write_text('{"schema_version": 1, "runs": ' + "[" * 100000 + "]" * 100000 + "}")
        return ("report", path), 2, "nested too deeply"
    if case == "median 5e-324":
        r0["forward_ms"]["median"] = 5e-324
        del r0["images_per_s"]  # images / (median / 1000): a division by zero
        return ("report", write(path, data)), 2, "forward_ms.median is 5e-324"
    if case == "gflop_per_s Infinity":
        r0["gflop_per_s"] = float("inf")
        return ("report", write(path, data)), 2, "'gflop_per_s' is Infinity"
    if case == "NaN median in plot":
        r0["forward_ms"]["median"] = float("nan")
        return ("plot", write(path, data), "--out", tmp_path / "out"), 2, "forward_ms.median is NaN"
    if case == "300-character names in plot":
        # two GPUs whose names differ only in punctuation share a slug: the host is added to it
        folder = tmp_path / "reports"
        folder.mkdir()
        for i, gpu in enumerate(("NVIDIA X-1", "NVIDIA X 1")):
            d = copy.deepcopy(data)
            d["meta"]["host"] = "h" * 299 + str(i)
            d["meta"]["gpu"] = {"gpu_name": gpu}
            for r in d["runs"]:
                r["variant"] = "v" * 300
            write(folder / f"r{i}.json", d)
        return ("plot", folder, "--out", tmp_path / "out"), 0, ""
    out = tmp_path / "out"
    if case == "plot --out ''":
        return ("plot", SERIAL, "--out", ""), 2, "empty"
    if case == "plot --out a file":
        out.write_text("a file\n")
        return ("plot", SERIAL, "--out", out), 2, "is a file, not a folder"
    if case == "plot --out a dangling link":
        out.symlink_to(tmp_path / "missing")
        return ("plot", SERIAL, "--out", out), 2, "dangling symbolic link"
    if case == "plot --out a 256-byte name":  # Python 3.11's is_symlink raised ENAMETOOLONG: a traceback
        return ("plot", SERIAL, "--out", tmp_path / ("o" * 256)), 2, "cannot be a folder: File name too long"
    res = tmp_path / "results"
    shutil.copytree(RESULTS / "cpu", res / "cpu")
    if case == "readme --output ''":
        return ("make-results-readme", "--results", res, "--output", ""), 2, "empty output path"
    if case == "readme --output a folder":
        out.mkdir()
        return ("make-results-readme", "--results", res, "--output", out), 2, "is a folder"
    if case == "readme --output a dangling link":
        out.symlink_to(tmp_path / "missing" / "README.md")
        return ("make-results-readme", "--results", res, "--output", out), 2, "dangling symbolic link"
    if case == "readme --output a 256-byte name":
        return ("make-results-readme", "--results", res, "--output", tmp_path / ("o" * 256)), 2, \
            "file name too long (256 bytes, at most 255)"
    if case == "readme --output in a missing folder":
        return ("make-results-readme", "--results", res, "--output", out / "README.md"), 2, "does not exist"
    if case == "readme --output in an unwritable folder":
        # /proc/self: a folder no one can create files in, root included (chmod does not stop root)
        return ("make-results-readme", "--results", res, "--output", "/proc/self/README.md"), 2, "not writable"
    if case == "readme charts/ is a file":
        (res / "charts").write_text("a file\n")
        return ("make-results-readme", "--results", res), 2, "is not a folder"
    raise AssertionError(case)


CRAFTED = ["threads Infinity", "logical_cores NaN", "5000-digit integer", "100000 nested brackets",
           "median 5e-324", "gflop_per_s Infinity", "NaN median in plot", "300-character names in plot",
           "plot --out ''", "plot --out a file", "plot --out a dangling link", "plot --out a 256-byte name",
           "readme --output ''", "readme --output a folder", "readme --output a dangling link",
           "readme --output a 256-byte name", "readme --output in a missing folder",
           "readme --output in an unwritable folder", "readme charts/ is a file"]


@pytest.mark.parametrize("case", CRAFTED)
def test_crafted_fields_and_bad_output_paths(tmp_path, case):
    args, code, message = _crafted(tmp_path, case)
    r = run(*args)
    prog = args[0]
    if code == 2:
        assert message in one_error_line(r, prog)
    else:
        assert r.returncode == code and "Traceback" not in r.stderr, r.stderr
        names = [p.name for p in (tmp_path / "out").iterdir()]
        assert len(names) >= 2 and all(len(n.encode()) <= 255 for n in names), names
        assert len(set(names)) == len(names)
    for folder in (tmp_path, tmp_path / "out", tmp_path / "results"):
        if folder.is_dir() and not folder.is_symlink():
            assert leftovers(folder) == [], (folder, leftovers(folder))


# ---- 7. names in tables, NaN peaks, the install


def test_names_with_newlines_pipes_and_html_keep_markdown_and_latex_whole(tmp_path):
    data = serial()
    data["meta"]["host"] = "evil\n\nhost<b>"
    for r in data["runs"]:
        r["backend"] = "back|end"
        r["variant"] = "var\n<script>alert(1)</script>&"
        r["device"] = "CPU\n\n| x |"
    path = write(tmp_path / "names.json", data)
    r = run("report", path, "--table", "runs")
    assert r.returncode == 0, r.stderr
    rows = [line for line in r.stdout.splitlines() if line.startswith("| back\\|end")]
    assert len(rows) == 2, r.stdout  # one line per run: no newline broke a row
    assert "<script>" not in r.stdout and "&lt;script&gt;" in r.stdout and "&amp;" in r.stdout
    assert all(len(line.replace("\\|", "").split("|")) == len(rows[0].replace("\\|", "").split("|"))
               for line in r.stdout.splitlines() if line.startswith("| ") and "|" in line[2:])
    r = run("report", path, "--table", "runs", "--format", "latex")
    assert r.returncode == 0, r.stderr
    body = r.stdout.split(r"\begin{tabular}")[1].split(r"\end{tabular}")[0]
    assert "\n\n" not in body and "<" not in body and "|" not in body


def test_a_nan_peak_shows_as_a_dash_not_nan(tmp_path):
    res = tmp_path / "results"
    shutil.copytree(RESULTS, res)
    (res / "cpu" / "fma_peak.json").write_text(
        '{"benchmarks": [{"name": "BM_Fma/AllThreads", "GFLOP/s": NaN}]}')
    r = run("report", res, "--table", "portability")
    assert r.returncode == 0, r.stderr
    assert "nan" not in r.stdout.lower(), r.stdout
    r = run("report", res, "--portability", "--format", "json")  # a NaN peak is no peak
    assert r.returncode == 0 and json.loads(r.stdout)["platforms"][0]["peaks_gflop_per_s"] == {}, r.stdout


def test_cmake_install_carries_every_tool_and_the_manifests():
    text = (REPO / "CMakeLists.txt").read_text()
    programs = text.split("install(PROGRAMS", 1)[1].split(")", 1)[0].split()
    for tool in TOOLS:
        assert f"scripts/{tool}" in programs, tool  # scripts/history was missing
    assert "backends/*/manifest.json" in text and "${SUITE_INSTALL_SHARE}/backends/${model}" in text
    # identity.py looks for backends/ two levels above itself: share/cnn-suite/ in an install
    from suitereport import identity
    assert identity.BACKENDS_DIRS[0] == Path(identity.__file__).resolve().parents[2] / "backends"


# ---- 8. messages that say what is wrong


def test_a_screenshot_into_a_missing_folder_says_so(tmp_path):
    from suitereport import history
    data = serial()
    data["meta"]["date_utc"] = "2026-01-01T00:00:00Z"
    store = tmp_path / "store.jsonl"
    assert run("history", "add", write(tmp_path / "r.json", data), "--store", store).returncode == 0
    assert history.read_store(store)
    r = run("history", "html", "--store", store, "--out", tmp_path / "d.html",
            "--screenshot", tmp_path / "missing" / "d.png")
    line = one_error_line(r, "history")
    assert "missing" in line and "does not exist" in line, line  # was "chromium failed (exit 0)"


def test_an_empty_portability_table_says_why():
    r = run("report", SERIAL, "--table", "portability")
    line = one_error_line(r, "report")
    # serial runs use 1 core of 2: no platform has a full-resource entry (was "no data" alone)
    assert "no validated full-resource run (every core of a CPU, or a GPU)" in line, line


# ---- 9. the gate: one platform, a quiet machine, no verdict on peers


def _on(data, cpu, cores=2):
    data["meta"].update(cpu_model=cpu, logical_cores=cores)
    return data


def test_compare_refuses_a_verdict_across_platforms(tmp_path):
    epyc = write(tmp_path / "epyc.json", _on(serial(), "AMD EPYC 9654 96-Core Processor"))
    xeon = write(tmp_path / "xeon.json", _on(serial(), "Intel(R) Xeon(R) Platinum 8480C"))
    r = run("compare", epyc, xeon)
    line = one_error_line(r, "compare")
    assert "BASE ran on AMD EPYC 9654 96-Core Processor, 2 cores" in line
    assert "NEW on Intel Xeon Platinum 8480C, 2 cores" in line and "--across-platforms" in line
    r = run("compare", epyc, xeon, "--across-platforms")
    assert r.returncode == 0 and "compared across platforms" in r.stderr, r.stderr
    # the same CPU with another core count is another platform too
    r = run("compare", epyc, write(tmp_path / "epyc64.json", _on(serial(), "AMD EPYC 9654 96-Core Processor", 64)))
    assert "64 cores" in one_error_line(r, "compare")


def _busy(run, others=3, load=0.5):
    run["machine_load"] = {"load_avg_1min_start": load, "load_avg_1min_end": load,
                           "other_runnable_start": others, "other_runnable_end": 0}


def test_compare_refuses_runs_of_a_busy_machine(tmp_path):
    data = serial()
    r0 = data["runs"][0]
    for k in ("min", "median", "max"):
        r0["forward_ms"][k] *= 1.3
    r0["forward_ms"]["samples"] = [s * 1.3 for s in r0["forward_ms"]["samples"]]
    _busy(r0)
    for r in data["runs"][1:]:
        _busy(r, others=0, load=0.4)  # quiet
    slow_busy = write(tmp_path / "busy.json", data)
    r = run("compare", SERIAL, slow_busy)
    assert r.returncode == 0, r.stdout + r.stderr  # the 30 % on a busy machine is no verdict
    assert "refused: busy machine (NEW: 3 other runnable process(es) on 2 cores)" in r.stdout
    assert "1 refused, busy machine (--include-busy to gate them): serial:naive/images:50/threads:1" in r.stdout
    r = run("compare", SERIAL, slow_busy, "--include-busy")
    assert r.returncode == 1 and "| SLOWER |" in r.stdout
    # the load-average rule: above the logical core count
    _busy(r0, others=0, load=2.5)
    r = run("compare", SERIAL, write(tmp_path / "loaded.json", data))
    assert r.returncode == 0 and "load average 2.50 on 2 cores" in r.stdout
    # nothing left to judge: no verdict at all, exit 2
    for r in data["runs"]:
        _busy(r)
    r = run("compare", SERIAL, write(tmp_path / "all-busy.json", data))
    assert "every benchmark in common was refused" in one_error_line(r, "compare")


def test_a_peer_is_shown_never_gated(tmp_path):
    base = json.loads((RESULTS / "cpu" / "pytorch-cpu.json").read_text())
    slow = copy.deepcopy(base)
    for r in slow["runs"]:
        for k in ("min", "median", "max"):
            r["forward_ms"][k] *= 1.5
        r["forward_ms"]["samples"] = [s * 1.5 for s in r["forward_ms"]["samples"]]
        r["validation"]["passed"] = False
    r = run("compare", write(tmp_path / "a.json", base), write(tmp_path / "b.json", slow))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "(peer, not gated)" in r.stdout and "SLOWER" in r.stdout
    assert "2 peer(s), shown, not gated" in r.stdout and r.stdout.strip().splitlines()[-1].startswith("OK: ")
    # a report whose meta says a peer wrote it (scripts/peer_pytorch.py: suite_version "peer_pytorch")
    for d in (base, slow):
        d["meta"]["suite_version"] = "peer_pytorch"
        for r in d["runs"]:
            r["backend"] = "jax"
    r = run("compare", write(tmp_path / "c.json", base), write(tmp_path / "d.json", slow))
    assert r.returncode == 0 and "(peer, not gated)" in r.stdout, r.stdout


# ---- 8. names shown as text everywhere; files the tools did not write are not theirs to replace


def test_make_results_readme_replaces_only_a_readme_it_wrote(tmp_path):
    res = tmp_path / "ab"
    shutil.copytree(RESULTS / "cpu", res / "cpu")
    mine = res / "README.md"  # an A/B's hand-written README: `--results results/ab/NAME` replaced it
    mine.write_text("# My A/B\n\nWhat I measured.\n")
    other = res / "cpu" / "notes.txt"
    other.write_text("notes\n")
    for args in (["--results", res], ["--results", res, "--output", other]):
        line = one_error_line(run("make-results-readme", *args), "make-results-readme")
        assert "not a README made by this tool" in line and "kept" in line
    assert mine.read_text() == "# My A/B\n\nWhat I measured.\n" and other.read_text() == "notes\n"
    assert not (res / "charts").exists() and leftovers(res) == []
    mine.unlink()
    assert run("make-results-readme", "--results", res).returncode == 0
    assert run("make-results-readme", "--results", res).returncode == 0  # its own README is replaced


def test_a_folder_under_a_charts_name_stops_make_results_readme_before_any_move(tmp_path):
    res = tmp_path / "results"
    shutil.copytree(RESULTS / "cpu", res / "cpu")
    assert run("make-results-readme", "--results", res).returncode == 0
    charts = sorted((res / "charts").iterdir())
    readme = (res / "README.md").read_bytes()
    charts[-1].unlink()
    charts[-1].mkdir()  # a folder where a chart goes: the charts before it were moved in, then a traceback
    before = {p.name: p.read_bytes() for p in charts[:-1]}
    for p in charts[:-1]:
        p.write_bytes(b"old")
    line = one_error_line(run("make-results-readme", "--results", res), "make-results-readme")
    assert "is a folder, not a file to write; nothing was written" in line
    assert all(p.read_bytes() == b"old" for p in charts[:-1]) and before
    assert (res / "README.md").read_bytes() == readme and leftovers(res) == []


HOSTILE = {"backend": "![x](http://example.invalid/x.png)", "variant": "`*a*` _b_ [c](d) ~e~ \\",
           "compiler": "<img src=http://example.invalid/y.png>", "commit": "](http://example.invalid/z.png)"}


def test_markdown_shows_names_as_text_never_as_links_images_or_html(tmp_path):
    res = tmp_path / "results"
    data = serial()
    data["meta"]["compiler"] = {"id": HOSTILE["compiler"], "version": "1"}
    data["meta"]["git_commit"] = HOSTILE["commit"]
    for r in data["runs"]:
        r["backend"], r["variant"] = HOSTILE["backend"], HOSTILE["variant"]
    (res / "cpu").mkdir(parents=True)
    write(res / "cpu" / "r.json", data)
    assert run("make-results-readme", "--results", res).returncode == 0
    readme = (res / "README.md").read_text()
    r = run("report", res / "cpu" / "r.json", "--table", "runs")
    for text in (readme, r.stdout):
        hostile = [line for line in text.splitlines() if "example.invalid" in line]
        assert hostile and not any("<img" in line or re.search(r"(?<!\\)(\]\(http|!\[x)", line)
                                   for line in hostile), hostile
        assert "\\`\\*a\\*\\` \\_b\\_ \\[c\\](d) \\~e\\~ \\\\" in text
    assert "&lt;img src=http://example.invalid/y.png&gt;" in readme  # the source line's compiler
    from suitereport import tables
    for name in HOSTILE.values():
        assert tables.md_plain(tables.md_cell(name)) == name.replace("&", "&amp;").replace("<", "&lt;").replace(
            ">", "&gt;")


def test_latex_and_csv_keep_names_as_data(tmp_path):
    data = serial()
    for r in data["runs"]:
        r["backend"], r["variant"] = "[1ex] x", "y"
    path = write(tmp_path / "r.json", data)
    r = run("report", path, "--table", "runs", "--format", "latex")
    assert r.returncode == 0, r.stderr
    rows = r.stdout.split(r"\midrule")[1].split(r"\bottomrule")[0].strip().splitlines()
    assert rows and all(row.startswith("{}[1ex] x") for row in rows), rows  # not `\\[1ex]`: a row gone
    data["meta"]["cpu_model"] = "@SUM(1+1)"  # the machine column
    for r in data["runs"]:
        r["backend"] = "=HYPERLINK(\"http://example.invalid\")"
    write(path, data)
    r = run("report", path, "--table", "runs", "--format", "csv")
    assert r.returncode == 0, r.stderr
    import csv
    import io
    cells = [c for row in csv.reader(io.StringIO(r.stdout)) for c in row]
    assert "'=HYPERLINK(\"http://example.invalid\"):y" in cells and any(c.startswith("'@SUM") for c in cells)
    assert not any(c[:1] in ("=", "+", "@") for c in cells), cells
