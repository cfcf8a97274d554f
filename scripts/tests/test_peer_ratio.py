"""scripts/peer-ratio.sh with a fake suite and a fake peer whose reports carry known fastest passes: the ratio
of each pair and their median are ours / the peer's, the order swaps every pair, a run that fails validation
makes it exit 1, and bad arguments get one line and exit 2."""

import os
import subprocess
import sys
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(SCRIPTS / "tests"))

from script_runs import assert_usage_refused, run_script  # noqa: E402

# Writes a one-run report whose fastest pass is the number in the file named by the FAKE_MS variable (ours
# and the peer read different files); FAKE_FAIL makes its validation fail.
FAKE = """#!/usr/bin/env python3
import json, os, sys
args = sys.argv[1:]
if args[:1] == ["-c"]:
    sys.exit(0)  # the script's check that the peer's Python has torch
ms = float(open(os.environ[sys.argv[0].endswith("suite") and "FAKE_OURS" or "FAKE_PEER"]).read())
run = {"forward_ms": {"min": ms, "median": ms * 1.1}, "batch": 32,
       "validation": {"passed": not (os.environ.get("FAKE_FAIL") and sys.argv[0].endswith("suite"))}}
open(args[args.index("--output") + 1], "w").write(json.dumps({"runs": [run]}))
"""


def run(tmp_path, pairs="3", fail=False, ours_ms="2.0", peer_ms="16.0"):
    (tmp_path / "b" / "bin").mkdir(parents=True)
    for path in (tmp_path / "b" / "bin" / "suite", tmp_path / "python"):
        path.write_text(FAKE)
        path.chmod(0o755)
    (tmp_path / "ours.txt").write_text(ours_ms)
    (tmp_path / "peer.txt").write_text(peer_ms)
    env = dict(os.environ, PEER_RATIO_PYTHON=str(tmp_path / "python"), FAKE_OURS=str(tmp_path / "ours.txt"),
               FAKE_PEER=str(tmp_path / "peer.txt"), PEER_RATIO_REPEAT="1")
    if fail:
        env["FAKE_FAIL"] = "1"
    done = subprocess.run(["bash", str(SCRIPTS / "peer-ratio.sh"), tmp_path / "b", tmp_path / "out", "serial:opt",
                           "100", "1", pairs, "32"], capture_output=True, text=True, timeout=60, env=env)
    return done, tmp_path / "out"


def test_pairs_alternate_and_the_median_ratio_is_ours_over_the_peer(tmp_path):
    done, out = run(tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    order = [line.split()[-1] for line in (out / "order.txt").read_text().splitlines()[1:]]
    assert order == ["ours-1", "peer-1", "peer-2", "ours-2", "ours-3", "peer-3", "done"], order
    ratio = (out / "ratio.md").read_text()
    assert ratio.count("| 0.125 |") == 3 and "Median ratio **0.125**" in ratio, ratio


def test_a_run_that_fails_validation_fails_the_script(tmp_path):
    done, out = run(tmp_path, pairs="2", fail=True)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Median ratio" not in (out / "ratio.md").read_text()


def test_bad_arguments_get_one_line_and_exit_2(tmp_path):
    done, _ = run(tmp_path, pairs="x")
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "pairs" in done.stderr, done.stderr
    missing = subprocess.run(["bash", str(SCRIPTS / "peer-ratio.sh"), tmp_path / "nowhere", tmp_path / "o",
                              "serial:opt", "100", "1"], capture_output=True, text=True, timeout=60)
    assert missing.returncode == 2 and "no such program" in missing.stderr


def fakes(root):
    """A fake build and peer Python under root; returns the environment that points the script at them."""
    (root / "b" / "bin").mkdir(parents=True)
    for path in (root / "b" / "bin" / "suite", root / "python"):
        path.write_text(FAKE)
        path.chmod(0o755)
    (root / "ours.txt").write_text("2.0")
    (root / "peer.txt").write_text("16.0")
    return dict(os.environ, PEER_RATIO_PYTHON=str(root / "python"), FAKE_OURS=str(root / "ours.txt"),
                FAKE_PEER=str(root / "peer.txt"), PEER_RATIO_REPEAT="1")


def test_a_missing_argument_is_one_usage_line_and_exit_2(tmp_path):
    assert_usage_refused(run_script("peer-ratio.sh", tmp_path / "b", tmp_path / "o"), "peer-ratio")


def test_relative_paths_are_the_callers(tmp_path):
    here = tmp_path / "a folder"
    here.mkdir()
    env = fakes(here)
    done = subprocess.run(["bash", str(SCRIPTS / "peer-ratio.sh"), "b", "out", "serial:opt", "100", "1", "1", "32"],
                          capture_output=True, text=True, timeout=60, env=env, cwd=here)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (here / "out" / "ratio.md").is_file()
    assert not (SCRIPTS.parent / "out").exists() and not (SCRIPTS.parent / "b").exists()


def test_bad_counts_and_out_are_refused_before_any_run(tmp_path):
    env = fakes(tmp_path)
    (tmp_path / "file").write_text("keep")
    cases = [(["abc", "1"], {}, "images"), (["-1", "1"], {}, "images"), (["100", "abc"], {}, "threads"),
             (["100", "-1"], {}, "threads"), (["100", "0"], {}, "threads"),
             (["100", "1", "99999999999999999999"], {}, "pairs"), (["100", "1", "1001"], {}, "pairs"),
             (["100", "1"], {"PEER_RATIO_REPEAT": "abc"}, "PEER_RATIO_REPEAT"),
             (["100", "1"], {"PEER_RATIO_REPEAT": "0"}, "PEER_RATIO_REPEAT")]
    for extra, more, what in cases:
        out = tmp_path / "out"
        done = subprocess.run(["bash", str(SCRIPTS / "peer-ratio.sh"), tmp_path / "b", out, "serial:opt", *extra],
                              capture_output=True, text=True, timeout=60, env={**env, **more})
        assert done.returncode == 2 and done.stderr.count("\n") == 1 and what in done.stderr, (extra, done.stderr)
        assert not out.exists(), (extra, "no pair ran")
    done = subprocess.run(["bash", str(SCRIPTS / "peer-ratio.sh"), tmp_path / "b", tmp_path / "file", "serial:opt",
                           "100", "1", "1"], capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "file" in done.stderr, done.stderr
    assert (tmp_path / "file").read_text() == "keep"
