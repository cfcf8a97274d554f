"""Tests of `history backfill` and `history bisect` on a throw-away git repository whose "benchmark" is a
small Python script writing a suite-format report (the build and run commands are pluggable, so no C++
is built), and of what the history concludes: git order, busy machines, peers, renamed variants."""

import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from types import SimpleNamespace

import pytest

SCRIPTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(SCRIPTS))

from suitereport import bisect, git_order, history, identity, load  # noqa: E402
from git_repos import ThrowawayRepo  # noqa: E402
from test_history import store_line, write_store  # noqa: E402
from tools_inprocess import run_tool  # noqa: E402

BENCH = '''import json, sys, pathlib
here = pathlib.Path(__file__).parent
factor = float((here / "factor.txt").read_text())
ms = 10.0 * factor
samples = [ms * (1 + 0.005 * k) for k in (-3, -2, -1, 0, 1, 2, 3, 0.5)]
report = {"schema_version": 1,
          "meta": {"date_utc": "2026-11-24T00:00:00Z", "git_commit": "unknown", "cpu_model": "Test CPU",
                   "logical_cores": 4, "host": "t"},
          "runs": [{"backend": "serial", "variant": "opt", "images": 1200, "threads": 1, "device": "CPU",
                    "forward_ms": {"median": ms, "samples": samples}, "validation": {"passed": True},
                    "machine_load": {"other_runnable_start": 0, "other_runnable_end": 0}}]}
pathlib.Path(sys.argv[1]).write_text(json.dumps(report))
'''
BENCHMARK = "serial:register_tiles/images:1200/threads:1"  # its run (serial:opt is register_tiles today)
SLOW_AT = 7  # the commit (1-based) that makes the benchmark 1.5x slower


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    """12 commits; the 7th makes the benchmark 1.5x slower, the 4th breaks the build (BROKEN), the 5th
    mends it."""
    repo = ThrowawayRepo(tmp_path_factory.mktemp("repo"))
    for i in range(1, 13):
        files = {"bench.py": BENCH, "factor.txt": "1.5" if i >= SLOW_AT else "1.0", "notes.txt": f"step {i}\n"}
        if i == 4:
            files["BROKEN"] = ""
        elif i == 5:
            files["BROKEN"] = None
        repo.commit("make it slower by half" if i == SLOW_AT else f"change {i}", files)
    return repo.path, repo.commits


# The run commands start this interpreter: `python3` on PATH may be a version manager's shim that takes
# seconds to start, for each of the hundreds of runs below.
PYTHON = shlex.quote(sys.executable)


def probe_args(tmp, repo_dir):
    return ["--repo", repo_dir, "--workdir", tmp / "work", "--build-cmd", "test ! -e {src}/BROKEN",
            "--run-cmd", PYTHON + " {src}/bench.py {out}", "--quiet-wait", "0"]


def test_bisect_names_the_commit_that_made_the_benchmark_slower(repo, tmp_path):
    r, commits = repo
    res = run_tool("history", "bisect", "serial:register_tiles/images:1200/threads:1", commits[0], commits[-1],
                   *probe_args(tmp_path, r))
    assert res.returncode == 0, res.stderr
    assert f"first slower commit: {commits[SLOW_AT - 1]} make it slower by half" in res.stdout
    assert "step: 1.500x (+50.0 %)" in res.stdout
    probes = res.stdout.count("\nprobe ") + res.stdout.startswith("probe ")
    assert probes <= 6, res.stdout  # 2 ends + log2(11) probes (+1 for the broken commit), not 12 builds
    # GOOD and BAD without a step between them: one line, exit 2
    res = run_tool("history", "bisect", "serial:register_tiles/images:1200/threads:1", commits[0], commits[2],
                   *probe_args(tmp_path, r))
    assert res.returncode == 2 and "no step" in res.stderr


SPREAD = (0.89, 0.93, 0.95, 0.97, 0.99, 1.0, 1.0, 1.01, 1.03, 1.06, 1.09, 1.12)


def bisect_over(monkeypatch, repo, passes, good, bad):
    """bisect.bisect over the repository's commits `good` to `bad` (indices), with passes(i) the passes
    commit i gives (None: it does not build) instead of a build and a run."""
    r, commits = repo
    index = {c: i for i, c in enumerate(commits)}

    def measure(probe, commit, benchmark, log):
        got = passes(index[commit])
        return None if got is None else (statistics.median(got), got)

    monkeypatch.setattr(bisect, "measure", measure)
    return bisect.bisect(SimpleNamespace(repo=r), "serial:register_tiles/images:1200/threads:1", commits[good],
                         commits[bad], log=lambda line: None)


def test_bisect_narrows_down_to_two_neighbours(repo, monkeypatch):
    # commits 4..11, the step at 6: the search reaches (5, 7) and must still probe 6
    found = bisect_over(monkeypatch, repo, lambda i: [(10.0 if i < 6 else 15.0) * f for f in SPREAD], 4, 11)
    assert found.commit == repo[1][6] and found.good == repo[1][5] and found.ratio == pytest.approx(1.5)


def test_bisect_finds_a_faster_step_too(repo, monkeypatch):
    found = bisect_over(monkeypatch, repo, lambda i: [(10.0 if i < 6 else 7.0) * f for f in SPREAD], 4, 11)
    assert found.commit == repo[1][6] and found.ratio == pytest.approx(0.7)


def test_bisect_refuses_ends_that_differ_by_noise_only(repo, monkeypatch):
    # BAD's median 13.7 % up, but its passes overlap GOOD's (gate: "noisy"): no step to look for
    busy = (0.62, 0.7, 0.8, 0.9, 0.97, 1.0, 1.0, 1.05, 1.2, 1.4, 1.6, 1.8)
    with pytest.raises(load.ReportError, match=r"no step .* \(noisy"):
        bisect_over(monkeypatch, repo, lambda i: [10.0 * f for f in SPREAD] if i == 0 else [11.37 * f for f in busy],
                    0, 11)


def test_bisect_refuses_a_bad_that_does_not_descend_from_good(repo, monkeypatch):
    with pytest.raises(load.ReportError, match="does not descend from"):
        bisect_over(monkeypatch, repo, lambda i: [10.0 * f for f in SPREAD], 5, 2)


def test_bisect_needs_a_time_at_both_ends(repo, monkeypatch):
    def step(i):
        return [(10.0 if i < 6 else 15.0) * f for f in SPREAD]
    for dead, end in ((4, "GOOD"), (11, "BAD")):
        with pytest.raises(load.ReportError, match=f"^{end} \\({repo[1][dead][:10]}\\) gives no time for {BENCHMARK}: "
                                                   "bisect needs both ends$"):
            bisect_over(monkeypatch, repo, lambda i: None if i == dead else step(i), 4, 11)


