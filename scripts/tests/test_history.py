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

from suitereport import browser, history, load  # noqa: E402
from git_repos import ThrowawayRepo  # noqa: E402
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
    (res / "history" / "dashboard.png").write_bytes(b"a screenshot")  # made by `history html --screenshot`
    r = run_tool("make-results-readme", "--results", res)
    assert r.returncode == 0, r.stderr
    text = (res / "README.md").read_text()
    assert "## Performance portability" in text and "## History over commits" in text
    assert "![Cascade: Performance portability, application efficiency, 200 images]" \
           "(charts/portability-application-200.png)" in text
    assert f"![History, {EPYC}](charts/history-AMD-EPYC-2-cores-test.png)" in text
    assert "[history/dashboard.html](history/dashboard.html)" in text
    assert "[![The dashboard (history/dashboard.html) as chromium renders it](history/dashboard.png)]" in text
    for link in [line.split("](")[1].rstrip(")") for line in text.splitlines() if line.startswith("![")]:
        assert (res / link).is_file(), link
    assert (res / "history" / "dashboard.html").is_file()


# ---- issue 25: hostile inputs get one line and exit 2, never a hang, a traceback or a torn store


def one_line_error(r, *words):
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    lines = [ln for ln in r.stderr.strip().splitlines() if not ln.startswith("note: ")]
    assert len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    for w in words:
        assert w in lines[0], lines[0]
    return lines[0]


