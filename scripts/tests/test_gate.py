"""Tests of the regression gate (scripts/compare, suitereport/gate.py): a benchmark's name does not
depend on its siblings, a gate that compared nothing does not say OK, noise is not a regression, and
reports of failed runs (max_abs_prob_diff null) are read."""

import copy
import json
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

SCRIPTS = Path(__file__).resolve().parents[1]
SERIAL = Path(__file__).resolve().parent / "data" / "serial.json"
sys.path.insert(0, str(SCRIPTS))

from suitereport import gate  # noqa: E402
from tools_inprocess import run_tool  # noqa: E402

# Twelve passes of a benchmark on a busy 2-core machine, relative to their median: a spread of
# about +-12 % (the shape of the passes of build/history/gate/run-*.json, see scripts/README.md).
SPREAD = [0.89, 0.93, 0.95, 0.97, 0.99, 1.0, 1.0, 1.01, 1.03, 1.06, 1.09, 1.12]


def run(tool, *args):
    """The tool, run in this process (tools_inprocess.py): what subprocess.run would return."""
    return run_tool(tool, *args)


def suite_report(path, runs):
    """A report of the runs [(backend, variant, threads, median, samples)] at 1200 images."""
    data = json.loads(SERIAL.read_text())
    template = data["runs"][0]
    data["runs"] = []
    for backend, variant, threads, med, samples in runs:
        r = copy.deepcopy(template)
        r.update(backend=backend, variant=variant, threads=threads, images=1200)
        r["forward_ms"] = {"min": min(samples), "median": med, "max": max(samples), "samples": samples}
        data["runs"].append(r)
    path.write_text(json.dumps(data))
    return path


def suite_path(path, data):
    path.write_text(json.dumps(data))
    return path


def passes(median, scale=1.0):
    return [median * scale * f for f in SPREAD]


def test_a_benchmark_keeps_its_name_whatever_its_siblings(tmp_path):
    # The base has openmp:batch at 1 and 2 threads, the new run only at 2: before, the base named it
    # .../threads:2 and the new run did not, nothing was compared, and the verdict was OK.
    base = suite_report(tmp_path / "base.json", [("openmp", "batch", 1, 40.0, passes(40.0)),
                                                 ("openmp", "batch", 2, 21.2, passes(21.2))])
    new = suite_report(tmp_path / "new.json", [("openmp", "batch", 2, 43.4, passes(43.4))])
    r = run("compare", base, new)
    assert r.returncode == 1, r.stdout + r.stderr
    # openmp:batch is openmp:image_parallel today (backends/openmp/manifest.json): read under its new name
    assert "| openmp:image_parallel/images:1200/threads:2 | 21.20 | 43.40 | +104.7 % |" in r.stdout
    assert "SLOWER" in r.stdout and "| only in NEW |" not in r.stdout
    assert "FAIL: 1 of 1 benchmark(s) slower" in r.stdout


def test_a_gate_that_compared_nothing_does_not_say_ok(tmp_path):
    base = suite_report(tmp_path / "base.json", [("openmp", "batch", 2, 21.2, passes(21.2))])
    new = suite_report(tmp_path / "new.json", [("openmp", "batch", 1, 43.4, passes(43.4))])
    r = run("compare", base, new)
    assert r.returncode == 2 and "no benchmark in common" in r.stderr and "OK" not in r.stdout


def test_noise_beyond_the_threshold_is_noisy_not_slower():
    # 13.7 % apart in the medians, as two back-to-back runs of unchanged code were: the passes overlap.
    # A busy stretch on the NEW side: some passes much slower, some faster, the median 13.7 % up.
    busy = [0.62, 0.7, 0.8, 0.9, 0.97, 1.0, 1.0, 1.05, 1.2, 1.4, 1.6, 1.8]
    base, new = passes(100.0), [113.7 * f for f in busy]
    d = gate.decide(base, new, 100.0, 113.7, threshold=0.10)
    assert d.status == "noisy" and not d.fails, d