def test_bisect_skips_commits_it_cannot_measure_and_names_them(repo, monkeypatch):
    # commits 5 to 8 do not build: the step lies in 5..9, the search says so and which commits it could not see
    probed = []

    def passes(i):
        probed.append(i)
        return None if 5 <= i <= 8 else [(10.0 if i < 6 else 15.0) * f for f in SPREAD]
    found = bisect_over(monkeypatch, repo, passes, 4, 11)
    assert found.commit == repo[1][9] and found.good == repo[1][4] and found.ratio == pytest.approx(1.5)
    assert found.untestable == repo[1][5:9] and found.probes == len(probed) == len(set(probed))
    # a tie (as near to GOOD as to BAD in ratio) is not nearer to BAD: commit 6 at 20 ms between 10 and 40
    found = bisect_over(monkeypatch, repo, lambda i: [(10.0 if i < 6 else 20.0 if i == 6 else 40.0) * f
                                                      for f in SPREAD], 4, 11)
    assert found.commit == repo[1][7] and found.ratio == pytest.approx(2.0) and found.untestable == []


class ReportingProbe:
    """What bisect.measure asks of a probe: every commit builds, and its run writes `runs` as its report."""

    backends, images, threads = (), "", None

    def __init__(self, runs):
        self.runs = runs

    def checkout(self, commit):
        pass

    def build_commit(self, commit):
        return True, ""

    def runnable_backends(self):
        return list(self.backends)

    def run_commit(self, commit, out, wanted):
        out.write_text(json.dumps({"schema_version": 1, "meta": {"cpu_model": "Test CPU", "logical_cores": 4},
                                   "runs": self.runs}))
        return 0, "", ""


def test_bisect_measures_the_benchmarks_thread_count(tmp_path):
    def run_at(threads, ms):
        return {"backend": "serial", "variant": "opt", "images": 1200, "threads": threads, "device": "CPU",
                "forward_ms": {"median": ms, "samples": [ms] * 5}, "validation": {"passed": True}}

    probe = ReportingProbe([run_at(2, 5.0), run_at(1, 10.0)])
    got = bisect.measure(probe, "c" * 40, "serial:register_tiles/images:1200/threads:1", lambda line: None)
    assert got == (10.0, [10.0] * 5) and probe.threads == 1


def test_a_benchmark_is_named_as_the_dashboard_names_it():
    assert bisect.parse_benchmark("openmp:batch/images:64/threads:3") == ("openmp", "batch", 64, 3)
    assert bisect.parse_benchmark("kokkos:winograd/images:1200") == ("kokkos", "winograd", 1200, None)  # a GPU's
    with pytest.raises(load.ReportError, match=r"^'serial:opt/1200': a benchmark is backend:variant/images:N/threads:T "
                                               r"\(as the dashboard and `history plot` name it\)$"):
        bisect.parse_benchmark("serial:opt/1200")


def run_of(backend="serial", variant="opt", images=1200, threads=1, ms=10.0, gpu=False):
    return {"backend": backend, "variant": variant, "images": images, "threads": threads,
            "device": "NVIDIA H200" if gpu else "CPU", "forward_ms": {"median": ms, "samples": [ms] * 5},
            "validation": {"passed": True}}


