"""scripts/ab-bench.sh on two fake builds whose `bin/suite` writes a suite-format report with a known time:
the gate passes for the same time and fails (exit 1, SLOWER) for a B 10 % slower, and the runs alternate."""

import os
import subprocess
import sys
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(SCRIPTS / "tests"))

from script_runs import assert_usage_refused, run_script  # noqa: E402
from test_backfill import BENCH  # noqa: E402

# The history tests' benchmark (a report with a time from factor.txt beside it), behind the suite's options.
FAKE_SUITE = """#!/usr/bin/env python3
import sys
args = sys.argv[1:]
sys.argv = [sys.argv[0], args[args.index("--output") + 1]]
""" + BENCH


def fake_build(root, factor):
    (root / "bin").mkdir(parents=True)
    suite = root / "bin" / "suite"
    suite.write_text(FAKE_SUITE)
    suite.chmod(0o755)
    (root / "bin" / "factor.txt").write_text(str(factor))
    return root


def ab_bench(tmp_path, factor_b, rounds="2"):
    a, b = fake_build(tmp_path / "a", 1.0), fake_build(tmp_path / "b", factor_b)
    out = tmp_path / "out"
    done = subprocess.run(["bash", str(SCRIPTS / "ab-bench.sh"), a, b, out, "serial:opt", rounds],
                          capture_output=True, text=True, timeout=120, env=dict(os.environ))
    return done, out


def test_same_time_passes_and_the_order_alternates(tmp_path):
    done, out = ab_bench(tmp_path, 1.0)
    assert done.returncode == 0, done.stdout + done.stderr
    assert sorted(p.name for p in (out / "a").iterdir()) == ["round-1.json", "round-2.json"]
    assert "OK: 0 of 1" in (out / "compare.md").read_text()
    sides = [line.split()[1] for line in done.stdout.splitlines() if line.startswith("=== ")]
    assert sides == ["a", "b", "b", "a"], sides  # round 2 starts with B


def test_a_slower_b_fails_the_gate(tmp_path):
    done, out = ab_bench(tmp_path, 1.1, rounds="1")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "SLOWER" in (out / "compare.md").read_text()


def test_a_build_without_suite_is_refused(tmp_path):
    (tmp_path / "empty").mkdir()
    done = subprocess.run(["bash", str(SCRIPTS / "ab-bench.sh"), tmp_path / "empty", tmp_path / "empty",
                           tmp_path / "out", "serial:opt"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "no such program" in done.stderr


def test_bad_rounds_or_threshold_are_refused_before_any_run(tmp_path):
    a = fake_build(tmp_path / "a", 1.0)
    for extra, what in ((["abc"], "rounds"), (["0"], "rounds"), (["1e9"], "rounds"), (["1", "abc"], "threshold")):
        out = tmp_path / f"out-{len(extra)}-{extra[-1]}"
        done = subprocess.run(["bash", str(SCRIPTS / "ab-bench.sh"), a, a, out, "serial:opt", *extra],
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 2 and done.stderr.count("\n") == 1 and what in done.stderr, done.stderr
        assert not out.exists(), "no round ran"


def test_a_missing_argument_is_one_usage_line_and_exit_2(tmp_path):
    assert_usage_refused(run_script("ab-bench.sh", tmp_path / "a", tmp_path / "b"), "ab-bench")


def test_relative_paths_are_the_callers_and_an_out_may_start_with_a_dash(tmp_path):
    here = tmp_path / "a folder"
    fake_build(here / "a", 1.0)
    fake_build(here / "b", 1.0)
    done = subprocess.run(["bash", str(SCRIPTS / "ab-bench.sh"), "a", "b", "-out", "serial:opt", "1"],
                          capture_output=True, text=True, timeout=120, cwd=here)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (here / "-out" / "b" / "round-1.json").is_file() and (here / "-out" / "compare.md").is_file()
    assert not (SCRIPTS.parent / "-out").exists()


def test_a_bad_out_or_run_setting_is_refused_before_any_run(tmp_path):
    a = fake_build(tmp_path / "a", 1.0)
    (tmp_path / "file").write_text("keep")
    out = tmp_path / "out"
    for env, target, what in (({"AB_REPEAT": "abc"}, out, "AB_REPEAT"), ({"AB_REPEAT": "0"}, out, "AB_REPEAT"),
                              ({"AB_IMAGES": "abc"}, out, "AB_IMAGES"), ({"AB_IMAGES": "1200,"}, out, "AB_IMAGES"),
                              ({"AB_IMAGES": "0"}, out, "AB_IMAGES"), ({}, tmp_path / "file", "file")):
        done = subprocess.run(["bash", str(SCRIPTS / "ab-bench.sh"), a, a, target, "serial:opt", "1"],
                              capture_output=True, text=True, timeout=60, env={**os.environ, **env})
        assert done.returncode == 2 and done.stderr.count("\n") == 1 and what in done.stderr, (env, done.stderr)
        assert "===" not in done.stdout and not out.exists(), (env, "no round ran")
    assert (tmp_path / "file").read_text() == "keep"


def test_a_failed_round_is_said_on_stderr(tmp_path):
    a = fake_build(tmp_path / "a", 1.0)
    (tmp_path / "b" / "bin").mkdir(parents=True)
    (tmp_path / "b" / "bin" / "suite").write_text("#!/bin/sh\nexit 1\n")
    (tmp_path / "b" / "bin" / "suite").chmod(0o755)
    done = subprocess.run(["bash", str(SCRIPTS / "ab-bench.sh"), a, tmp_path / "b", tmp_path / "out", "serial:opt",
                           "1"], capture_output=True, text=True, timeout=120)
    assert "ab-bench: b round 1 failed" in done.stderr, done.stderr
    assert "round 1 failed" not in done.stdout, done.stdout


def test_no_python_with_numpy_is_refused_before_any_round(tmp_path):
    a = fake_build(tmp_path / "a", 1.0)
    (tmp_path / "hide").mkdir()
    (tmp_path / "hide" / "numpy.py").write_text("raise ImportError('hidden by the test')\n")
    done = subprocess.run(["bash", str(SCRIPTS / "ab-bench.sh"), a, a, tmp_path / "out", "serial:opt", "1"],
                          capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, PYTHONPATH=str(tmp_path / "hide")))
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "numpy" in done.stderr, done.stderr
    assert "===" not in done.stdout and not (tmp_path / "out").exists(), "no round ran"
