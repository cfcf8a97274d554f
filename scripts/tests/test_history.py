"""Tests of scripts/history: the store (validated, idempotent, safe for concurrent appends), the
step changes, the PNG charts and the dashboard, opened in a real headless browser."""

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[1]
DATA = Path(__file__).resolve().parent / "data"
SERIAL = DATA / "serial.json"
sys.path.insert(0, str(SCRIPTS))

from suitereport import browser, history  # noqa: E402
from tools_inprocess import run_tool  # noqa: E402


def run(*args):
    """scripts/history, run in this process (tools_inprocess.py): what subprocess.run would return."""
    return run_tool("history", *args)


def commit_report(path, commit, date, factor=1.0, spread=(0.97, 0.99, 1.0, 1.01, 1.03, 1.02)):
    """serial.json as if run at another commit and date, its passes scaled by factor."""
    data = json.loads(SERIAL.read_text())
    data["meta"].update(git_commit=commit, date_utc=date)
    for r in data["runs"]:
        m = r["forward_ms"]["median"] * factor
        r["forward_ms"].update(median=m, samples=[m * f for f in spread])
    path.write_text(json.dumps(data))
    return path


def test_add_is_idempotent_and_validated(tmp_path):
    store = tmp_path / "h" / "store.jsonl"
    r = run("add", SERIAL, "--store", store)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("added: ")
    copy = tmp_path / "same-report-elsewhere.json"
    shutil.copy(SERIAL, copy)
    r = run("add", SERIAL, copy, "--store", store)
    assert r.returncode == 0 and r.stdout.count("already in the store") == 2
    assert len(store.read_text().splitlines()) == 1
    entry = json.loads(store.read_text())
    assert entry["machine"] == "vm" and entry["runs"][0]["benchmark"] == "serial:naive/images:50/threads:1"
    assert len(entry["runs"][0]["samples"]) == 5
    # bad reports never get in: one line, exit 2, the store unchanged
    for bad, message in ((DATA / "bad" / "wrong-schema.json", "schema_version 2"),
                         (DATA / "bad" / "not-json.json", "not JSON")):
        r = run("add", bad, "--store", store)
        assert r.returncode == 2 and message in r.stderr and len(r.stderr.strip().splitlines()) == 1
    no_date = json.loads(SERIAL.read_text())
    del no_date["meta"]["date_utc"]
    (tmp_path / "nodate.json").write_text(json.dumps(no_date))
    r = run("add", tmp_path / "nodate.json", "--store", store)
    assert r.returncode == 2 and "no meta.date_utc" in r.stderr
    assert len(store.read_text().splitlines()) == 1


def test_a_damaged_store_is_named_by_line(tmp_path):
    store = tmp_path / "store.jsonl"
    assert run("add", SERIAL, "--store", store).returncode == 0
    with open(store, "a") as f:
        f.write('{"store_version": 1, "id": "x"\n')
    r = run("html", "--store", store, "--out", tmp_path / "d.html")
    assert r.returncode == 2 and "store.jsonl:2: not JSON" in r.stderr
    r = run("plot", "--store", tmp_path / "missing.jsonl", "--out", tmp_path)
    assert r.returncode == 2 and "no such store" in r.stderr


def test_concurrent_appends_are_neither_torn_nor_doubled(tmp_path):
    store = tmp_path / "store.jsonl"
    reports = [commit_report(tmp_path / f"r{i}.json", f"{i:040x}", f"2026-11-0{i + 1}T00:00:00Z") for i in range(4)]
    # four writers at once, each adding all four reports in a different order: four processes (the
    # store's flock is what is tested), so the script itself, not run_tool
    procs = [subprocess.Popen([str(SCRIPTS / "history"), "add", *map(str, reports[i:] + reports[:i]), "--store",
                              str(store)], stdout=subprocess.PIPE, stderr=subprocess.PIPE) for i in range(4)]
    for p in procs:
        assert p.wait(timeout=120) == 0, p.stderr.read()
    lines = store.read_text().splitlines()
    assert len(lines) == 4
    assert sorted(json.loads(line)["git_commit"][-1] for line in lines) == ["0", "1", "2", "3"]


def test_steps_are_marked_where_a_benchmark_moved_beyond_its_noise(tmp_path):
    paths = [commit_report(tmp_path / "a.json", "a" * 40, "2026-11-01T00:00:00Z"),
             commit_report(tmp_path / "b.json", "b" * 40, "2026-11-02T00:00:00Z", 1.04),  # within noise
             commit_report(tmp_path / "c.json", "c" * 40, "2026-11-03T00:00:00Z", 1.30),  # a step
             commit_report(tmp_path / "d.json", "d" * 40, "2026-11-04T00:00:00Z", 1.31)]
    entries = [history.entry_of(p, "m") for p in paths]
    s = [x for x in history.series(entries) if x.benchmark == "serial:naive/images:50/threads:1"][0]
    assert [p.step for p in s.points] == ["", "", "slower", ""]
    assert s.points[2].change == pytest.approx(1.30 / 1.04 - 1, rel=1e-6)