def test_a_real_slowdown_is_slower_and_a_small_one_is_ok():
    base = passes(100.0)
    d = gate.decide(base, passes(100.0, 1.15), 100.0, 115.0, threshold=0.10)
    assert d.status == "SLOWER" and d.fails and d.p_slower < 0.01
    assert d.ci[0] > 1.0 and d.ci[0] < 1.15 < d.ci[1]
    d = gate.decide(base, passes(100.0, 1.05), 100.0, 105.0, threshold=0.10)
    assert d.status == "ok" and not d.fails
    d = gate.decide(base, passes(100.0, 0.8), 100.0, 80.0, threshold=0.10)
    assert d.status == "faster"


def test_the_threshold_is_a_bound_above_and_its_inverse_below():
    # "above 1 + threshold": exactly 10 % up is ok, even where the test is sure of it; "faster the same way
    # round": BASE above NEW by more than 10 %, so 9.5 % down (100 / 90.5 = 1.105) is faster
    base = passes(100.0)
    d = gate.decide(base, passes(110.0), 100.0, 110.0, threshold=0.10)
    assert d.ratio == 1.1 and d.p_slower < 0.01 and d.status == "ok"
    d = gate.decide(base, passes(90.5), 100.0, 90.5, threshold=0.10)
    assert d.p_faster < 0.01 and d.status == "faster"
    assert gate.decide([100.0], [110.0], 100.0, 110.0, threshold=0.10).status == "ok (medians only)"
    assert gate.decide([100.0], [90.5], 100.0, 90.5, threshold=0.10).status == "faster (medians only)"


def test_faster_beyond_the_threshold_but_not_significant_is_noisy():
    busy = [0.62, 0.7, 0.8, 0.9, 0.97, 1.0, 1.0, 1.05, 1.2, 1.4, 1.6, 1.8]
    d = gate.decide(passes(100.0), [85.0 * f for f in busy], 100.0, 85.0, threshold=0.10)
    assert d.ratio < 1 / 1.1 and d.p_faster >= 0.01 and d.status == "noisy"


def test_a_p_value_equal_to_alpha_is_not_below_it():
    # 5 v 5 passes, every NEW one above every BASE one: p = 1/252, the least there is; at alpha = 1/252 no step
    base, new = [10.0, 10.1, 10.2, 10.3, 10.4], [13.0, 13.1, 13.2, 13.3, 13.4]
    d = gate.decide(base, new, 10.2, 13.2, threshold=0.10, alpha=gate.least_p(5, 5))
    assert d.p_slower == gate.least_p(5, 5) and d.status == "noisy"


def test_with_several_runs_a_side_the_runs_are_tested_not_the_passes(tmp_path):
    # Each run's passes are tight, but the runs differ (one process lands 30 % slower than the next):
    # the passes of one run against another's would call that a regression; the runs do not.
    medians = [55.0, 56.0, 55.5, 72.0, 55.2, 56.5, 71.0, 55.8]
    base, new = tmp_path / "base", tmp_path / "new"
    base.mkdir(), new.mkdir()
    tight = [0.99, 0.995, 1.0, 1.0, 1.005, 1.01]
    for i, m in enumerate(medians):
        suite_report(base / f"run-{i}.json", [("serial", "opt", 1, m, [m * f for f in tight])])
        n = medians[(i + 3) % len(medians)]  # the same kind of runs, in another order
        suite_report(new / f"run-{i}.json", [("serial", "opt", 1, n, [n * f for f in tight])])
    r = run("compare", base, new)
    assert r.returncode == 0 and "| 8 v 8 runs | ok |" in r.stdout, r.stdout
    one_slow_run = suite_report(tmp_path / "slow.json", [("serial", "opt", 1, 72.0, [72.0 * f for f in tight])])
    r = run("compare", base / "run-0.json", one_slow_run)
    assert r.returncode == 1 and "6 v 6 passes | SLOWER" in r.stdout  # one run each: blind to it
    slower = tmp_path / "slower"
    slower.mkdir()
    for i, m in enumerate(medians):
        m *= 1.3
        suite_report(slower / f"run-{i}.json", [("serial", "opt", 1, m, [m * f for f in tight])])
    r = run("compare", base, slower)
    assert r.returncode == 1 and "| 8 v 8 runs | SLOWER |" in r.stdout, r.stdout