def test_bisect_measures_the_run_of_the_benchmark_and_nothing_else(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the report's temporary folder

    def measure(benchmark, *runs):
        return bisect.measure(ReportingProbe(list(runs)), "c" * 40, benchmark, lambda line: None)
    assert measure(BENCHMARK, run_of("openmp", "register_tiles", ms=1.0), run_of(images=600, ms=2.0),
                   run_of(ms=3.0)) == (3.0, [3.0] * 5)
    # a GPU run is its GPU's, whatever threads the benchmark names; a benchmark without threads takes any
    assert measure("serial:register_tiles/images:1200/threads:2", run_of(threads=270336, ms=4.0, gpu=True))[0] == 4.0
    assert measure("serial:register_tiles/images:1200", run_of(threads=7, ms=5.0))[0] == 5.0
    assert measure(BENCHMARK, run_of(threads=2)) is None


class FailingProbe(ReportingProbe):
    """A probe whose commit fails at one step: `how` says which."""

    def __init__(self, how):
        super().__init__([run_of()])
        self.how = how

    def build_commit(self, commit):
        return (False, "build command exit 2") if self.how == "build" else (True, "")

    def runnable_backends(self):
        return [] if self.how == "absent" else super().runnable_backends()

    def run_commit(self, commit, out, wanted):
        if self.how == "no report":
            return 3, "", ""
        if self.how == "bad report":
            out.write_text("{not json")
            return 0, "", ""
        return super().run_commit(commit, out, wanted)


@pytest.mark.parametrize("how, said", [("build", "build command exit 2"),
                                       ("absent", "no serial:register_tiles at this commit"),
                                       ("no report", "the run wrote no report (exit 3)"),
                                       ("bad report", "report.json"),
                                       ("other benchmark", "the report has no serial:register_tiles/images:600")])
def test_a_commit_that_gives_no_time_is_none_and_the_log_says_why(how, said, tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    # bisect skips such a commit for a neighbour: a time measured anyway (a stale build's) would mislead it
    log = []
    benchmark = "serial:register_tiles/images:600" if how == "other benchmark" else BENCHMARK
    assert bisect.measure(FailingProbe(how), "c" * 40, benchmark, log.append) is None
    assert len(log) == 1 and log[0].startswith("  cccccccccc: ") and said in log[0], log


def test_backfill_stores_each_commit_with_its_subject_and_failures_and_resumes(repo, tmp_path):
    r, commits = repo
    store = tmp_path / "store.jsonl"
    res = run_tool("history", "backfill", f"{commits[0]}..{commits[-1]}", "--store", store,
                   "--backends", "serial:register_tiles", *probe_args(tmp_path, r))
    assert res.returncode == 0, res.stderr
    assert "backfill: 1 build_failed, 10 ok" in res.stdout  # A..B: the 11 commits after A
    entries = history.read_store(store)
    by_commit = {e["git_commit"]: e for e in entries}
    assert set(by_commit) == set(commits[1:])
    broken = by_commit[commits[3]]
    assert broken["status"] == "build_failed" and broken["runs"] == [] and broken["git_subject"] == "change 4"
    slow = by_commit[commits[SLOW_AT - 1]]
    assert slow["git_subject"] == "make it slower by half" and slow["git_order"] == SLOW_AT
    assert slow["runs"][0]["median_ms"] == pytest.approx(15.0) and "machine_load" in slow["backfill"]
    # resumed: nothing is built twice; --every 3 picks from the newest
    res = run_tool("history", "backfill", f"{commits[0]}..{commits[-1]}", "--store", store, "--every", "3",
                   "--backends", "serial:register_tiles", *probe_args(tmp_path, r))
    assert res.returncode == 0 and "backfill: 4 skipped" in res.stdout, res.stdout
    # the history sees the step where it is, lists the failure, and orders by git
    a = history.analyse(history.read_store(store), repo=r)
    assert a.order == commits[1:]
    (step,) = a.steps
    assert step.point.commit == commits[SLOW_AT - 1] and step.direction == "slower"
    assert step.ratio == pytest.approx(1.5) and step.confidence > 0.99
    # One backfill runs in one boot: its step compares like for like (the old suites recorded no boot id).
    if identity.this_boot_id():
        assert {e.get("boot_id") for e in entries if e["runs"]} == {identity.this_boot_id()}
        assert step.evidence == "one boot"
    assert [c for c, _ in step.range] == [commits[SLOW_AT - 1]]
    assert [(c, st) for c, _, st, _ in a.failures] == [(commits[3], "build_failed")]


def test_five_runs_a_side_in_one_boot_confirm_a_regression_and_fail_the_steps(repo, tmp_path):
    # What CI does with a commit and its parent: both built once and run 5 times, then `steps --fail`.
    r, commits = repo
    store = tmp_path / "store.jsonl"
    before, slow = commits[SLOW_AT - 2], commits[SLOW_AT - 1]
    res = run_tool("history", "backfill", before, slow, "--runs", "5", "--store", store,
                   "--backends", "serial:register_tiles", *probe_args(tmp_path, r))
    assert res.returncode == 0 and "backfill: 2 ok" in res.stdout, res.stdout + res.stderr
    assert all(f"] {slow[:10]} make it slower by half: ok, 1 benchmarks (run {k} of 5)" in res.stdout
               for k in range(1, 6))
    entries = history.read_store(store)
    assert sorted(e["git_commit"] for e in entries) == sorted([before] * 5 + [slow] * 5)
    args = ["steps", "--store", store, "--repo", r, "--commit", slow]
    assert run_tool("history", *args).returncode == 0  # without --fail, a step is printed, not failed
    res = run_tool("history", *args, "--fail")
    if not identity.this_boot_id():  # no boot recorded: never "one boot", so nothing confirmed
        assert res.returncode == 0
        return
    assert res.returncode == 1 and "confirmed in one boot" in res.stderr, res.stdout + res.stderr
    assert "evidence: one boot, within that boot +50.0 % (5 v 5 runs)" in res.stdout
    res = run_tool("history", "steps", "--store", store, "--repo", r, "--commit", before, "--fail")
    assert res.returncode == 0 and res.stdout.startswith(f"no step at {before[:10]}")
    one_line = run_tool("history", "backfill", before, "--runs", "0", "--store", store, *probe_args(tmp_path, r))
    assert one_line.returncode == 2 and "--runs 0: at least 1" in one_line.stderr


def test_a_relative_workdir_is_the_callers_not_the_worktrees(repo, tmp_path, monkeypatch):
    # The build and run commands run inside the worktree; {src} must still name it from there (CI passes
    # --workdir build/history-ci).
    r, commits = repo
    monkeypatch.chdir(tmp_path)
    args = probe_args(tmp_path, r)
    args[args.index("--workdir") + 1] = "work-relative"
    res = run_tool("history", "backfill", f"{commits[0]}..{commits[5]}", "--store", tmp_path / "s.jsonl",
                   "--backends", "serial:register_tiles", *args)
    assert res.returncode == 0, res.stderr
    assert "backfill: 1 build_failed, 4 ok" in res.stdout, res.stdout + res.stderr


def test_commits_are_in_git_order_not_report_order(repo):
    r, commits = repo
    # reports of old commits made last (a backfill) come first all the same
    entries = [store_line(c, f"2026-12-{28 - i:02d}T00:00:00Z") for i, c in enumerate(commits)]
    order, subjects = git_order.order(entries, r)
    assert order == commits and subjects[commits[SLOW_AT - 1]] == "make it slower by half"
    # commits git does not know keep their place by date
    stranger = store_line("f" * 40, "2026-12-20T00:00:00Z")
    order, _ = git_order.order(entries + [stranger], r)
    assert order[-1] == "f" * 40


def three(busy_middle=False, busy_last=False, backend="serial", factors=(1.0, 1.3, 1.3)):
    return [store_line(c, f"2026-11-0{i + 1}T00:00:00Z", backend=backend, ms=10 * f, busy=b)
            for i, (c, f, b) in enumerate(zip(("a" * 40, "b" * 40, "c" * 40), factors,
                                             (False, busy_middle, busy_last)))]


def steps_of(entries, include_busy=False):
    s = history.series(entries, order=["a" * 40, "b" * 40, "c" * 40], include_busy=include_busy)
    return [(p.commit[0], p.step) for x in s for p in x.points if p.step]


def test_a_report_made_under_load_is_drawn_but_no_verdict():
    assert steps_of(three()) == [("b", "slower")]
    # the step lands on the busy commit: it is drawn (a point) but the verdict waits for the next quiet one
    entries = three(busy_middle=True)
    (s,) = history.series(entries, order=["a" * 40, "b" * 40, "c" * 40])
    assert [p.busy for p in s.points] == [False, True, False]
    assert steps_of(entries) == [("c", "slower")]
    assert s.points[2].base == "a" * 40  # the base is the last quiet point, not the busy one
    # busy at the end: no verdict at all, unless asked
    entries = three(busy_middle=True, busy_last=True)
    assert steps_of(entries) == []
    assert steps_of(entries, include_busy=True) == [("b", "slower")]
    # a quiet report of the same commit outweighs a busy one
    entries = three() + [store_line("b" * 40, "2026-11-02T01:00:00Z", ms=13.0, busy=True, id="b2")]
    (s,) = history.series(entries, order=["a" * 40, "b" * 40, "c" * 40])
    assert not s.points[1].busy and s.points[1].reports == 1


def test_peers_never_get_a_verdict():
    assert steps_of(three(backend="pytorch", factors=(1.0, 2.0, 2.0))) == []


def test_renamed_variants_and_gpu_series_are_one_series():
    # openmp:batch is openmp:image_parallel today (backends/openmp/manifest.json)
    entries = [store_line("a" * 40, "2026-11-01T00:00:00Z", backend="openmp", variant="batch", threads=2),
               store_line("b" * 40, "2026-11-02T00:00:00Z", backend="openmp", variant="image_parallel", threads=2)]
    (s,) = history.series(entries, order=["a" * 40, "b" * 40])
    assert s.benchmark == "openmp:image_parallel/images:1200/threads:2" and len(s.points) == 2
    # a GPU run's series is named by its GPU and has no threads (Kokkos' launch width is no setting)
    entries = [store_line(c, d, backend="kokkos", variant="winograd", threads=270336, on_gpu=True, gpu="NVIDIA H200",
                          cpu=cpu, cores=cores)
               for c, d, cpu, cores in (("a" * 40, "2026-11-01T00:00:00Z", "Intel Xeon", 16),
                                        ("b" * 40, "2026-11-02T00:00:00Z", "AMD EPYC", 2))]
    (s,) = history.series(entries, order=["a" * 40, "b" * 40])
    assert s.benchmark == "kokkos:winograd/images:1200" and s.machine == "NVIDIA H200" and len(s.points) == 2
    # old lines without a core count take it from the lines of the same CPU model
    entries = [store_line("a" * 40, "2026-11-01T00:00:00Z", cores=0), store_line("b" * 40, "2026-11-02T00:00:00Z")]
    (s,) = history.series(entries, order=["a" * 40, "b" * 40])
    assert s.machine == "AMD EPYC, 2 cores" and len(s.points) == 2


def test_busy_steps_are_candidates_on_the_page_never_regressions(tmp_path):
    entries = three(busy_middle=True, busy_last=True) + three(backend="pytorch", factors=(1.0, 2.0, 2.0))
    a = history.analyse(entries)
    assert a.steps == [] and [(st.series.backend, st.point.commit[0]) for st in a.busy_steps] == [("serial", "b")]
    store = write_store(tmp_path / "store.jsonl", entries)
    out = tmp_path / "d.html"
    assert run_tool("history", "html", "--store", store, "--out", out).returncode == 0
    from test_history import dump_dom
    dom = dump_dom(out.as_uri())
    regressions = dom.split('id="regressions"')[1].split("</div>")[0]
    candidates = dom.split('id="candidates"')[1].split("</div>")[0]
    assert "No regression found" in regressions and "step-row" not in regressions
    assert candidates.count('class="step-row slower"') == 1 and "pytorch" not in candidates


def test_default_set_comes_from_the_manifests(tmp_path, monkeypatch):
    """The history's default set is the manifests' "history" variants, and only their backends are built: a
    backend folder with the field joins both, one without it is switched off."""
    from suitereport import manifests
    for name, manifest in (("alpha", {"order": 1, "kind": "cpu", "history": ["fast", "faster"]}),
                           ("beta", {"order": 2, "kind": "gpu"})):
        (tmp_path / name).mkdir()
        (tmp_path / name / "manifest.json").write_text(json.dumps(manifest))
    monkeypatch.setattr(manifests, "BACKENDS_DIR", tmp_path)
    assert manifests.history_set() == ("alpha:fast", "alpha:faster")
    import importlib
    from suitereport import backfill
    try:
        reloaded = importlib.reload(backfill)
        assert reloaded.DEFAULT_SET == ("alpha:fast", "alpha:faster")
        quick = reloaded.cmake_options(reloaded.DEFAULT_SET)
        assert "-DWITH_BETA=OFF" in quick and "-DWITH_ALPHA=OFF" not in quick
        # a set naming another backend (a step's confirmation: --backends beta:x) builds that one instead
        asked = reloaded.cmake_options(("beta:x",))
        assert "-DWITH_ALPHA=OFF" in asked and "-DWITH_BETA=OFF" not in asked
        assert "-DWITH_BETA=AUTO" in asked  # a re-used build tree may have cached it OFF
    finally:
        monkeypatch.undo()
        importlib.reload(backfill)
    assert backfill.DEFAULT_SET and all(":" in want for want in backfill.DEFAULT_SET)


def test_the_default_build_builds_the_backends_it_is_asked_to_run(tmp_path):
    # The dashboard's command that confirms a step of onednn:fp32 passes --backends onednn:fp32: the build
    # must not switch oneDNN off, as the quick set's build does.
    from suitereport import backfill
    calls = []
    probe = backfill.Probe(repo=tmp_path, workdir=tmp_path / "w", backends=("onednn:fp32",))
    probe._sh = lambda command, cwd: calls.append(command) or 1
    assert probe.build_commit("0" * 40)[0] is False
    assert "-DWITH_ONEDNN=OFF" not in calls[0] and "-DWITH_CUDA=OFF" in calls[0]


def test_the_default_build_takes_the_toolchain_of_the_asked_backends_hooks(tmp_path, monkeypatch):
    # Kokkos' hook installs its OpenMP space and prints -DKokkos_ROOT: without it a backfill built on Debian's
    # Serial Kokkos, another runtime than the verdict's, whose steps it could then never confirm.
    from suitereport import backfill, manifests
    assert [n for n, _ in manifests.cpu_build_hooks({"kokkos", "serial"})] == ["kokkos"]
    assert all(Path(argv[0]).is_file() for _, argv in manifests.cpu_build_hooks({"kokkos"}))
    assert manifests.cpu_build_hooks({"serial", "openmp"}) == []
    good, bad = tmp_path / "good.sh", tmp_path / "bad.sh"
    good.write_text("#!/bin/sh\necho -DKokkos_ROOT=/opt/k\n")
    bad.write_text("#!/bin/sh\necho no toolchain >&2\nexit 3\n")
    for f in (good, bad):
        f.chmod(0o755)
    monkeypatch.setattr(manifests, "cpu_build_hooks",
                        lambda chosen: [("kokkos", [str(good)]), ("other", [str(bad)])] if "kokkos" in chosen else [])
    calls, said = [], []
    probe = backfill.Probe(repo=tmp_path, workdir=tmp_path / "w", backends=("kokkos:team",), log=said.append)
    probe._sh = lambda command, cwd: calls.append(command) or 1
    probe.build_commit("0" * 40)
    probe.build_commit("1" * 40)
    assert calls and all("-DKokkos_ROOT=/opt/k" in c for c in calls)
    assert said.count("  other: its cpu_build hook failed (no toolchain); built without it") == 1  # once a probe
    calls.clear()
    probe = backfill.Probe(repo=tmp_path, workdir=tmp_path / "w2", backends=("serial:winograd",))
    probe._sh = lambda command, cwd: calls.append(command) or 1
    probe.build_commit("0" * 40)
    assert "Kokkos_ROOT" not in calls[0]


DRIFTING = '''import pathlib, runpy, shutil, sys, tempfile
src, out, counter, order = sys.argv[1:5]
n = int(pathlib.Path(counter).read_text()) if pathlib.Path(counter).exists() else 0
pathlib.Path(counter).write_text(str(n + 1))
with open(order, "a") as f:
    f.write(pathlib.Path(src).name + "\\n")
with tempfile.TemporaryDirectory() as scratch:  # the commit's benchmark, each run 3 % slower than the one before
    shutil.copy(pathlib.Path(src, "bench.py"), scratch)
    factor = float(pathlib.Path(src, "factor.txt").read_text())
    pathlib.Path(scratch, "factor.txt").write_text(str(factor * (1 + 0.03 * n)))
    sys.argv = ["bench.py", out]
    runpy.run_path(str(pathlib.Path(scratch, "bench.py")))
'''


def test_interleaved_runs_cancel_a_drift_that_one_after_another_reads_as_a_step(repo, tmp_path):
    # Two commits of the same speed on a machine that slows 3 % a run. Run one after the other, the second
    # commit's 5 runs are all slower than the first's: a confirmed step, so CI would fail a harmless commit.
    # Interleaved (the default), A B B A A B B A A B: no step, each commit built and run in its own worktree.
    r, commits = repo
    a, b = commits[4], commits[5]  # both at factor 1.0
    for mode in ("interleaved", "one-after-another"):
        store, counter, order = (tmp_path / f"{mode}.{x}" for x in ("jsonl", "count", "order"))
        probe = probe_args(tmp_path / mode, r)
        probe[probe.index("--run-cmd") + 1] = f"{PYTHON} {tmp_path / 'drift.py'} {{src}} {{out}} {counter} {order}"
        (tmp_path / "drift.py").write_text(DRIFTING)
        extra = ["--one-after-another"] if mode == "one-after-another" else []
        res = run_tool("history", "backfill", a, b, "--runs", "5", "--store", store, "--remove-worktree",
                       "--backends", "serial:register_tiles", *extra, *probe)
        assert res.returncode == 0 and "backfill: 2 ok" in res.stdout, res.stdout + res.stderr
        ran = order.read_text().split()
        if mode == "interleaved":
            assert ran == ["src-1", "src-2", "src-2", "src-1", "src-1", "src-2", "src-2", "src-1", "src-1", "src-2"]
            assert res.stdout.count("\nround ") == 5 and f"{b[:10]} change 6: built in build-2" in res.stdout
            assert "2 commits, each built in a worktree of its own, their runs taking turns" in res.stdout
        else:
            assert ran == ["src"] * 10 and "taking turns" not in res.stdout
        worktrees = subprocess.run(["git", "-C", str(r), "worktree", "list"], check=True, capture_output=True,
                                   text=True).stdout
        assert str(tmp_path / mode) not in worktrees  # --remove-worktree: all of them
        assert not list((tmp_path / mode / "work").glob("src*"))
        steps = run_tool("history", "steps", "--store", store, "--repo", r, "--commit", b, "--fail")
        if not identity.this_boot_id():  # no boot recorded: never "one boot", so nothing confirmed
            assert steps.returncode == 0
        elif mode == "interleaved":
            assert steps.returncode == 0 and steps.stdout.startswith(f"no step at {b[:10]}"), steps.stdout
        else:
            assert steps.returncode == 1 and "(5 v 5 runs)" in steps.stdout, steps.stdout + steps.stderr


# ---- backfill's parts, one at a time (its commands above show them working together)


def test_commits_of_reads_ranges_oldest_first_once_each_and_every_nth_from_the_newest(repo):
    from suitereport import backfill
    r, commits = repo
    # A..B: the commits after A, oldest first; a commit named again (here inside the range) is probed once
    assert backfill.commits_of(r, [f"{commits[0]}..{commits[5]}", commits[3], commits[0]]) == commits[1:6] + commits[:1]
    assert backfill.commits_of(r, [f"{commits[8]}.."]) == commits[9:]  # A..: up to HEAD
    # every 3rd counted from the newest, so the newest (the one a user wants to see) is always in
    assert backfill.commits_of(r, [f"{commits[0]}..{commits[-1]}"], every=3) == [commits[i] for i in (2, 5, 8, 11)]
    with pytest.raises(backfill.BackfillError, match=r"^nosuchrev: no such commit in "):
        backfill.commits_of(r, [f"{commits[0]}..nosuchrev"])


def test_first_parent_leaves_out_the_commits_a_merge_brought_in(tmp_path):
    from suitereport import backfill
    t = ThrowawayRepo(tmp_path / "merges")
    base = t.commit("base", {"a.txt": "1"})
    t.git("checkout", "-q", "-b", "side")
    side = t.commit("on the side", {"b.txt": "1"})
    t.git("checkout", "-q", "main")
    main = t.commit("on main", {"a.txt": "2"})
    t.git("merge", "-q", "--no-ff", "-m", "merge side", "side")
    merge = t.git("rev-parse", "HEAD")
    assert set(backfill.commits_of(t.path, [f"{base}..{merge}"])) == {side, main, merge}
    assert backfill.commits_of(t.path, [f"{base}..{merge}"], first_parent=True) == [main, merge]


def test_a_folder_that_is_not_a_worktree_of_the_repository_is_refused_and_kept(repo, tmp_path):
    # The worktree is checked out with --force and cleaned with -fdx: run in any other folder, that would
    # wipe someone's files. A plain folder, a worktree of another repository and a folder inside the user's
    # own checkout (the right git common dir, but not a worktree's top) are all refused and left as they were.
    from suitereport import backfill
    r, commits = repo
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "mine.txt").write_text("keep")
    other = ThrowawayRepo(tmp_path / "other")
    other.commit("theirs", {"theirs.txt": "keep"})
    own = ThrowawayRepo(tmp_path / "own")
    own.commit("first", {"f.txt": "1"})
    inside = own.path / "build" / "src"
    inside.mkdir(parents=True)
    (own.path / "untracked.txt").write_text("keep")
    for src, repository in ((plain, r), (other.path, r), (inside, own.path)):
        with pytest.raises(backfill.BackfillError, match="exists and is not a worktree of .*refusing to use or delete"):
            backfill.prepare_worktree(repository, src, own.commits[0] if repository == own.path else commits[0])
    assert (plain / "mine.txt").read_text() == "keep" and (other.path / "theirs.txt").read_text() == "keep"
    assert (own.path / "untracked.txt").read_text() == "keep"
    # in a backfill, such a folder is that commit's failure to check out, recorded, and the folder is kept
    store = tmp_path / "store.jsonl"
    probe = backfill.Probe(repo=r, workdir=tmp_path / "work", build="true", run="false", log=lambda m: None)
    (tmp_path / "work" / "src").mkdir(parents=True)
    assert backfill.backfill(probe, commits[:1], store, log=lambda m: None) == {"checkout_failed": 1}
    (e,) = history.read_store(store)
    assert e["status"] == "checkout_failed" and "is not a worktree of" in e["error"] and e["runs"] == []
    assert list((tmp_path / "work" / "src").iterdir()) == []


def test_the_worktree_moves_to_the_next_commit_whatever_the_last_build_left_in_it(repo, tmp_path):
    from suitereport import backfill
    r, commits = repo
    src = tmp_path / "work" / "src"
    backfill.prepare_worktree(r, src, commits[0])
    (src / "notes.txt").write_text("a build step rewrote a tracked file")
    (src / "generated.h").write_text("and left an untracked one")
    backfill.prepare_worktree(r, src, commits[1])
    assert (src / "notes.txt").read_text() == "step 2\n" and not (src / "generated.h").exists()
    backfill.remove_worktrees(r, tmp_path / "work")
    assert not src.exists()


def test_the_machine_load_is_the_other_runnable_processes_at_their_least(monkeypatch):
    # /proc/stat counts this process as running: it is not someone else's load. Of 5 looks the least
    # counts (a look may catch a short-lived process), never below 0.
    from suitereport import backfill
    looks = iter([4, 2, 3, 5, 6])
    monkeypatch.setattr(backfill, "_procs_running", lambda: next(looks))
    monkeypatch.setattr(backfill, "time", SimpleNamespace(sleep=lambda s: None))
    assert backfill.machine_load()["other_runnable"] == 1
    monkeypatch.setattr(backfill, "_procs_running", lambda: 0)
    assert backfill.machine_load()["other_runnable"] == 0


def test_wait_quiet_waits_for_three_quiet_looks_in_a_row_and_says_when_it_gave_up(monkeypatch):
    from suitereport import backfill
    clock = [0.0]  # the module's clock, so that the test takes no time and depends on none
    monkeypatch.setattr(backfill, "time", SimpleNamespace(monotonic=lambda: clock[0],
                                                          sleep=lambda s: clock.__setitem__(0, clock[0] + s)))
    said = []
    looks = iter([2, 0, 0, 1, 0, 0, 0, 5])
    monkeypatch.setattr(backfill, "machine_load", lambda: {"other_runnable": next(looks)})
    assert backfill.wait_quiet(60, said.append) == 6.0 and said == []  # the 7th look is the 3rd quiet in a row
    monkeypatch.setattr(backfill, "machine_load", lambda: {"other_runnable": 1})
    assert backfill.wait_quiet(4, said.append) == 4.0
    assert said == ["  the machine stayed busy for 4 s; running anyway (the report records the load)"]
    assert backfill.wait_quiet(0, said.append) == 0.0 and len(said) == 1  # no wait asked: nothing to say


FAKE_SUITE = '''import json, pathlib, sys
here = pathlib.Path(__file__).parent
if sys.argv[1:] == ["--list"]:
    print("""backend:variant   built  runnable
serial:opt        yes    yes
                  the reference loop
openmp:batch      yes    yes (device)
openmp:tiles      yes    no: no OpenMP runtime
kokkos            no     no: not built""")
else:
    (here / "argv.json").write_text(json.dumps(sys.argv[1:]))
'''


def fake_suite(build_dir, rel="bin/suite", mode=0o755):
    """A `suite` program in the build tree that lists what a past commit had and records how it was run."""
    path = build_dir / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!{sys.executable}\n" + FAKE_SUITE)
    path.chmod(mode)
    return path


def test_the_suite_of_a_past_commit_is_found_asked_what_it_has_and_run_with_the_sets_options(tmp_path):
    from suitereport import backfill
    probe = backfill.Probe(repo=tmp_path, workdir=tmp_path / "w", images="64", threads=3, repeat=4,
                           backends=("serial:register_tiles", "openmp:image_parallel", "openmp:tiles", "kokkos:team",
                                     "serial", "cuda:naive"))
    probe.src.mkdir(parents=True)
    with pytest.raises(backfill.BackfillError, match="w/build: no suite program after the build"):
        probe.suite()
    fake_suite(probe.build_dir, "suite/suite", mode=0o644)  # not executable: not a program
    older = fake_suite(probe.build_dir, "old/layout/suite")
    os.utime(older, (1, 1))
    newest = fake_suite(probe.build_dir, "other/layout/suite")
    assert probe.suite() == newest  # no known place: the newest program of that name
    suite = fake_suite(probe.build_dir)
    assert probe.suite() == suite
    # serial:opt and openmp:batch are today's register_tiles and image_parallel; openmp:tiles is listed but
    # cannot run, kokkos is not built, cuda not listed; a backend asked without a variant is the backend.
    assert probe.runnable_backends() == ["serial:opt", "openmp:batch", "serial"]
    out = tmp_path / "report.json"
    rc, before, after = probe.run_commit("0" * 40, out, ["serial:opt", "openmp:batch"])
    assert rc == 0 and set(before) == set(after) == {"load_avg_1min", "other_runnable"}
    assert json.loads((suite.parent / "argv.json").read_text()) == [
        "--backend", "serial:opt,openmp:batch", "--images", "64", "--threads", "3", "--repeat", "4", "--quiet",
        "--output", str(out)]


def test_suite_list_parsing_takes_only_built_and_runnable_variants():
    from suitereport import backfill
    text = ("serial:opt  yes  yes\nserial:slow  yes  no: too slow\nopenmp:batch  yes  yes (device)\n"
            "cuda  no  no: no CUDA\n  a description line: yes yes\nkokkos:team   yes   yesterday\n")
    assert backfill.parse_list(text) == {"serial": ["opt"], "openmp": ["batch"]}


def test_the_commands_get_quoted_paths_and_the_tail_of_what_they_said(tmp_path):
    from suitereport import backfill
    probe = backfill.Probe(repo=tmp_path, workdir=tmp_path / "a work dir; rm -rf x", backends=("serial:opt",))
    assert probe._fill("ls {src} {out}", out=tmp_path / "o o.json") == \
        f"ls '{tmp_path}/a work dir; rm -rf x/src' '{tmp_path}/o o.json'"
    # the last 4000 characters: a failed build's error is at the end of its output
    assert probe._sh("seq 1 3000; echo the error >&2", tmp_path) == 0
    assert probe.last_output.endswith("3000\nthe error\n") and len(probe.last_output) == 4000


def test_a_build_tree_another_commit_configured_is_built_again_from_scratch(tmp_path):
    # A CMake tree configured by another commit's CMake files can fail where a fresh one builds.
    from suitereport import backfill
    said, calls = [], []
    probe = backfill.Probe(repo=tmp_path, workdir=tmp_path / "w", backends=("serial:opt",), log=said.append)
    (probe.build_dir / "CMakeCache.txt").parent.mkdir(parents=True)
    (probe.build_dir / "CMakeCache.txt").write_text("")

    def sh(command, cwd):
        calls.append(command)
        probe.last_output = "" if (probe.build_dir / "CMakeCache.txt").exists() else "ok"
        return 0 if probe.last_output == "ok" else 1
    probe._sh = sh
    assert probe.build_commit("0" * 40) == (True, "")
    assert said == ["  build failed; once more in a fresh build tree"] and len(calls) == 3  # configure, again, build
    # a tree that still fails: the build's last line says why, and a folder that is no CMake tree stays
    probe.build_dir.mkdir()
    (probe.build_dir / "CMakeCache.txt").write_text("")
    calls.clear()
    probe._sh = lambda command, cwd: calls.append(command) or setattr(probe, "last_output", "x\n\nstopped\n") or 1
    assert probe.build_commit("0" * 40) == (False, "build failed: stopped") and len(calls) == 2
    assert not probe.build_dir.exists()
    (probe.build_dir / "mine").mkdir(parents=True)
    assert probe.build_commit("0" * 40) == (False, "build failed: stopped") and (probe.build_dir / "mine").is_dir()


def test_the_default_build_compiles_through_ccache_where_there_is_one(tmp_path, monkeypatch):
    # bisect goes back to commits built before: ccache makes that a cache hit, not a compile
    from suitereport import backfill
    for found, launcher in (("/usr/bin/ccache", True), (None, False)):
        monkeypatch.setattr(backfill.shutil, "which", lambda name: found if name == "ccache" else None)
        calls = []
        probe = backfill.Probe(repo=tmp_path, workdir=tmp_path / "w", backends=("serial:opt",))
        probe._sh = lambda command, cwd: calls.append(command) or 1
        probe.build_commit("0" * 40)
        assert ("-DCMAKE_CXX_COMPILER_LAUNCHER=ccache" in calls[0]) is launcher


def test_the_options_switch_on_only_backends_that_have_a_manifest():
    from suitereport import backfill
    options = backfill.cmake_options(("serial:opt", "nosuch:x"))
    assert "-DWITH_SERIAL=AUTO" in options and not any("NOSUCH" in o for o in options)


RUNNER = '''import json, pathlib, runpy, sys
src, out, commit, behaviours, calls = sys.argv[1:6]
with open(calls, "a") as f:
    f.write(f"{pathlib.Path(src).name} {commit}\\n")
how = json.loads(pathlib.Path(behaviours).read_text()).get(commit, "ok")
if how == "noreport":
    sys.exit("the suite started\\nthe suite crashed")
sys.argv = ["bench.py", out]
runpy.run_path(str(pathlib.Path(src, "bench.py")))
report = json.loads(pathlib.Path(out).read_text())
if how == "invalid":
    report["runs"][0]["validation"]["passed"] = False
elif how == "unvalidated":  # an old suite that did not validate: not a failure
    del report["runs"][0]["validation"]
pathlib.Path(out).write_text(json.dumps(report))
sys.exit(1 if how == "exit1" else 0)
'''


def runner_probe(repo_dir, tmp, behaviours, **kw):
    """A probe whose run is RUNNER: each commit behaves as `behaviours` says; `tmp/calls` lists its runs."""
    from suitereport import backfill
    (tmp / "runner.py").write_text(RUNNER)
    (tmp / "behaviours.json").write_text(json.dumps(behaviours))
    return backfill.Probe(repo=repo_dir, workdir=tmp / "work", build="test ! -e {src}/BROKEN",
                          run=f"{PYTHON} {tmp / 'runner.py'} {{src}} {{out}} {{commit}} {tmp / 'behaviours.json'} "
                              f"{tmp / 'calls'}", log=lambda m: None, **kw)


def ran(tmp):
    return (tmp / "calls").read_text().splitlines() if (tmp / "calls").exists() else []


@pytest.mark.parametrize("interleave", [True, False])
def test_a_commit_that_fails_is_recorded_once_and_not_run_again_in_later_runs(repo, tmp_path, interleave):
    from suitereport import backfill
    r, commits = repo
    broken, invalid, unvalidated, crashing, exit1 = commits[3:8]
    probe = runner_probe(r, tmp_path, {invalid: "invalid", unvalidated: "unvalidated", crashing: "noreport",
                                       exit1: "exit1"}, runs=2)
    store = tmp_path / "store.jsonl"
    counts = backfill.backfill(probe, commits[3:8], store, log=lambda m: None, interleave=interleave)
    assert counts == {"build_failed": 1, "validation_failed": 1, "run_failed": 1, "ok": 2}
    runs = [line.split()[1] for line in ran(tmp_path)]
    assert {c: runs.count(c) for c in commits[3:8]} == {broken: 0, invalid: 1, unvalidated: 2, crashing: 1, exit1: 2}
    entries = history.read_store(store)
    by = {}
    for e in entries:
        by.setdefault(e["git_commit"], []).append(e)
    assert [(e["status"], e["error"]) for e in by[broken]] == [("build_failed", "build command exit 1")]
    (e,) = by[invalid]
    assert e["status"] == "validation_failed" and e["error"] == "failed validation: " + BENCHMARK
    assert len(e["runs"]) == 1 and e["runs"][0]["passed"] is False
    assert [e.get("status") for e in by[unvalidated]] == [None, None]
    assert [(e["status"], e["error"]) for e in by[crashing]] == [("run_failed", "exit 1, no report: the suite crashed")]
    assert [e["backfill"]["exit"] for e in by[exit1]] == [1, 1] and not any(e.get("status") for e in by[exit1])


def test_one_run_a_commit_or_one_commit_is_run_in_the_shared_worktree(repo, tmp_path):
    # Interleaving only pays where runs take turns: one worktree and one build tree (an incremental build)
    # serve the other backfills.
    from suitereport import backfill
    r, commits = repo
    probe = runner_probe(r, tmp_path, {}, runs=1)
    said = []
    assert backfill.backfill(probe, commits[4:6], tmp_path / "s.jsonl", log=said.append) == {"ok": 2}
    probe.runs = 2
    assert backfill.backfill(probe, commits[6:7], tmp_path / "s.jsonl", log=said.append) == {"ok": 1}
    assert [line.split()[0] for line in ran(tmp_path)] == ["src"] * 4
    assert not any("taking turns" in line or line.startswith("round") for line in said)


def test_a_run_that_writes_no_report_is_not_given_the_report_of_an_earlier_run(repo, tmp_path):
    from suitereport import backfill
    r, commits = repo
    store = tmp_path / "store.jsonl"
    probe = runner_probe(r, tmp_path, {})
    assert backfill.backfill(probe, commits[4:5], store, log=lambda m: None) == {"ok": 1}
    (tmp_path / "behaviours.json").write_text(json.dumps({commits[4]: "noreport"}))
    assert backfill.backfill(probe, commits[4:5], store, log=lambda m: None, resume=False) == {"run_failed": 1}
    # resumed, the commit is done either way: its report and its failure are in the store
    assert backfill.backfill(probe, commits[4:5], store, log=lambda m: None) == {"skipped": 1}


def test_a_run_is_stored_with_how_it_was_run_and_the_load_before_and_after_it(repo, tmp_path):
    from suitereport import backfill
    r, commits = repo

    class Stub:
        images, threads, repeat, timeout_s = "64", 3, 4, 5.0
        hangs = False

        def run_commit(self, commit, out, backends):
            if self.hangs:
                raise subprocess.TimeoutExpired("suite", 5.0)
            subprocess.run([sys.executable, str(r / "bench.py"), str(out)], check=True)
            return 0, {"load_avg_1min": 0.5, "other_runnable": 1}, {"load_avg_1min": 2.5, "other_runnable": 3}
    out, platform = tmp_path / "o.json", backfill.this_platform()
    status, e = backfill.run_once(Stub(), "c" * 40, "its subject", 3, out, platform, "lab", ["serial:opt"])
    assert status == "ok" and (e["git_commit"], e["git_subject"], e["git_order"]) == ("c" * 40, "its subject", 3)
    assert e["backfill"] == {"backends": ["serial:opt"], "images": "64", "threads": 3, "repeat": 4, "exit": 0,
                             "machine_load": {"load_avg_1min_start": 0.5, "load_avg_1min_end": 2.5,
                                              "other_runnable_start": 1, "other_runnable_end": 3}}
    Stub.hangs = True
    status, e = backfill.run_once(Stub(), "c" * 40, "s", 3, out, platform, "", [])
    assert status == "run_failed" and e["status"] == "run_failed" and e["error"] == "timed out after 5 s"
    assert not out.exists()  # the report of the run before is not this one's


def test_a_commit_without_the_sets_benchmarks_or_without_a_suite_is_recorded_as_such(repo, tmp_path):
    from suitereport import backfill
    r, commits = repo
    platform = backfill.this_platform()
    probe = backfill.Probe(repo=r, workdir=tmp_path / "w", build="true", backends=("cuda:naive", "kokkos:team"))
    c = backfill.prepare(probe, backfill.Pending(commits[0], "change 1", 1, ""), platform)
    assert c.status == "run_failed" and c.entries[0]["error"].endswith("w/build: no suite program after the build")
    fake_suite(probe.build_dir)
    c = backfill.prepare(probe, backfill.Pending(commits[0], "change 1", 1, ""), platform)
    assert c.status == "no_benchmarks" and c.entries[0]["error"] == "none of cuda:naive,kokkos:team at this commit"
    probe.backends = ("kokkos:team", "serial:register_tiles")
    c = backfill.prepare(probe, backfill.Pending(commits[0], "change 1", 1, ""), platform)
    assert c.status == "ok" and c.backends == ["serial:opt"] and c.entries == []


def test_resume_skips_what_a_backfill_stored_on_this_platform_only(tmp_path):
    from suitereport import backfill
    here = backfill.this_platform().id
    store = write_store(tmp_path / "store.jsonl", [
        store_line("a" * 40, "2026-11-01T00:00:00Z", machine=here, backfill={"exit": 0}),  # a backfill's report
        store_line("b" * 40, "2026-11-01T00:00:00Z", machine=here),  # CI's report: another build, run again
        store_line("c" * 40, "2026-11-01T00:00:00Z", machine="cpu-other-2c", backfill={"exit": 0}),
        store_line("d" * 40, "2026-11-01T00:00:00Z", status="build_failed", platform=here, runs=[]),
        store_line("e" * 40, "2026-11-01T00:00:00Z", status="build_failed", platform="cpu-other-2c", runs=[])])
    assert backfill.done_commits(store, here) == {"a" * 40, "d" * 40}
    assert backfill.done_commits(tmp_path / "new.jsonl", here) == set()
    (tmp_path / "bad.jsonl").write_text("{not json\n")
    with pytest.raises(load.ReportError):  # a damaged store is said, not taken for an empty one
        backfill.done_commits(tmp_path / "bad.jsonl", here)


def test_the_probe_waits_for_a_quiet_machine_only_when_asked(tmp_path, monkeypatch):
    from suitereport import backfill
    waits = []
    monkeypatch.setattr(backfill, "wait_quiet", lambda max_s, log: waits.append(max_s) or 0.0)
    for quiet in (0.0, 7.0):
        probe = backfill.Probe(repo=tmp_path, workdir=tmp_path / "w", run="true", quiet_wait_s=quiet)
        probe.src.mkdir(parents=True, exist_ok=True)
        assert probe.run_commit("0" * 40, tmp_path / "o.json", ["serial:opt"])[0] == 0
    assert waits == [7.0]


def test_the_slots_of_interleaved_runs_share_one_run_of_the_toolchain_hooks(tmp_path, monkeypatch):
    from suitereport import backfill, manifests
    hooks = []
    monkeypatch.setattr(manifests, "cpu_build_hooks", lambda chosen: hooks.append(chosen) or [])
    probe = backfill.Probe(repo=tmp_path, workdir=tmp_path / "w", backends=("kokkos:team",))
    slots = [probe.in_slot(str(k)) for k in (1, 2, 3)]
    for p in slots:
        p._sh = lambda command, cwd: 1
        p.build_commit("0" * 40)
    assert len(hooks) == 1 and [p.src.name for p in slots] == ["src-1", "src-2", "src-3"]


def test_a_failed_git_command_is_said_by_its_error_line_not_by_the_advice_after_it(repo, tmp_path):
    # A backfill killed during a checkout leaves the worktree's index.lock behind: git says so on its first
    # line and then gives five lines of advice; the store must record the cause, not "remove the file
    # manually to continue."
    from suitereport import backfill
    r, commits = repo
    src = tmp_path / "work" / "src"
    backfill.prepare_worktree(r, src, commits[0])
    (Path(backfill.git(src, "rev-parse", "--absolute-git-dir").strip()) / "index.lock").write_text("")
    with pytest.raises(backfill.BackfillError, match=rf"^git checkout --quiet --detach --force {commits[1]}: "
                                                     r"fatal: Unable to create '.*index\.lock': File exists\.$"):
        backfill.prepare_worktree(r, src, commits[1])
    assert backfill._git_error("one line\n\n") == "one line" and backfill._git_error("") == "failed"
