"""scripts/run-fuzzers.sh and scripts/run-tests.sh in a copy of the repository's layout with fake tools (no build
runs): bad arguments get one line and exit 2 before any work, and a fuzzer's failure is said with its exit code."""

import os
import shutil
import subprocess
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parents[1]

TOOL = "#!/bin/sh\necho \"$0 $*\" >> \"$FAKE_LOG\"\n"


def fake_repo(root, script):
    """root/scripts/<script> with install-deps.sh, quick-start-backends.sh and a cmake on PATH that only log."""
    (root / "scripts").mkdir(parents=True)
    shutil.copy(SCRIPTS / script, root / "scripts" / script)
    shutil.copy(SCRIPTS.parent / "CMakePresets.json", root / "CMakePresets.json")
    (root / "bin").mkdir()
    for path in (root / "scripts" / "install-deps.sh", root / "scripts" / "quick-start-backends.sh",
                 root / "bin" / "cmake"):
        path.write_text(TOOL)
        path.chmod(0o755)
    return dict(os.environ, PATH=f"{root / 'bin'}:{os.environ['PATH']}", FAKE_LOG=str(root / "log"))


def test_run_fuzzers_refuses_seconds_that_libfuzzer_reads_as_no_limit(tmp_path):
    env = fake_repo(tmp_path / "a repo", "run-fuzzers.sh")
    for seconds in ("abc", "0", "-1", "", "1e3", "99999999999999999999"):
        done = subprocess.run(["bash", str(tmp_path / "a repo" / "scripts" / "run-fuzzers.sh"), seconds],
                              capture_output=True, text=True, timeout=60, env=env)
        assert done.returncode == 2 and done.stderr.count("\n") == 1 and "seconds" in done.stderr, (seconds, done)
        assert not (tmp_path / "a repo" / "log").exists(), (seconds, "nothing installed or built")


def test_run_fuzzers_says_which_fuzzer_failed_and_how(tmp_path):
    root = tmp_path / "a repo"
    env = fake_repo(root, "run-fuzzers.sh")
    for target in ("cifar10", "weights"):
        (root / "fuzz" / "corpus" / target).mkdir(parents=True)
        (root / "fuzz" / "corpus" / target / "seed").write_text("x")
    (root / "build" / "fuzz" / "fuzz").mkdir(parents=True)
    fuzzer = root / "build" / "fuzz" / "fuzz" / "cifar10_fuzzer"
    fuzzer.write_text("#!/bin/sh\necho '==1==ERROR: AddressSanitizer: heap-buffer-overflow'\nexit 77\n")
    fuzzer.chmod(0o755)
    done = subprocess.run(["bash", str(root / "scripts" / "run-fuzzers.sh"), "1"], capture_output=True, text=True,
                          timeout=60, env=env)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "heap-buffer-overflow" in done.stdout, done.stdout
    assert "run-fuzzers: the cifar10 fuzzer failed (exit 77)" in done.stderr, done.stderr


def test_run_tests_refuses_a_preset_that_is_no_workflow_before_removing_anything(tmp_path):
    root = tmp_path / "a repo"
    env = fake_repo(root, "run-tests.sh")
    victim = tmp_path / "victim"  # build/../../victim from the repository
    (victim / "CMakeFiles").mkdir(parents=True)
    for name in ("Makefile", "CMakeCache.txt"):
        (victim / name).write_text("keep")
    for preset in ("../../victim", "debug", "", "no-such", "ci/x"):
        done = subprocess.run(["bash", str(root / "scripts" / "run-tests.sh"), preset], capture_output=True,
                              text=True, timeout=60, env=env)
        assert done.returncode == 2 and done.stderr.count("\n") == 1 and "preset" in done.stderr, (preset, done)
        assert not (root / "log").exists(), (preset, "nothing installed or built")
    assert (victim / "CMakeCache.txt").is_file() and (victim / "CMakeFiles").is_dir()


def test_run_tests_takes_the_workflow_presets(tmp_path):
    root = tmp_path / "a repo"
    env = fake_repo(root, "run-tests.sh")
    for preset in ([], ["ci"], ["asan"], ["default"]):
        done = subprocess.run(["bash", str(root / "scripts" / "run-tests.sh"), *preset], capture_output=True,
                              text=True, timeout=60, env=env)
        assert done.returncode == 0, (preset, done.stderr)
        assert f"--workflow --preset {preset[0] if preset else 'ci'}" in (root / "log").read_text()
