"""scripts/ab-bench.sh on two fake builds whose `bin/suite` writes a suite-format report with a known time:
the gate passes for the same time and fails (exit 1, SLOWER) for a B 10 % slower, and the runs alternate."""

import os
import subprocess
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parents[1]

FAKE_SUITE = '''#!/usr/bin/env python3
import json, pathlib, sys
args = sys.argv[1:]
out = pathlib.Path(args[args.index("--output") + 1])
ms = 10.0 * float((pathlib.Path(__file__).parent.parent / "factor.txt").read_text())
samples = [ms * (1 + 0.005 * k) for k in (-3, -2, -1, 0, 1, 2, 3, 0.5)]
report = {"schema_version": 1,
          "meta": {"date_utc": "2026-11-25T00:00:00Z", "git_commit": "unknown", "cpu_model": "Test CPU",
                   "logical_cores": 4, "host": "t"},
          "runs": [{"backend": "alpha", "variant": "fast", "images": 1200, "threads": 1, "device": "CPU",
                    "forward_ms": {"median": ms, "samples": samples}, "validation": {"passed": True},
                    "machine_load": {"other_runnable_start": 0, "other_runnable_end": 0}}]}
out.write_text(json.dumps(report))
with open(pathlib.Path(__file__).parent / "calls.txt", "a") as calls:
    calls.write(out.name + "\\n")
'''


def fake_build(root, factor):
    (root / "bin").mkdir(parents=True)
    suite = root / "bin" / "suite"
    suite.write_text(FAKE_SUITE)
    suite.chmod(0o755)
    (root / "factor.txt").write_text(str(factor))
    return root


def ab_bench(tmp_path, factor_b, rounds="2"):
    a, b = fake_build(tmp_path / "a", 1.0), fake_build(tmp_path / "b", factor_b)
    out = tmp_path / "out"
    done = subprocess.run(["bash", str(SCRIPTS / "ab-bench.sh"), a, b, out, "alpha:fast", rounds],
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
                           tmp_path / "out", "alpha:fast"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "no such program" in done.stderr