def test_devices_fifos_and_oversized_files_are_refused_at_once(tmp_path):
    import os
    store = tmp_path / "store.jsonl"
    assert run("add", SERIAL, "--store", store).returncode == 0
    # /dev/full as the store was read until the OOM killer came; /dev/zero as a store or a report: MemoryError
    one_line_error(run("add", SERIAL, "--store", "/dev/full"), "/dev/full", "not a regular file")
    one_line_error(run("html", "--store", "/dev/zero", "--out", tmp_path / "d.html"), "/dev/zero")
    one_line_error(run("add", "/dev/zero", "--store", store), "/dev/zero", "not a regular file")
    big = tmp_path / "big.json"  # sparse: 300 MiB on paper, nothing on disk
    with open(big, "wb") as f:
        f.truncate(300 * 1024 * 1024)
    one_line_error(run("add", big, "--store", store), "big.json", "MiB")
    # a FIFO in a scanned folder, or as the store, hung add and html forever: a process of its own, so a
    # hang fails the test instead of blocking it
    folder = tmp_path / "reports"
    folder.mkdir()
    shutil.copy(SERIAL, folder / "a.json")
    os.mkfifo(folder / "b.json")
    os.mkfifo(tmp_path / "fifo.jsonl")
    # in a scanned folder the FIFO is skipped with a note, as scripts/report skips it; as the store, refused
    p = subprocess.run([str(SCRIPTS / "history"), "add", str(folder), "--store", str(store)], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0 and "b.json: not a regular file" in p.stderr, p.stderr
    for args in (["html", "--store", str(tmp_path / "fifo.jsonl"), "--out", str(tmp_path / "d.html")],
                 ["add", str(SERIAL), "--store", str(tmp_path / "fifo.jsonl")]):
        p = subprocess.run([str(SCRIPTS / "history"), *args], capture_output=True, text=True, timeout=60)
        one_line_error(p, "not a regular file")
    assert len(store.read_text().splitlines()) == 1


def test_a_git_commit_that_is_no_commit_id_is_refused(tmp_path):
    # The id reaches git (`--output=FILE` as a revision truncated FILE) and the dashboard's shell command.
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    store = tmp_path / "store.jsonl"
    for commit in (f"--output={victim}", "$(touch pwned)0000", "abc"):
        report = commit_report(tmp_path / "r.json", "a" * 40, "2026-11-01T00:00:00Z")
        data = json.loads(report.read_text())
        data["meta"]["git_commit"] = commit
        report.write_text(json.dumps(data))
        r = run("add", report, "--store", store)
        assert r.returncode == 2 and "is no commit id" in r.stderr and len(r.stderr.splitlines()) == 1, r.stderr
        assert not store.exists()
    # A store line written before the check is refused when read, before any git call.
    assert run("add", commit_report(tmp_path / "ok.json", "a" * 40, "2026-11-01T00:00:00Z"), "--store",
               store).returncode == 0
    line = json.loads(store.read_text().splitlines()[0])
    line["git_commit"] = f"--output={victim}"
    store.write_text(json.dumps(line) + "\n")
    r = run("html", "--store", store, "--out", tmp_path / "d.html")
    assert r.returncode == 2 and "is no commit id" in r.stderr, r.stderr
    assert victim.read_text() == "keep me"


def test_an_output_that_is_the_store_is_refused_and_the_store_kept(demo_store, tmp_path):
    store = tmp_path / "store.jsonl"
    shutil.copy(demo_store, store)
    before = store.read_bytes()
    (tmp_path / "alias.jsonl").hardlink_to(store)
    for args in (["html", "--store", store, "--out", store],
                 ["html", "--store", store, "--out", tmp_path / "alias.jsonl"]):
        r = run(*args)
        assert r.returncode == 2, (args, r.stderr)
        assert "is one of this command's inputs" in r.stderr and len(r.stderr.splitlines()) == 1, r.stderr
        assert store.read_bytes() == before
    assert run("html", "--store", store, "--out", tmp_path / "dash.html").returncode == 0


def test_html_writes_no_fixed_temporary_name(demo_store, tmp_path):
    import os
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    os.symlink(victim, tmp_path / "dash.html.tmp")  # the name the old code wrote through
    assert run("html", "--store", demo_store, "--out", tmp_path / "dash.html").returncode == 0
    assert victim.read_text() == "keep me" and (tmp_path / "dash.html").read_text().startswith("<!DOCTYPE html>")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dash.html", "dash.html.tmp", "victim.txt"]


def test_a_full_disk_leaves_the_store_whole_and_a_torn_last_line_is_survived(tmp_path):
    import resource
    store = tmp_path / "store.jsonl"
    assert run("add", SERIAL, "--store", store).returncode == 0
    before = store.read_bytes()
    other = commit_report(tmp_path / "other.json", "e" * 40, "2026-11-05T00:00:00Z")
    limit = len(before) + 50  # `ulimit -f`: the next line does not fit

    def small_files():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    p = subprocess.run([str(SCRIPTS / "history"), "add", str(other), "--store", str(store)], capture_output=True,
                       text=True, timeout=120, preexec_fn=small_files)
    one_line_error(p, "cannot append", "as it was")
    assert store.read_bytes() == before
    # a torn last line (what the old code left): noted and left out by html, cut off by the next add
    with open(store, "ab") as f:
        f.write(b'{"store_version":1,"id":"torn","mach')
    r = run("html", "--store", store, "--out", tmp_path / "d.html")
    assert r.returncode == 0 and "the last line is cut off" in r.stderr
    r = run("add", other, "--store", store)
    assert r.returncode == 0, r.stderr
    lines = store.read_text().splitlines()
    assert len(lines) == 2 and all(json.loads(line)["store_version"] == 1 for line in lines)
    # a bad line in the middle stays an error
    store.write_text(lines[0] + "\n{not json\n" + lines[1] + "\n")
    one_line_error(run("html", "--store", store, "--out", tmp_path / "d.html"), "store.jsonl:2: not JSON")


def store_line(commit, date, backend="serial", variant="opt", ms=10.0, spread=(0.98, 0.99, 1.0, 1.01, 1.02),
               cpu="AMD EPYC", cores=2, images=1200, threads=1, on_gpu=False, gpu="", busy=False, subject="",
               label="", **extra):
    """One store line, written as `history add` would (tests of what the store may hold)."""
    run_ = {"benchmark": f"{backend}:{variant}/images:{images}/threads:{threads}", "backend": backend,
            "variant": variant, "images": images, "threads": threads, "device": "NVIDIA H200" if on_gpu else "CPU",
            "on_gpu": on_gpu, "median_ms": ms, "samples": [ms * f for f in spread], "gflop_per_s": 1.0,
            "passed": True, "machine_load": {"other_runnable_start": 3 if busy else 0, "other_runnable_end": 0}}
    e = {"store_version": 1, "id": f"{commit[:8]}-{backend}-{variant}-{date}-{label}", "machine": "m", "host": "vm",
         "cpu_model": cpu, "logical_cores": cores, "gpu_name": gpu, "label": label, "git_commit": commit,
         "git_dirty": False, "date_utc": date, "source": "x.json", "runs": [run_], "git_subject": subject}
    e.update(extra)
    return e


def write_store(path, entries, raw_lines=()):
    path.write_text("".join(json.dumps(e) + "\n" for e in entries) + "".join(line + "\n" for line in raw_lines))
    return path


def test_add_refuses_what_the_dashboard_could_not_draw(tmp_path):
    store = tmp_path / "store.jsonl"
    data = json.loads(SERIAL.read_text())
    data["meta"]["date_utc"] = "yesterday-ish"
    (tmp_path / "date.json").write_text(json.dumps(data))
    one_line_error(run("add", tmp_path / "date.json", "--store", store), "yesterday-ish", "no UTC time")
    data = json.loads(SERIAL.read_text())
    data["runs"][0]["forward_ms"]["median"] = float("nan")  # json.dumps writes NaN, json.loads reads it
    (tmp_path / "nan.json").write_text(json.dumps(data))
    one_line_error(run("add", tmp_path / "nan.json", "--store", store), "is NaN, not a time in ms")
    data = json.loads(SERIAL.read_text())
    data["runs"][0]["forward_ms"]["samples"][2] = float("inf")
    (tmp_path / "inf.json").write_text(json.dumps(data))
    one_line_error(run("add", tmp_path / "inf.json", "--store", store), "is Infinity, not a time in ms")
    assert not store.exists() or store.read_text() == ""
    # store lines with what no report may hold: named by line, never a traceback
    good = store_line("a" * 40, "2026-11-01T00:00:00Z")
    for bad, words in ((dict(date_utc="yesterday-ish"), "no UTC time"),
                       ({"runs": [dict(good["runs"][0], median_ms=True)]}, "median_ms"),
                       ({"runs": [dict(good["runs"][0], median_ms=-3.0)]}, "median_ms"),
                       ({"runs": [dict(good["runs"][0], samples=[1.0, "2.0", 3.0])]}, "a sample"),
                       ({"runs": [dict(good["runs"][0], median_ms=float("nan"))]}, "not JSON")):
        write_store(store, [good, dict(good, id="b", **bad)])
        for cmd in (["html", "--store", store, "--out", tmp_path / "d.html"], ["add", SERIAL, "--store", store]):
            one_line_error(run(*cmd), "store.jsonl:2", words)


def test_plot_gives_every_chart_its_own_file(tmp_path):
    long = "v" * 300
    store = write_store(tmp_path / "store.jsonl", [
        store_line(c, d, backend=b, variant="x")
        for c, d in (("a" * 40, "2026-11-01T00:00:00Z"), ("b" * 40, "2026-11-02T00:00:00Z"))
        for b in ("a b", "a-b", long)])
    out = tmp_path / "charts"
    r = run("plot", "--store", store, "--out", out)
    assert r.returncode == 0, r.stderr
    names = sorted(p.name for p in out.glob("*.png"))
    assert len(names) == 3 + 1 and all(len(n.encode()) <= 255 for n in names)
    assert len({n.lower() for n in names}) == len(names)


def test_hostile_names_cannot_break_the_dashboard_in_a_browser(tmp_path):
    evil = ["<!--<script>", "</script><script>document.title='pwned'</script>", "a&b<c>", "\u2028x"]
    entries = []
    for i, name in enumerate(evil):
        for j, (c, d, f) in enumerate((("a" * 40, "2026-11-01T00:00:00Z", 1.0), ("b" * 40, "2026-11-02T00:00:00Z", 1.5))):
            entries.append(store_line(c, d, backend="serial", variant=f"v{i}", ms=10 * f, cpu=name, label=name,
                                      subject=name, id=f"{i}-{j}"))
            entries[-1]["runs"][0]["build"] = "GNU 12.2.0 -O3 -march=native | runtime: CPU"
        # the same benchmark built another way, the build named by the hostile text: a line tagged with it
        entries.append(store_line("b" * 40, "2026-11-02T01:00:00Z", backend="serial", variant=f"v{i}", cpu=name,
                                  label=name, subject=name, id=f"{i}-build"))
        entries[-1]["runs"][0]["build"] = f"GNU 12.2.0 -O3 -march={name} | runtime: {name}"
    store = write_store(tmp_path / "store.jsonl", entries)
    out = tmp_path / "d.html"
    assert run("html", "--store", store, "--out", out).returncode == 0
    text = out.read_text()
    assert "<!--" not in text.split('id="history-data">')[1].split("</script>")[0]
    dom = dump_dom(out.as_uri())
    assert 'data-ready="1"' in dom, dom[-3000:]
    assert len(re.findall(r'<div class="panel" ', dom)) == len(evil)
    assert len(re.findall(r'<tr class="step-row slower"', dom)) == len(evil)
    assert "pwned" not in re.search(r"<title>([^<]*)</title>", dom).group(1)
    assert "&lt;!--&lt;script&gt;" in dom  # shown as text
    assert "-march=&lt;!--&lt;script&gt;" in dom  # the build's tag too


def throwaway_repo(root, changes):
    """A ThrowawayRepo under root with one commit per (path, subject) of changes, writing the subject."""
    repo = ThrowawayRepo(root / "repo")
    for path, subject in changes:
        repo.commit(subject, {path: subject + "\n"})
    return repo


def test_the_commits_that_change_the_backend_are_named_first(tmp_path):
    # The step's range holds commits that change serial's folder, a shared kernel folder, common code,
    # another backend, a report and documents.
    r = throwaway_repo(tmp_path, (
        ("README", "base"), ("backends/serial/k.cpp", "serial kernel change"),
        ("backends/shared/k.hpp", "shared kernel change"), ("common/c.hpp", "contract change"),
        ("backends/openmp/k.cpp", "openmp change"), ("results/r.json", "a report"),
        ("backends/serial/README.md", "serial's figures"), ("README.md", "docs")))
    repo, commits = r.path, r.commits
    entries = [store_line(commits[0], "2026-11-01T00:00:00Z", ms=10.0),
               store_line(commits[-1], "2026-11-02T00:00:00Z", ms=13.0)]
    a = history.analyse(entries, repo=repo)
    [step] = [st for st in a.steps if st.series.benchmark.startswith("serial:register_tiles")]
    assert [c for c, _ in step.range] == commits[1:]
    # nearest code first; not the openmp folder (a backend by its manifest), the report or the README
    assert step.suspects == [(commits[1], "its folder"), (commits[2], "shared kernels"), (commits[3], "common code")]


def test_a_step_measured_on_uncommitted_changes_suspects_the_commits_after_it(tmp_path):
    # The report of commit 1 was made with the change that became commit 2 (git_dirty): commit 2 is a
    # suspect although the step is drawn at commit 1.
    r = throwaway_repo(tmp_path, (("README", "base"), ("README.md", "docs"),
                                  ("backends/serial/k.cpp", "the change"), ("README.md", "more docs")))
    repo, commits = r.path, r.commits
    entries = [store_line(commits[0], "2026-11-01T00:00:00Z", ms=10.0),
               store_line(commits[1], "2026-11-02T00:00:00Z", ms=13.0, git_dirty=True),
               store_line(commits[3], "2026-11-03T00:00:00Z", ms=13.0)]
    a = history.analyse(entries, repo=repo)
    [step] = [st for st in a.steps if st.series.benchmark.startswith("serial:register_tiles")]
    assert step.point.commit == commits[1] and step.point.dirty
    assert [c for c, _ in step.range] == commits[1:3]  # up to the next point, not its own commit
    assert step.suspects == [(commits[2], "its folder")]


def test_a_step_no_commit_of_the_variants_code_explains_is_the_machines(tmp_path):
    # serial:register_tiles (stored as "opt", its old name) is registered in serial_opt.cpp, which includes common/kernels/opt.hpp; serial:naive's own
    # files are serial_naive.cpp and the header only it includes. serial_kernels.cpp is linked, included by
    # no registration: it may be anyone's.
    base = {"backends/serial/serial_opt.cpp": '#include "common/kernels/opt.hpp"\nconst char* v = "register_tiles";\n',
            "backends/serial/serial_naive.cpp": '#include "common/kernels/naive.hpp"\n#include "common/kernels/shared.hpp"\n'
                                                'const char* v = "naive";\n',
            "backends/serial/serial_kernels.cpp": '#include "common/kernels/shared.hpp"\nint k;\n',
            "common/kernels/shared.hpp": "// naive's, and the linked kernels'\n", "common/kernels/opt.hpp": "// opt\n",
            "common/kernels/naive.hpp": "// naive\n", "common/kernels/naive.cpp": "// naive's definitions\n"}
    r = throwaway_repo(tmp_path, [("README", "base")])
    repo, commits = r.path, r.commits

    def commit(path, subject, text=None):
        """Writes text, or appends a line with the subject to the file."""
        r.commit(subject, {path: text if text is not None else (repo / path).read_text() + f"// {subject}\n"})

    for path, text in base.items():
        commit(path, f"add {path}", text)
    first = len(commits) - 1
    commit("backends/serial/serial_naive.cpp", "naive's kernel")            # another variant's own file
    commit("common/kernels/naive.hpp", "naive's header")                    # included by naive only
    commit("common/kernels/naive.cpp", "naive's definitions")               # the source beside that header
    commit("backends/serial/serial_test.cpp", "a test", "int t;\n")         # the backend's tests
    commit("backends/openmp/k.cpp", "openmp", "int o;\n")                   # another backend
    machine = len(commits) - 1
    commit("common/kernels/opt.hpp", "opt's header")
    header = len(commits) - 1
    commit("backends/serial/serial_kernels.cpp", "the linked kernels")
    linked = len(commits) - 1
    points = [(first, 10.0), (machine, 13.0), (header, 17.0), (linked, 22.0)]
    entries = [store_line(commits[i], f"2026-11-0{k + 1}T00:00:00Z", ms=ms) for k, (i, ms) in enumerate(points)]
    entries += [store_line(commits[i], f"2026-11-0{k + 1}T00:00:00Z", variant="naive", label="n")
                for k, (i, _) in enumerate(points)]
    a = history.analyse(entries, repo=repo)
    [moved] = a.no_code_change
    assert moved.point.commit == commits[machine] and moved.point.step == "machine" and moved.suspects == []
    assert [c for c, _ in moved.range] == commits[first + 1:machine + 1]  # the range is still shown
    steps = {st.point.commit: st for st in a.steps}
    assert sorted(steps) == sorted([commits[header], commits[linked]])
    assert steps[commits[header]].suspects == [(commits[header], "common code")]
    assert steps[commits[linked]].suspects == [(commits[linked], "its folder")]
    assert all(st.direction == "slower" for st in steps.values())
    # What a linked file (no registration's) includes may be anyone's: never excluded, though naive includes it.
    from suitereport import git_order
    variants = frozenset({("serial", "register_tiles"), ("serial", "naive")})
    assert git_order.others_only(repo, commits[-1], ("serial", "register_tiles"), variants) == {
        "backends/serial/serial_naive.cpp", "common/kernels/naive.hpp", "common/kernels/naive.cpp"}
    # the dashboard lists it apart from the regressions
    from suitereport import dashboard
    data = dashboard.page_data(a)
    assert [s["commit"] for s in data["no_code_change"]] == [commits[machine]]
    assert commits[machine] not in [s["commit"] for s in data["steps"]]


def test_add_git_versions_stores_every_committed_version_of_a_report(tmp_path, monkeypatch):
    # A verdict folder committed twice (the report replaced), with a JSON file that is no suite report.
    r = throwaway_repo(tmp_path, [("README", "base")])
    repo = r.path
    folder = repo / "results" / "h200" / "verdict"
    folder.mkdir(parents=True)
    for i, date in enumerate(("2026-11-01T00:00:00Z", "2026-11-02T00:00:00Z")):
        commit_report(folder / "suite.json", f"{i + 1}" * 40, date, 1.0 + i)
        r.commit(f"verdict {i}", {"results/h200/verdict/peak.json": json.dumps({"peak": i})})
    versions = r.git("log", "--format=%H", "--", "results").split()
    store = tmp_path / "store.jsonl"
    monkeypatch.chdir(repo)
    r = run("add", "--git-versions", "results/h200/verdict", "--store", store)
    assert r.returncode == 0, r.stderr
    assert sorted(re.findall(r"^added: (\w+):results/h200/verdict/suite.json", r.stdout, re.M)) == \
        sorted(c[:10] for c in versions)
    assert r.stderr.count("not a suite report") == 2 and f"{versions[0][:10]}:results/h200/verdict/peak.json" in r.stderr
    entries = [json.loads(line) for line in store.read_text().splitlines()]
    assert sorted(e["git_commit"] for e in entries) == ["1" * 40, "2" * 40]
    assert {e["machine"] for e in entries} == {"h200/verdict"}  # its folder under results/
    again = run("add", "--git-versions", "results/h200/verdict", "--store", store)
    assert again.returncode == 0 and again.stdout.count("already in the store") == 2
    gone = run("add", "--git-versions", "results/none", "--store", store)
    assert gone.returncode == 2 and "git's history holds no version" in gone.stderr


def boots_repo(tmp_path):
    """A repository where commit 2 changes only serial:register_tiles' code (stored as "opt", its old name:
    the header its registration includes) and serial:naive's files stay as they were: a ThrowawayRepo."""
    repo = throwaway_repo(tmp_path, [
        ("backends/serial/serial_opt.cpp", '#include "common/kernels/opt.hpp"\nconst char* v = "register_tiles";\n'),
        ("backends/serial/serial_naive.cpp", 'const char* v = "naive";\n'),
        ("common/kernels/opt.hpp", "// opt\n")])
    repo.commit("opt's header", {"common/kernels/opt.hpp": "// opt, changed\n"})
    return repo


@pytest.mark.parametrize("boots, controls, naive_factor, evidence, judged", [
    (("b1", "b1"), 3, 1.3, "one boot", "step"),             # one boot: the verdict stands, whatever else moved
    (("b1", "b2"), 3, 1.3, "moved with controls", "machine"),  # its unchanged neighbours moved as much
    (("b1", "b2"), 3, 1.0, "beyond controls", "step"),      # they stayed: the code
    (("b1", "b2"), 2, 1.0, "unconfirmed", "step"),          # too few to tell
    ((None, None), 0, 1.0, "unconfirmed", "step"),          # reports that name no boot never compare as one
    ((None, None), 3, 1.3, "moved with controls", "machine"),  # but their controls still tell
])
def test_a_step_across_boots_is_judged_against_benchmarks_whose_code_did_not_change(
        tmp_path, boots, controls, naive_factor, evidence, judged):
    r = boots_repo(tmp_path)
    repo, commits = r.path, r.commits
    base, new = commits[-2], commits[-1]

    # 10 passes a report: in one boot the 4 benchmarks are tested together (gate.decide_family), and 5 v 5
    # passes (p at least 1/252) cannot hold a step among 4
    spread = tuple(0.98 + 0.004 * i for i in range(10))

    def at(commit, boot, k, **kw):
        return store_line(commit, f"2026-11-0{k}T00:00:00Z", spread=spread, **kw,
                          **({"boot_id": boot} if boot else {}))

    entries = [at(base, boots[0], 1, ms=10.0), at(new, boots[1], 2, ms=13.0)]
    for images, threads in [(1200, 1), (1200, 2), (50000, 1)][:controls]:
        entries += [at(base, boots[0], 1, variant="naive", images=images, threads=threads, ms=20.0),
                    at(new, boots[1], 2, variant="naive", images=images, threads=threads, ms=20.0 * naive_factor)]
    a = history.analyse(entries, repo=repo)
    [st] = [st for st in a.steps + a.no_code_change if st.series.variant == "register_tiles"]
    assert st.evidence == evidence and st.point.commit == new
    assert (st in a.steps, st in a.no_code_change) == (judged == "step", judged == "machine")
    if evidence in ("moved with controls", "beyond controls"):
        assert len(st.controls) == controls and st.drift == pytest.approx(naive_factor)
    from suitereport import dashboard
    [shown] = [x for x in dashboard.page_data(a)["steps" if judged == "step" else "no_code_change"]
               if x["benchmark"].startswith("serial:register_tiles")]
    assert shown["evidence"] == evidence
    # an unconfirmed CPU step says how to confirm it: both commits again, in one boot
    assert bool(shown["confirm"]) == (evidence == "unconfirmed")
    if shown["confirm"]:
        assert shown["confirm"].startswith(f"scripts/history backfill {base[:10]} {new[:10]} --again")
        assert "--backends serial:register_tiles --images 1200 --threads 1" in shown["confirm"]


def test_add_keeps_the_reports_boot_and_drops_one_that_is_no_id(tmp_path):
    store = tmp_path / "store.jsonl"
    for i, boot in enumerate(("0d1c2b3a-4e5f-6071-8293-a4b5c6d7e8f9", "<img src=x onerror=alert(1)>")):
        path = commit_report(tmp_path / f"r{i}.json", f"{i + 1}" * 40, f"2026-11-0{i + 1}T00:00:00Z")
        data = json.loads(path.read_text())
        data["meta"]["boot_id"] = boot
        path.write_text(json.dumps(data))
        assert run("add", path, "--store", store).returncode == 0
    boots = [json.loads(line).get("boot_id") for line in store.read_text().splitlines()]
    assert boots == ["0d1c2b3a-4e5f-6071-8293-a4b5c6d7e8f9", None]


def test_add_boot_id_puts_an_old_suites_reports_in_the_boot_they_ran_in(tmp_path):
    # An A/B run of an old build (no boot recorded) beside a new one (recorded) in one boot: with --boot-id
    # their step is judged within that boot; without it, never.
    boot = "0d1c2b3a-4e5f-6071-8293-a4b5c6d7e8f9"
    r = boots_repo(tmp_path)
    repo, commits = r.path, r.commits
    base, new = commits[-2], commits[-1]
    for with_boot in (False, True):
        store = tmp_path / f"store-{with_boot}.jsonl"
        for k in range(5):
            old = commit_report(tmp_path / f"a{k}.json", base, f"2026-11-01T0{k}:00:00Z", factor=1.0)
            assert run("add", old, "--store", store, *(["--boot-id", boot] if with_boot else [])).returncode == 0
            rep = commit_report(tmp_path / f"b{k}.json", new, f"2026-11-01T0{k}:30:00Z", factor=1.3)
            data = json.loads(rep.read_text())
            data["meta"]["boot_id"] = boot
            rep.write_text(json.dumps(data))
            assert run("add", rep, "--store", store).returncode == 0
        res = run("steps", "--store", store, "--repo", repo, "--commit", new, "--fail")
        if with_boot:
            assert res.returncode == 1 and "evidence: one boot, within that boot +30.0 % (5 v 5 runs, Holm over 2 benchmarks)" in res.stdout
        else:
            assert res.returncode == 0 and "evidence: unconfirmed" in res.stdout, res.stdout
    # a report that recorded another boot, or no boot id at all: one line, exit 2, nothing added
    other = json.loads(rep.read_text())
    other["meta"]["boot_id"] = "ffffffff-4e5f-6071-8293-a4b5c6d7e8f9"
    (tmp_path / "other.json").write_text(json.dumps(other))
    store = tmp_path / "refused.jsonl"
    for args, words in (((tmp_path / "a0.json", tmp_path / "other.json", "--boot-id", boot), "ran in boot ffffffff"),
                        ((tmp_path / "a0.json", "--boot-id", "<b>"), "not a boot id")):
        res = run("add", *args, "--store", store)
        assert res.returncode == 2 and words in res.stderr and len(res.stderr.strip().splitlines()) == 1, res.stderr
        assert not store.exists() or not store.read_text()


@pytest.mark.parametrize("rerun_factor, evidence", [(1.3, "one boot"), (1.0, "gone in one boot")])
@pytest.mark.parametrize("rerun_build", [None, "-march=native"])
def test_both_commits_rerun_in_one_boot_decide_a_step_across_boots(tmp_path, rerun_factor, evidence, rerun_build):
    # The step was seen across boots b1 -> b2 with no control; a backfill ran both commits again in boot b3,
    # built as the step's runs were, or its own way (its own line, whose two commits still compare).
    r = boots_repo(tmp_path)
    repo, commits = r.path, r.commits
    base, new = commits[-2], commits[-1]
    entries = [store_line(base, "2026-11-01T00:00:00Z", ms=10.0, boot_id="b1"),
               store_line(new, "2026-11-02T00:00:00Z", ms=13.0, boot_id="b2"),
               store_line(base, "2026-11-03T00:00:00Z", ms=11.0, boot_id="b3", label=""),
               store_line(new, "2026-11-03T01:00:00Z", ms=11.0 * rerun_factor, boot_id="b3")]
    entries[2]["id"] += "-rerun"
    if rerun_build:
        for k, e in enumerate(entries):
            e["runs"][0]["build"] = "GNU 12.2.0 -O3 " + ("-march=x86-64-v4" if k < 2 else rerun_build) + " | runtime: CPU"
    a = history.analyse(entries, repo=repo)
    [st] = [st for st in a.steps + a.no_code_change if st.series.variant == "register_tiles"
            and st.series.build_tag in ("", "-march=x86-64-v4")]  # the step seen across boots
    assert st.evidence == evidence and st.boot_ratio == pytest.approx(rerun_factor)
    assert (st in a.steps) == (evidence == "one boot") and (st in a.no_code_change) == (evidence != "one boot")
    assert st.boot_build == (rerun_build or "")


def test_steps_prints_one_line_a_step_and_filters_by_commit(tmp_path):
    r = boots_repo(tmp_path)
    repo, commits = r.path, r.commits
    base, new = commits[-2], commits[-1]
    store = write_store(tmp_path / "store.jsonl", [
        store_line(base, "2026-11-01T00:00:00Z", ms=10.0, boot_id="b1"),
        store_line(new, "2026-11-02T00:00:00Z", ms=13.0, boot_id="b1")])
    r = run("steps", "--store", store, "--repo", repo)
    assert r.returncode == 0, r.stderr
    [line] = r.stdout.splitlines()
    assert line.split()[:3] == ["slower", "+30.0", "%"] and "serial:register_tiles/images:1200/threads:1" in line
    assert f"{base[:10]}..{new[:10]}" in line and line.endswith("evidence: one boot, within that boot +30.0 %")
    assert run("steps", "--store", store, "--repo", repo, "--commit", new).stdout == r.stdout
    assert run("steps", "--store", store, "--repo", repo, "--commit", base).stdout.startswith(f"no step at {base[:10]}")
    one_line_error(run("steps", "--store", store, "--repo", repo, "--commit", "no-such-rev"), "no such commit")


def built(path, flags="-O3 -march=x86-64-v4", device=None):
    """The report at path as if built with those flags (meta.compiler.backend_flags) or run on that runtime."""
    data = json.loads(path.read_text())
    data["meta"]["compiler"]["backend_flags"] = {"serial": f"c++ {flags}", "kernels/cpu": f"c++ {flags}"}
    for r in data["runs"]:
        r["device"] = device or r["device"]
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize("other, tag", [
    ({"flags": "-O3 -march=native"}, "-march=native"),
    ({"device": "Kokkos::Serial, 1 thread"}, "Kokkos::Serial"),  # another runtime of one portable model
])
def test_a_benchmark_built_two_ways_is_two_lines_and_never_one_step(tmp_path, other, tag):
    # a (the verdict's build) and b built another way, 30 % slower: pooled, b would be a step; it is the build.
    a = built(commit_report(tmp_path / "a.json", "a" * 40, "2026-11-01T00:00:00Z"))
    b = built(commit_report(tmp_path / "b.json", "b" * 40, "2026-11-02T00:00:00Z", 1.3), **other)
    b_same = built(commit_report(tmp_path / "b2.json", "b" * 40, "2026-11-02T01:00:00Z", 1.01))
    entries = [history.entry_of(p, "m") for p in (a, b, b_same)]
    mine = [s for s in history.series(entries) if s.benchmark == "serial:naive/images:50/threads:1"]
    assert len(mine) == 2 and not any(p.step for s in mine for p in s.points)
    assert sorted(len(s.points) for s in mine) == [1, 2]  # b's two builds are not pooled
    assert tag in [s.build_tag for s in mine] and all(s.build_tag and s.build_tag in s.line_name for s in mine)
    # the same build, 30 % slower at b: the step is found
    entries[2] = history.entry_of(built(commit_report(tmp_path / "b2.json", "b" * 40, "2026-11-02T01:00:00Z", 1.3)), "m")
    [s] = [s for s in history.series(entries) if s.benchmark == "serial:naive/images:50/threads:1" and len(s.points) == 2]
    assert [p.step for p in s.points] == ["", "slower"]


def test_add_gives_the_entries_of_an_older_store_their_build(tmp_path):
    # A store written before runs kept their build: add of the same reports completes it, nothing is doubled.
    reports = [built(commit_report(tmp_path / f"{c}.json", c * 40, f"2026-11-0{i + 1}T00:00:00Z"))
               for i, c in enumerate("ab")]
    old = [history.entry_of(p, "m") for p in reports]
    for e in old:
        for r in e["runs"]:
            del r["build"]
    store = write_store(tmp_path / "store.jsonl", old)
    third = built(commit_report(tmp_path / "c.json", "c" * 40, "2026-11-03T00:00:00Z"))
    r = run("add", *reports, third, "--store", store)
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("already in the store") == 2 and r.stdout.count("added") == 1
    lines = [json.loads(line) for line in store.read_text().splitlines()]
    assert [e["git_commit"][0] for e in lines] == ["a", "b", "c"]
    assert all("-march=x86-64-v4" in run_["build"] for e in lines for run_ in e["runs"])
    assert run("add", *reports, "--store", store).stdout.count("already in the store") == 2
    assert store.read_text().count("\n") == 3


def test_a_report_that_records_no_build_joins_the_one_build_it_can_be(tmp_path):
    a = built(commit_report(tmp_path / "a.json", "a" * 40, "2026-11-01T00:00:00Z"))
    old = commit_report(tmp_path / "old.json", "0" * 40, "2026-10-01T00:00:00Z")  # no flags per folder
    entries = [history.entry_of(p, "m") for p in (old, a)]
    assert "build" not in entries[0]["runs"][0] and "-march=x86-64-v4" in entries[1]["runs"][0]["build"]
    [s] = [s for s in history.series(entries) if s.benchmark == "serial:naive/images:50/threads:1"]
    assert len(s.points) == 2 and not s.build_tag
    # with two builds to choose from it is a line of its own
    entries.append(history.entry_of(built(commit_report(tmp_path / "n.json", "b" * 40, "2026-11-02T00:00:00Z"),
                                          flags="-O3 -march=native"), "m"))
    mine = [s for s in history.series(entries) if s.benchmark == "serial:naive/images:50/threads:1"]
    assert sorted(s.build_tag for s in mine) == ["-march=native", "-march=x86-64-v4", "build not recorded"]


@pytest.mark.parametrize("runs, evidence, basis", [
    (5, "gone in one boot", "5 v 5 runs"),  # the runs' medians overlap: the processes differ, not the code
    (4, "one boot", "passes"),  # fewer than gate.MIN_RUNS: the pooled passes, which cannot see that
])
def test_in_one_boot_five_runs_a_side_are_tested_by_their_medians(tmp_path, runs, evidence, basis):
    # Each process lands somewhere in a 20 % band, its passes tight around that; the new commit's band is 12 %
    # higher. Its pooled passes differ beyond doubt, its five runs do not.
    r = boots_repo(tmp_path)
    repo, commits = r.path, r.commits
    base, new = commits[-2], commits[-1]
    tight = (0.999, 0.9995, 1.0, 1.0005, 1.001)
    entries = []
    for k in range(runs):
        for commit, ms in ((base, 9.0 + 0.5 * k), (new, 10.2 + 0.5 * k)):
            e = store_line(commit, f"2026-11-03T0{k}:00:00Z", ms=ms, spread=tight, boot_id="b1")
            e["id"] += f"-{k}"
            entries.append(e)
    a = history.analyse(entries, repo=repo)
    [st] = [st for st in a.steps + a.no_code_change if st.series.variant == "register_tiles"]
    assert st.evidence == evidence and st.boot_basis == basis
    # The same runs between two commits of which the newer changes a document only: the machine's, and the
    # line says what the runs of that boot read beside the pooled passes' ratio.
    docs = r.commit("notes", {"notes.md": "notes\n"})
    for e in entries:
        e["git_commit"] = docs if e["git_commit"] == new else new
    a = history.analyse(entries, repo=repo)
    [st] = a.no_code_change
    assert st.evidence == "no code change" and st.boot_basis == basis and st.boot_ratio is not None
    from suitereport.history_main import step_line
    assert f"evidence: no code change, within that boot {100 * (st.boot_ratio - 1):+.1f} %" in step_line(st, "machine")


@pytest.mark.parametrize("runs, others, evidence", [
    (5, 3, "gone in one boot"),  # one of 4 tested together: 5 v 5 runs cannot tell it from chance (p 4/252)
    (5, 0, "one boot"),          # alone, the same runs do (p 1/252)
    (8, 3, "one boot"),          # 8 runs a side do among 4 (p 4/12870): CI's recipe
])
def test_the_benchmarks_of_one_boot_are_tested_together(tmp_path, runs, others, evidence):
    # Every run of the new commit 20 % above every run of its parent, in one boot: alone a step beyond doubt.
    # Beside it, unchanged benchmarks whose runs overlap. Each tested alone at alpha, m benchmarks would give
    # m chances to fail CI by chance.
    r = boots_repo(tmp_path)
    repo, commits = r.path, r.commits
    base, new = commits[-2], commits[-1]
    entries = []
    for k in range(runs):
        for commit, factor in ((base, 1.0), (new, 1.2)):
            for variant, images, threads, ms in [("opt", 1200, 1, 10.0 * factor)] + [
                    ("naive", images, threads, 20.0 * (1 + 0.01 * (k if commit == base else runs - 1 - k)))
                    for images, threads in [(1200, 1), (1200, 2), (50000, 1)][:others]]:
                e = store_line(commit, f"2026-11-01T0{k}:{10 if commit == base else 40}:00Z", variant=variant,
                               images=images, threads=threads, ms=ms * (1 + 0.01 * k), boot_id="b1")
                e["id"] += f"-{k}-{images}-{threads}"
                entries.append(e)
    a = history.analyse(entries, repo=repo)
    [st] = [st for st in a.steps + a.no_code_change if st.series.variant == "register_tiles"]
    assert st.evidence == evidence and st.boot_basis == f"{runs} v {runs} runs" and st.boot_family == 1 + others
    assert st.boot_ratio == pytest.approx(1.2)
    store = write_store(tmp_path / "store.jsonl", entries)
    res = run("steps", "--store", store, "--repo", repo, "--commit", new, "--fail")
    assert res.returncode == (1 if evidence == "one boot" else 0), res.stdout + res.stderr
    assert ("Holm over 4 benchmarks" in res.stdout) == bool(others)


@pytest.mark.parametrize("after, undone", [
    ((10.3,), 2),          # the next commit is back: undone there
    ((12.9, 10.2), 3),     # still slower at the next, back at the one after
    ((10.2, 12.9), None),  # back, then slower again: slower today, a regression still
    ((), None),            # nothing measured after it
])
def test_a_regression_a_later_commit_undid_is_listed_apart(tmp_path, after, undone):
    # "Is this commit slower, since when?": a step whose benchmark every later measurement puts back within
    # the threshold of its base is no slower today; it is listed apart, never among the regressions.
    r = throwaway_repo(tmp_path, [(f"backends/serial/f{k}.cpp", f"change {k}") for k in range(5)])
    repo, commits = r.path, r.commits
    times = (10.0, 13.0) + after
    entries = [store_line(c, f"2026-11-0{k + 1}T00:00:00Z", ms=ms) for k, (c, ms) in enumerate(zip(commits, times))]
    a = history.analyse(entries, repo=repo)
    [st] = [st for st in a.steps + a.undone if st.point.commit == commits[1]]
    assert st.direction == "slower" and (st in a.undone) == (undone is not None) and (st in a.steps) == (undone is None)
    assert st.undone == (commits[undone] if undone else "")
    store = write_store(tmp_path / "store.jsonl", entries)
    res = run("steps", "--store", store, "--repo", repo, "--commit", commits[1], "--fail")
    assert res.returncode == 0 and res.stdout.startswith("undone ") and f"undone at {commits[undone][:10]}" in res.stdout \
        if undone else res.stdout.startswith("slower "), res.stdout
    from suitereport import dashboard
    assert [x["undone"] for x in dashboard.page_data(a)["undone"]] == ([commits[undone]] if undone else [])


def test_add_refuses_a_store_that_is_somebody_elses_one_line_file(tmp_path):
    # One line without a newline that is no entry read as a torn last line: cut off, the file emptied, exit 0.
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes, one line, no newline")
    one_line_error(run("add", SERIAL, "--store", notes), "not a history store", "kept")
    assert notes.read_text() == "my notes, one line, no newline"
    empty = tmp_path / "empty.jsonl"  # an empty file is a store with no line yet
    empty.write_text("")
    assert run("add", SERIAL, "--store", empty).returncode == 0 and len(empty.read_text().splitlines()) == 1


def test_names_are_drawn_as_text_not_read_as_mathtext(tmp_path):
    # `$\foo$` in a name was matplotlib mathtext: an unknown command, a traceback.
    data = json.loads(SERIAL.read_text())
    data["meta"]["cpu_model"] = r"CPU $\foo$"
    for r in data["runs"]:
        r["variant"] = r"v$\bar{$"
    (tmp_path / "r.json").write_text(json.dumps(data))
    store = tmp_path / "store.jsonl"
    assert run("add", tmp_path / "r.json", "--store", store).returncode == 0
    r = run("plot", "--store", store, "--out", tmp_path / "charts")
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    assert list((tmp_path / "charts").glob("*.png"))
    r = run_tool("plot", tmp_path / "r.json", "--out", tmp_path / "report-charts")
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr


# ---- what a step's verdict rests on, on series built from store lines (no git: the order is given)

A, B, C, D = "a" * 40, "b" * 40, "c" * 40, "d" * 40


def series_of(entries, order, **kw):
    """{benchmark title: series} of the entries in that commit order."""
    return {s.title: s for s in history.series(entries, order=order, **kw)}


def step_of(s, order):
    [st] = history.steps([s], order, {})
    return st


def test_a_point_of_a_failed_report_is_failed():
    failed = store_line(A, "2026-11-01T01:00:00Z")
    failed["runs"][0]["passed"] = False
    [s] = series_of([store_line(A, "2026-11-01T00:00:00Z"), failed], [A]).values()
    assert s.points[0].passed is False and s.points[0].reports == 2


def test_a_step_whose_base_git_does_not_know_blames_its_own_commit_only():
    entries = [store_line(A, "2026-11-01T00:00:00Z"), store_line(C, "2026-11-03T00:00:00Z", ms=13.0)]
    [s] = series_of(entries, [A, C]).values()
    st = history.steps([s], [B, C], {})[0]  # A is not in the order: not every commit up to C
    assert st.point.commit == C and st.range == [(C, "")]


def test_a_candidate_step_of_busy_points_is_one_the_next_point_keeps():
    def busy_after(*later):
        entries = [store_line(A, "2026-11-01T00:00:00Z")] + [
            store_line(c, f"2026-11-0{k + 2}T00:00:00Z", ms=ms, busy=True)
            for k, (c, ms) in enumerate(zip((B, C), later))]
        [s] = series_of(entries, [A, B, C], include_busy=True).values()
        return [st for st in history.steps([s], [A, B, C], {}) if st.point.commit == B][0]

    assert history.sustained(busy_after(13.0, 13.1), 0.10, 0.01)  # the next point is as slow
    assert not history.sustained(busy_after(13.0, 10.1), 0.10, 0.01)  # back at the next: the machine's
    assert not history.sustained(busy_after(13.0, 8.0), 0.10, 0.01)  # faster at the next: no slower step kept


@pytest.mark.parametrize("later, undone", [
    ((10.0 * 1.1,), B),           # exactly at the threshold over the base: within it
    ((10.0 * 1.1 * 1.001,), ""),  # just beyond
])
def test_a_slower_step_is_undone_from_the_point_back_within_the_threshold(later, undone):
    order = [A, C, B, D][:2 + len(later)]
    entries = [store_line(A, "2026-11-01T00:00:00Z", spread=(1.0,) * 5),
               store_line(C, "2026-11-02T00:00:00Z", ms=13.0, spread=(1.0,) * 5)]
    entries += [store_line(c, f"2026-11-0{k + 3}T00:00:00Z", ms=ms, spread=(1.0,) * 5)
                for k, (c, ms) in enumerate(zip((B, D), later))]
    [s] = series_of(entries, order).values()
    st = [st for st in history.steps([s], order, {}) if st.point.commit == C][0]
    assert (history.undone_at(st, 0.10) or "") == undone


def test_a_busy_point_back_within_the_threshold_does_not_undo_a_step():
    entries = [store_line(A, "2026-11-01T00:00:00Z"), store_line(C, "2026-11-02T00:00:00Z", ms=13.0),
               store_line(B, "2026-11-03T00:00:00Z", ms=10.0, busy=True)]
    [s] = series_of(entries, [A, C, B]).values()
    st = step_of(s, [A, C, B])
    assert st.point.commit == C and history.undone_at(st, 0.10) is None


def test_the_median_of_an_even_count_is_the_mean_of_the_middle_two():
    entries = [store_line(A, "2026-11-01T00:00:00Z", spread=(0.9, 1.0, 1.2, 1.5))]
    [s] = series_of(entries, [A]).values()
    assert s.points[0].median_ms == pytest.approx(11.0)


@pytest.mark.parametrize("readings, cores, busy", [
    ({"other_runnable_start": 0, "other_runnable_end": 2}, 4, True),  # half the cores, at the end
    ({"other_runnable_start": 1, "other_runnable_end": 1}, 4, False),
    ({"other_runnable_start": 1}, 0, True),  # no core count: at least one other process
])
def test_a_stored_run_is_busy_by_the_suites_own_rule(readings, cores, busy):
    assert history.is_busy({}, {"machine_load": readings}, cores) is busy


def test_the_boot_two_points_share_is_the_one_with_the_most_passes():
    a = history.Point(A, "", 10.0, [], True, by_boot={"b1": [10.0] * 5, "b2": [10.0] * 20, "b3": [10.0] * 50})
    b = history.Point(B, "", 13.0, [], True, by_boot={"b1": [13.0] * 5, "b2": [13.0] * 10})
    assert history.shared_boot(a, b) == "b2"


def test_controls_are_quiet_benchmarks_of_the_same_boots_whose_code_did_not_change():
    def at(commit, boot, k, **kw):
        return store_line(commit, f"2026-11-0{k}T00:00:00Z", boot_id=boot, **kw)

    entries = [at(A, "b1", 1), at(B, "b2", 2, ms=13.0)]  # the step: serial:register_tiles
    for variant, new_boot, busy in (("naive", "b2", False),       # a control
                                    ("winograd", "b3", False),    # the new commit ran in another boot
                                    ("tiled", "b2", True),        # on a busy machine
                                    ("changed", "b2", False)):    # its code changed
        entries += [at(A, "b1", 1, variant=variant, ms=20.0), at(B, new_boot, 2, variant=variant, ms=22.0, busy=busy)]
    entries += [at(A, "b1", 1, backend="pytorch", variant="cpu", ms=5.0),
                at(B, "b2", 2, backend="pytorch", variant="cpu", ms=5.5)]
    by = series_of(entries, [A, B])
    st = step_of(by["serial:register_tiles/images:1200/threads:1"], [A, B])

    def changed(base, new, backend, variant):  # a peer's code is never the project's: asked, and ignored
        return variant in ("changed", "cpu")

    got = history.controls_of(st, list(by.values()), changed)
    assert sorted(t for t, _ in got) == ["pytorch:cpu/images:1200/threads:1", "serial:naive/images:1200/threads:1"]
    assert [r for _, r in got] == pytest.approx([1.1, 1.1])


def test_a_step_is_the_machines_where_it_moved_within_the_threshold_of_its_controls():
    # Threshold 25 %: the band is [1 / 1.25, 1.25] = [0.8, 1.25], both ends in; the controls moved 1.25x
    # exactly; the step's ratio is set to each case's (numbers binary fractions hold exactly)
    def judged(ratio):
        entries = [store_line(A, "2026-11-01T00:00:00Z", ms=4.0, spread=(1.0,) * 5),
                   store_line(B, "2026-11-02T00:00:00Z", ms=8.0, spread=(1.0,) * 5)]
        for variant in ("naive", "tiled", "winograd"):
            entries += [store_line(A, "2026-11-01T00:00:00Z", variant=variant, ms=4.0, spread=(1.0,) * 5),
                        store_line(B, "2026-11-02T00:00:00Z", variant=variant, ms=5.0, spread=(1.0,) * 5)]
        by = series_of(entries, [A, B], threshold=0.25)
        st = step_of(by["serial:register_tiles/images:1200/threads:1"], [A, B])
        st.ratio = ratio
        history.judge_across_boots([st], list(by.values()), lambda *a: {}, 0.25)
        return st.evidence

    assert judged(1.5625) == "moved with controls"  # 1.5625 / 1.25 = 1.25: at the band's top
    assert judged(1.6) == "beyond controls"
    assert judged(0.975) == "beyond controls"  # 0.975 / 1.25 = 0.78: under 1 / 1.25, above 1 - 0.25


@pytest.mark.parametrize("field, value, message", [
    ("median_ms", 0, "median_ms is not a finite positive number"),
    ("samples", [10.0, 0], "a sample is not a finite positive number"),
])
def test_a_stored_time_of_zero_is_refused(tmp_path, field, value, message):
    e = store_line(A, "2026-11-01T00:00:00Z")
    e["runs"][0][field] = value
    with pytest.raises(load.ReportError, match=message):
        history.read_store(write_store(tmp_path / "store.jsonl", [e]))


def test_a_slower_step_that_one_boot_shows_faster_is_gone_in_that_boot():
    # Across boots the new commit is 50 % slower; both commits run in boot b3 show it 20 % faster: no slower step
    def at(commit, boot, hour, ms):
        e = store_line(commit, f"2026-11-01T{hour:02}:00:00Z", ms=ms, boot_id=boot)
        e["id"] += f"-{boot}-{hour}"
        return e

    entries = [at(A, "b1", 1, 10.0), at(A, "b3", 10, 10.0)] + [at(B, "b2", h, 15.0) for h in range(2, 8)] + [
        at(B, "b3", 11, 8.0)]
    [s] = series_of(entries, [A, B]).values()
    st = step_of(s, [A, B])
    assert st.direction == "slower"
    kept, machine = history.judge_across_boots([st], [s], lambda *a: {}, 0.10)
    assert machine == [st] and st.evidence == "gone in one boot" and st.boot_ratio == pytest.approx(0.8)


def test_a_damaged_line_before_a_torn_last_line_is_named(tmp_path):
    """Only the last line may be torn (an interrupted write): a bad line before it is damage, not the end."""
    good = [json.dumps(store_line(c, f"2026-11-0{k + 1}T00:00:00Z")) for k, c in enumerate((A, B))]
    store = tmp_path / "store.jsonl"
    store.write_text(good[0] + "\n" + '{"store_version": 1, "id"\n' + good[1] + "\n" + good[1][:20])
    with pytest.raises(load.ReportError, match="store.jsonl:2: not JSON"):
        history.read_store(store)
    store.write_text(good[0] + "\n" + good[1] + "\n" + good[1][:20])
    assert [e["git_commit"] for e in history.read_store(store)] == [A, B]


@pytest.mark.parametrize("own, others, shown", [
    (9, 3, "8 of its own, no other, 4 more"),   # more suspects than lines: no other commit at all
    (3, 7, "3 of its own, 5 others, 2 more"),   # the newest others fill the eight lines
    (3, 6, "3 of its own, 5 others, 1 more"),
    (2, 3, "2 of its own, 3 others"),           # all of them: no "more" line
])
def test_a_steps_range_shows_eight_commits_its_own_first(tmp_path, own, others, shown):
    # The dashboard's list of the commits that could have caused a step: the suspects (commits that change
    # the backend's code), then the newest other commits, eight lines in all, then how many more.
    r = throwaway_repo(tmp_path, [("README", "base")]
                       + [(f"backends/serial/k{k}.cpp", f"serial change {k}") for k in range(own)]
                       + [(f"docs/d{k}.md", f"docs {k}") for k in range(others)])
    entries = [store_line(r.commits[0], "2026-11-01T00:00:00Z", ms=10.0),
               store_line(r.commits[-1], "2026-11-02T00:00:00Z", ms=13.0)]
    store = write_store(tmp_path / "store.jsonl", entries)
    out = tmp_path / "d.html"
    assert run("html", "--store", store, "--repo", r.path, "--out", out).returncode == 0
    dom = dump_dom(out.as_uri())
    [cell] = re.findall(r'<ul class="range">(.*?)</ul>', dom, re.S)
    items = re.findall(r"<li[^>]*>(.*?)</li>", cell, re.S)
    hashes = [re.search(r'<span class="hash">(\w+)</span>', li) for li in items]
    listed = [m.group(1) for m in hashes if m]
    n_own = min(own, 8)
    expect = [c[:10] for c in r.commits[1:1 + own]][::-1][:n_own]  # its own (all "its folder"), newest first
    n_others = 8 - n_own
    if n_others:
        expect += [c[:10] for c in r.commits[1 + own:]][-n_others:][::-1]  # the newest others, newest first
    assert listed == expect, (shown, items)
    more = own + others - len(expect)
    assert items[len(expect):] == ([f"\u2026 {more} more"] if more else []), (shown, items)
    assert cell.count('class="suspect"') == n_own