def test_holm_adjusts_in_order_and_never_lowers_a_p_value():
    assert gate.holm([0.004, 0.5, 0.001, 0.02]) == pytest.approx([0.012, 0.5, 0.004, 0.04])
    assert gate.holm([0.3, 0.4]) == pytest.approx([0.6, 0.6])  # adjusted p-values keep the raw ones' order
    assert gate.holm([]) == []


def test_a_family_keeps_a_step_only_where_its_adjusted_p_is_below_alpha():
    # Holm over 3: 0.001 x 3 = 0.003 stays SLOWER; 0.005 x 2 = 0.01 is not below 0.01; the faster one's
    # 0.005 x 3 = 0.015 neither
    ds = [gate.Decision("SLOWER", 1.2, p_slower=0.005, p_faster=0.9),
          gate.Decision("faster", 0.8, p_slower=0.9, p_faster=0.005),
          gate.Decision("SLOWER", 1.3, p_slower=0.001, p_faster=0.9)]
    assert gate.decide_family(ds, alpha=0.01) == 3
    assert [d.status for d in ds] == ["noisy", "noisy", "SLOWER"]
    assert [d.p_slower for d in ds] == pytest.approx([0.01, 0.9, 0.003])


@pytest.mark.parametrize("family, status, rc", [(False, "SLOWER", 1), (True, "noisy", 0)])
def test_compare_family_tests_the_benchmarks_together(tmp_path, family, status, rc):
    # One benchmark's 12 passes, 12 % up, overlap (p about 0.0007): alone a step. Among 22 benchmarks tested
    # together (--family), a p that small comes by chance too often: 22 x 0.0007 is above 0.01.
    steady = [("openmp", f"v{k}", 2, 10.0, passes(10.0)) for k in range(21)]
    base = suite_report(tmp_path / "base.json", [("serial", "opt", 1, 100.0, passes(100.0))] + steady)
    new = suite_report(tmp_path / "new.json", [("serial", "opt", 1, 112.0, passes(100.0, 1.12))] + steady)
    d = gate.decide(passes(100.0), passes(100.0, 1.12), 100.0, 112.0, threshold=0.10)
    assert 0.01 / 22 < d.p_slower < 0.01 / 2
    r = run("compare", base, new, *(["--family"] if family else []))
    assert r.returncode == rc and "| serial:register_tiles/images:1200/threads:1 |" in r.stdout, r.stdout
    assert f"| 12 v 12 passes | {status} |" in r.stdout
    assert ("Holm over 22 benchmarks" in r.stdout) == family


def test_compare_family_says_when_too_few_runs_can_pass_it(tmp_path):
    # 5 runs a side, every one of NEW's 30 % above BASE's, for 3 benchmarks: p at least 1/252 each, and
    # 3 x 1/252 is above 0.01: together, nothing could pass, and compare says so.
    base, new = tmp_path / "base", tmp_path / "new"
    base.mkdir(), new.mkdir()
    for i in range(5):
        for side, f in ((base, 1.0), (new, 1.3)):
            ms = 50.0 * f * (1 + 0.01 * i)
            suite_report(side / f"run-{i}.json", [("serial", v, 1, ms, passes(ms)) for v in ("naive", "opt", "winograd")])
    alone = run("compare", base, new)
    assert alone.returncode == 1 and alone.stdout.count("| 5 v 5 runs | SLOWER |") == 3, alone.stdout
    together = run("compare", base, new, "--family")
    assert together.returncode == 0 and together.stdout.count("| 5 v 5 runs | noisy |") == 3, together.stdout
    assert "--family over 3 benchmarks: at 5 v 5 runs no step can pass" in together.stderr
    assert gate.least_p(5, 5) == pytest.approx(1 / 252)


