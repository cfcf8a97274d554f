"""results/ab/device-setup.sh, sourced as the A/B scripts source it, with fake nvidia-smi and ldconfig: each
call unpacks into a fresh folder of its own, a missing tarball or $OUT returns 1 with one line, and the
caller's shell options stay as they were."""

import os
import subprocess
import tarfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SETUP = REPO / "results" / "ab" / "device-setup.sh"


def source(tmp_path, tarball, out=True):
    bin_ = tmp_path / "fakebin"
    bin_.mkdir(exist_ok=True)
    for name, text in (("nvidia-smi", "echo fake-gpu"), ("ldconfig", 'echo "libcudnn.so.9 libcublas.so.13"')):
        (bin_ / name).write_text(f"#!/bin/sh\n{text}\n")
        (bin_ / name).chmod(0o755)
    env = dict(os.environ, PATH=f"{bin_}:{os.environ['PATH']}", TMPDIR=str(tmp_path))
    env.pop("OUT", None)
    if out:
        env["OUT"] = str(tmp_path / "out dir")
    script = f'source "{SETUP}" "$1"; echo "rc=$?"; echo "opts=$-"; echo "B=${{B:-}}"'
    done = subprocess.run(["bash", "-c", script, "bash", str(tarball)], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=60)
    lines = dict(line.split("=", 1) for line in done.stdout.splitlines() if "=" in line)
    return done, lines


def pack(tmp_path, *names):
    src = tmp_path / "src"
    src.mkdir(exist_ok=True)
    tarball = tmp_path / "exp.tar.xz"
    with tarfile.open(tarball, "w:xz") as tar:
        for name in names:
            (src / name).write_text(name)
            tar.add(src / name, arcname=name)
    return tarball


def test_each_call_unpacks_into_a_fresh_folder_and_keeps_the_shell_options(tmp_path):
    done, first = source(tmp_path, pack(tmp_path, "old"))
    assert first["rc"] == "0" and "u" not in first["opts"], done.stdout + done.stderr
    assert sorted(os.listdir(first["B"])) == ["old"]
    assert (tmp_path / "out dir" / "r" / "device.txt").read_text().startswith("fake-gpu")
    done, second = source(tmp_path, pack(tmp_path, "new"))
    assert second["B"] != first["B"] and "exp" in Path(second["B"]).name, (first, second)
    assert sorted(os.listdir(second["B"])) == ["new"], os.listdir(second["B"])


def test_a_missing_tarball_or_out_returns_1_with_one_line(tmp_path):
    done, lines = source(tmp_path, tmp_path / "missing.tar.xz")
    assert lines["rc"] == "1" and done.stderr.count("\n") == 1 and "no such tarball" in done.stderr, done.stderr
    done, lines = source(tmp_path, pack(tmp_path, "x"), out=False)
    assert lines["rc"] == "1" and done.stderr.count("\n") == 1 and "OUT is not set" in done.stderr, done.stderr
    assert "u" not in lines["opts"]


def test_every_ab_script_stops_where_the_setup_fails():
    """After a failed setup $B, $R and $in are empty: a script going on would run `/suite...` and write its
    reports and summary under / instead of $OUT."""
    sourcing = [(path, line) for path in sorted((REPO / "results").rglob("*.sh")) if path != SETUP
                for line in path.read_text().splitlines() if line.lstrip().startswith("source results/ab/device-setup.sh")]
    assert sourcing, "no A/B script sources device-setup.sh: this test looks in the wrong place"
    for path, line in sourcing:
        assert line.rstrip().endswith("|| exit 1"), f"{path.relative_to(REPO)}: {line.strip()}"