@pytest.fixture(scope="module")
def demo_store(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("hist")
    store = tmp / "store.jsonl"
    paths = [commit_report(tmp / "a.json", "a" * 40, "2026-11-01T00:00:00Z"),
             commit_report(tmp / "b.json", "b" * 40, "2026-11-02T00:00:00Z", 1.3)]
    assert run("add", *paths, "--store", store, "--label", "test").returncode == 0
    gpu = json.loads((DATA / "results" / "h200" / "suite.json").read_text())
    (tmp / "gpu.json").write_text(json.dumps(gpu))
    assert run("add", tmp / "gpu.json", "--store", store).returncode == 0
    return store


EPYC, XEON, H200 = "AMD EPYC, 2 cores (test)", "Intel Xeon Platinum 8480C, 2 cores", "NVIDIA H200"


def test_plot_draws_a_chart_per_benchmark_and_an_overview(demo_store, tmp_path):
    r = run("plot", "--store", demo_store, "--out", tmp_path)
    assert r.returncode == 0, r.stderr
    names = sorted(p.name for p in tmp_path.glob("*.png"))
    # one chart per platform x backend x image count, its variants as lines
    assert "AMD-EPYC-2-cores-test-serial-images-50.png" in names and "NVIDIA-H200-cuda-images-200.png" in names
    assert len(names) == 8 + 1
    assert "overview-AMD-EPYC-2-cores-test.png" in names and "overview-NVIDIA-H200.png" not in names  # one commit


def test_the_dashboard_is_one_self_contained_file(demo_store, tmp_path):
    out = tmp_path / "dash.html"
    r = run("html", "--store", demo_store, "--out", out)
    assert r.returncode == 0, r.stderr
    text = out.read_text()
    assert not re.search(r"(src|href)\s*=\s*[\"']?(https?:)?//", text)  # no network, no CDN
    data = json.loads(re.search(r'id="history-data">(.*?)</script>', text, re.S).group(1))
    assert data["machines"] == [EPYC, XEON, H200] and len(data["charts"]) == 8
    assert sum(len(c["series"]) for c in data["charts"]) == 2 + 8
    r2 = run("html", "--store", demo_store, "--out", tmp_path / "again.html")
    assert r2.returncode == 0 and (tmp_path / "again.html").read_text() == text  # deterministic


def dump_dom(url):
    if not browser.find():
        pytest.skip("chromium is not installed (scripts/deps/reports.txt lists it)")
    r = browser.run(url, "--dump-dom")
    assert r.returncode == 0, r.stderr[-2000:]
    return r.stdout


def test_the_dashboard_renders_every_chart_in_a_real_browser(demo_store, tmp_path):
    out = tmp_path / "dash.html"
    assert run("html", "--store", demo_store, "--out", out).returncode == 0
    dom = dump_dom(out.as_uri())
    panels = re.findall(r'<div class="panel" data-machine="([^"]+)" data-backend="([^"]+)" '
                        r'data-key="([^"]+)"[^>]*data-shown="(\d)"', dom)
    assert len(panels) == 8, dom[:3000]
    assert (EPYC, "serial", f"{EPYC} serial 50", "1") in panels
    assert dom.count('<svg class="chart"') == 8 and dom.count("<polyline") == 10
    # one hover title per point: 2 commits x 2 benchmarks on the EPYC, 1 x 8 on the Xeon + H200 report
    titles = re.findall(r"<title>([^<]*commit [^<]*)</title>", dom)
    assert len(titles) == 2 * 2 + 8
    assert any(t.startswith("serial:naive, 1 thr\ncommit bbbbbbbbbb") and "slower +30.0 %" in t for t in titles)
    assert 'class="point step-slower"' in dom and "8 of 8 charts" in dom
    # the summary: the regression of both serial benchmarks, with the commit that could have caused it
    rows = re.findall(r'<tr class="step-row slower" data-machine="([^"]+)" data-backend="serial" '
                      r'data-benchmark="([^"]+)"', dom)
    assert sorted(rows) == [(EPYC, "serial:naive/images:200/threads:1"), (EPYC, "serial:naive/images:50/threads:1")]
    assert "No improvement" in dom and 'class="latest-machine"' in dom
    # the filter, set from the URL: only the H200's cuda charts stay shown
    dom = dump_dom(out.as_uri() + "#machine=NVIDIA%20H200&backend=cuda")
    shown = re.findall(r'data-key="([^"]+)"[^>]*data-shown="1"', dom)
    assert sorted(shown) == [f"{H200} cuda 200", f"{H200} cuda 50"]
    assert "2 of 8 charts" in dom


def test_the_dashboard_screenshot(demo_store, tmp_path):
    if not browser.find():
        pytest.skip("chromium is not installed (scripts/deps/reports.txt lists it)")
    shot = tmp_path / "dash.png"
    r = run("html", "--store", demo_store, "--out", tmp_path / "d.html", "--screenshot", shot)
    assert r.returncode == 0, r.stderr
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10000


def test_results_readme_shows_the_portability_cascades_and_the_history(demo_store, tmp_path):
    res = tmp_path / "results"
    shutil.copytree(DATA / "results", res)
    (res / "history").mkdir()
    shutil.copy(demo_store, res / "history" / "store.jsonl")
    r = run_tool("make-results-readme", "--results", res)
    assert r.returncode == 0, r.stderr
    text = (res / "README.md").read_text()
    assert "## Performance portability" in text and "## History over commits" in text
    assert "![Cascade: Performance portability, application efficiency, 200 images]" \
           "(charts/portability-application-200.png)" in text
    assert f"![History, {EPYC}](charts/history-AMD-EPYC-2-cores-test.png)" in text
    assert "[history/dashboard.html](history/dashboard.html)" in text
    for link in [line.split("](")[1].rstrip(")") for line in text.splitlines() if line.startswith("![")]:
        assert (res / link).is_file(), link
    assert (res / "history" / "dashboard.html").is_file()