def test_too_few_passes_fall_back_to_the_medians():
    d = gate.decide([100.0, 101.0], [120.0, 121.0], 100.5, 120.5, threshold=0.10)
    assert d.status == "SLOWER (medians only)" and d.fails and d.p_slower is None


def test_the_bootstrap_interval_is_deterministic():
    a, b = passes(100.0), passes(100.0, 1.1)
    assert gate.median_ratio_interval(a, b) == gate.median_ratio_interval(a, b)


@pytest.mark.parametrize("value", [None, "n/a"])
def test_a_failed_run_without_max_abs_prob_diff_is_reported(tmp_path, value):
    data = json.loads(SERIAL.read_text())
    v = data["runs"][0]["validation"]
    v.update(passed=False, max_abs_prob_diff=value, top1_mismatches=3)
    path = tmp_path / "failed.json"
    path.write_text(json.dumps(data))
    r = run("report", path, "--table", "runs")
    assert r.returncode == 0, r.stderr
    assert "FAILED (no max diff, 3 top-1)" in r.stdout and "Traceback" not in r.stderr
    r = run("compare", SERIAL, path)
    assert r.returncode == 1 and "INVALID (validation failed)" in r.stdout


def test_a_run_without_a_forward_time_is_left_out_with_a_note(tmp_path):
    # The suite writes median 0 and no passes for a run that failed before it was timed.
    data = json.loads(SERIAL.read_text())
    data["runs"][0]["forward_ms"] = {"min": 0, "median": 0, "max": 0, "samples": []}
    data["runs"][0]["validation"].update(passed=False, max_abs_prob_diff=None)
    path = tmp_path / "untimed.json"
    path.write_text(json.dumps(data))
    r = run("report", path, "--table", "runs")
    assert r.returncode == 0, r.stderr
    assert "note: left out" in r.stderr and "runs[0]: no positive forward time" in r.stderr
    assert "| serial:naive | CPU, 1 thread | 200 |" in r.stdout and "| 50 |" not in r.stdout


def test_with_few_runs_a_side_the_newest_reports_passes_are_compared(tmp_path):
    """Fewer than gate.MIN_RUNS reports a side: the passes of each side's newest report (by date, then the
    later file), not of an older one."""
    base = tmp_path / "base"
    base.mkdir()
    a = suite_report(base / "a.json", [("serial", "opt", 1, 100.0, passes(100.0))])
    b = suite_report(base / "b.json", [("serial", "opt", 1, 130.0, passes(130.0))])
    new = suite_report(tmp_path / "new.json", [("serial", "opt", 1, 131.0, passes(131.0))])
    r = run("compare", base, new)  # one date: the later file, b.json
    assert r.returncode == 0 and "| 130.0 | 131.0 | +0.8 % |" in r.stdout and "| 12 v 12 passes | ok |" in r.stdout, \
        r.stdout
    for path, date in ((a, "2026-12-02T00:00:00Z"), (b, "2026-12-01T00:00:00Z")):
        data = json.loads(path.read_text())
        data["meta"]["date_utc"] = date
        path.write_text(json.dumps(data))
    r = run("compare", base, new)  # a.json is newer now: 100 ms against 131
    assert r.returncode == 1 and "| 100.0 | 131.0 | +31.0 % |" in r.stdout and "| SLOWER |" in r.stdout, r.stdout


@pytest.mark.parametrize("readings, why", [
    ({"other_runnable_start": 0, "other_runnable_end": 2}, "2 other runnable process(es) on 4 cores"),
    ({"other_runnable_start": 1, "other_runnable_end": 1}, ""),  # fewer than half the cores
    ({"load_avg_1min_start": 4.5, "load_avg_1min_end": 3.0}, "load average 4.50 on 4 cores"),
    ({"load_avg_1min_start": 4.0, "load_avg_1min_end": 4.0}, ""),  # as much work as cores: not above them
])
def test_a_busy_machine_by_the_readings_at_either_end_of_the_run(readings, why):
    """scripts/README.md: busy when, at the start or the end, other runnable processes numbered at least
    half the logical cores, or the 1-minute load average was above the logical core count."""
    run_ = SimpleNamespace(machine_load=readings, machine=SimpleNamespace(logical_cores=4))
    assert gate.busy_reason(run_) == why


def test_a_report_whose_meta_says_a_peer_wrote_it_is_a_peer():
    jax = SimpleNamespace(backend="jax")
    assert gate.is_peer_run(jax, {"peer": True}) and gate.is_peer_run(jax, {"suite_version": "peer_jax"})
    assert not gate.is_peer_run(jax, {"peer": "true"}) and not gate.is_peer_run(jax, {"suite_version": "0.1.0"})
    assert gate.is_peer_run(SimpleNamespace(backend="pytorch"))


@pytest.mark.parametrize("alpha", ["0", "1", "1.5"])
def test_an_alpha_that_is_no_probability_is_bad_input(alpha):
    # alpha 0 passes every step, alpha 1 fails every benchmark beyond the threshold: neither is a gate
    r = run("compare", SERIAL, SERIAL, "--alpha", alpha)
    assert r.returncode == 2 and "expected a probability between 0 and 1" in r.stderr, r.stderr


def test_only_a_run_that_failed_validation_fails_the_gate(tmp_path):
    data = json.loads(SERIAL.read_text())
    for r in data["runs"]:
        del r["validation"]  # not validated (a peer's, or an old suite's): no failure
    unvalidated = tmp_path / "unvalidated.json"
    unvalidated.write_text(json.dumps(data))
    r = run("compare", SERIAL, unvalidated)
    assert r.returncode == 0 and "INVALID" not in r.stdout, r.stdout
    # two runs of NEW, the newer passed: the one that failed still fails the gate
    new = tmp_path / "new"
    new.mkdir()
    failed = json.loads(SERIAL.read_text())
    failed["runs"][0]["validation"]["passed"] = False
    (new / "a.json").write_text(json.dumps(failed))
    (new / "b.json").write_text(SERIAL.read_text())
    r = run("compare", SERIAL, new)
    assert r.returncode == 1 and "| INVALID (validation failed) |" in r.stdout, r.stdout


def test_every_benchmark_in_common_must_be_on_one_platform(tmp_path):
    # the CPU runs agree; the GPU run, later in the table, ran on another GPU: no verdict
    def on(gpu, name):
        data = json.loads(SERIAL.read_text())
        r = copy.deepcopy(data["runs"][0])
        r.update(backend="cuda", variant="fused", device=gpu, device_info={"gpu_name": gpu})
        data["runs"].append(r)
        return suite_path(tmp_path / name, data)

    r = run("compare", on("NVIDIA H200", "base.json"), on("NVIDIA H100 80GB HBM3", "new.json"))
    assert r.returncode == 2 and "BASE ran on NVIDIA H200, NEW on NVIDIA H100 80GB HBM3 (1 benchmark(s), " \
        "e.g. cuda:fused/images:50/threads:1)" in r.stderr, r.stderr


def test_a_benchmark_a_peer_wrote_on_one_side_is_not_gated(tmp_path):
    base, new = json.loads(SERIAL.read_text()), json.loads(SERIAL.read_text())
    base["meta"]["suite_version"] = "peer_jax"
    for r in new["runs"]:  # 50 % slower
        f = r["forward_ms"]
        f.update(min=f["min"] * 1.5, median=f["median"] * 1.5, max=f["max"] * 1.5,
                 samples=[s * 1.5 for s in f["samples"]])
    r = run("compare", suite_path(tmp_path / "base.json", base), suite_path(tmp_path / "new.json", new))
    assert r.returncode == 0 and "(peer, not gated)" in r.stdout, r.stdout
