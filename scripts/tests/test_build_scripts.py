"""The build-side scripts with fake programs that log their arguments (nothing is built or downloaded):
verdict-build.sh takes exactly cpu|gpu and keeps a hook's argument with a space as one argument;
backend-hooks.sh takes only the manifests' hook fields."""

import os
import shutil
import subprocess
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parents[1]
REPO = SCRIPTS.parent
# One argument a line, so that an argument with a space shows as one.
LOGGER = '#!/bin/sh\nfor a in "$@"; do echo "$a"; done >> "$FAKE_LOG"\necho "--" >> "$FAKE_LOG"\n'


def fake(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)


def clone(tmp_path):
    """A copy of the scripts and backends in a folder with a space, Kokkos' OpenMP space 'installed'."""
    root = tmp_path / "sp ace" / "repo"
    ignore = shutil.ignore_patterns("tests", "__pycache__", "*.cpp", "*.cu", "*.cuh", "*.hpp")
    shutil.copytree(SCRIPTS, root / "scripts", ignore=ignore)
    shutil.copytree(REPO / "backends", root / "backends", ignore=ignore)
    config = root / "build" / "kokkos-install" / "openmp" / "lib" / "cmake" / "Kokkos" / "KokkosConfig.cmake"
    config.parent.mkdir(parents=True)
    config.write_text("")
    bin_ = tmp_path / "fakebin"
    for name in ("cmake", "apt-get", "nvidia-smi", "ninja"):
        fake(bin_ / name, LOGGER)
    env = dict(os.environ, PATH=f"{bin_}:{os.environ['PATH']}", FAKE_LOG=str(tmp_path / "log"))
    return root, env


def log(tmp_path):
    path = tmp_path / "log"
    return path.read_text().splitlines() if path.exists() else []


def test_verdict_build_cpu_keeps_a_clone_path_with_a_space_one_argument(tmp_path):
    root, env = clone(tmp_path)
    (tmp_path / "caller").mkdir()
    # The fake cmake 'builds' nothing, so the step after the build (ldd of bin/suite) fails: stop there.
    subprocess.run(["bash", str(root / "scripts" / "verdict-build.sh"), "cpu", "out dir"], cwd=tmp_path / "caller",
                   env=env, capture_output=True, text=True, timeout=60)
    args = log(tmp_path)
    assert f"-DKokkos_ROOT={root}/build/kokkos-install/openmp" in args, args
    assert str(tmp_path / "caller" / "out dir") in args, args  # a relative [dir] is the caller's


def test_verdict_build_takes_only_cpu_or_gpu(tmp_path):
    root, env = clone(tmp_path)
    for args in (["GPU"], ["gpux"], ["cuda", "d"], [], ["cpu", ""], ["cpu", "a", "b"]):
        done = subprocess.run(["bash", str(root / "scripts" / "verdict-build.sh"), *args], env=env,
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 2 and done.stderr.count("\n") == 1, (args, done.stderr)
        assert done.stderr.startswith("verdict-build.sh: usage: ") and log(tmp_path) == [], (args, done.stderr)


def test_backend_hooks_takes_only_hook_fields(tmp_path):
    for field in ("gpu_biuld", "kind", "a/b", "", "order", ".*"):
        done = subprocess.run(["bash", str(SCRIPTS / "backend-hooks.sh"), field], cwd=tmp_path,
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 2 and done.stderr.count("\n") == 1, (field, done.stderr)
        assert done.stderr.startswith("backend-hooks.sh: usage: ") and "gpu_build" in done.stderr, done.stderr
    done = subprocess.run(["bash", str(SCRIPTS / "backend-hooks.sh")], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr


def test_cpu_bench_refuses_a_folder_without_a_build_before_making_its_output(tmp_path):
    bin_ = tmp_path / "fakebin"
    for name in ("cmake", "apt-get", "sudo"):
        fake(bin_ / name, LOGGER)
    env = dict(os.environ, PATH=f"{bin_}:{os.environ['PATH']}", FAKE_LOG=str(tmp_path / "log"),
               CPU_BENCH_OUT=str(tmp_path / "out"))
    (tmp_path / "no build").mkdir()
    done = subprocess.run(["bash", str(SCRIPTS / "cpu-bench.sh"), "no build"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith("cpu-bench.sh: no build: no CMake build folder"), done.stderr
    assert not (tmp_path / "out").exists() and log(tmp_path) == []


def offload(tmp_path, *args):
    bin_ = tmp_path / "fakebin"
    for name in ("apt-get", "dpkg", "dpkg-query"):
        fake(bin_ / name, LOGGER)
    env = dict(os.environ, PATH=f"{bin_}:{os.environ['PATH']}", FAKE_LOG=str(tmp_path / "log"))
    return subprocess.run(["bash", str(SCRIPTS / "gcc-offload-runtime.sh"), *args], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=60)


def test_gcc_offload_runtime_refuses_an_empty_or_missing_folder_before_downloading(tmp_path):
    for args in ([""], [], ["no such build"]):
        done = offload(tmp_path, *args)
        assert done.returncode == 2 and done.stderr.count("\n") == 1, (args, done.stderr)
        assert done.stderr.startswith("gcc-offload-runtime.sh: ") and log(tmp_path) == [], (args, done.stderr)


def test_gcc_offload_runtime_takes_a_folder_named_with_a_leading_dash(tmp_path):
    (tmp_path / "-build").mkdir()
    done = offload(tmp_path, "-build")
    # The fake apt-get downloads nothing, so the copy fails; the folder was made as a folder, not an option.
    assert "invalid option" not in done.stderr and (tmp_path / "-build" / "offload-runtime").is_dir(), done.stderr


def test_cache_dir_is_suite_cache_dir_else_xdg_cache_home_else_home(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("SUITE_CACHE_DIR", "XDG_CACHE_HOME")}
    cases = [({"HOME": "/h"}, "/h/.cache/cnn-suite"),
             ({"HOME": "/h", "XDG_CACHE_HOME": "/x"}, "/x/cnn-suite"),
             ({"HOME": "/h", "XDG_CACHE_HOME": "/x", "SUITE_CACHE_DIR": "/s p/c"}, "/s p/c"),
             ({"HOME": "/h", "SUITE_CACHE_DIR": ""}, "/h/.cache/cnn-suite")]
    for extra, want in cases:
        done = subprocess.run([str(SCRIPTS / "cache-dir")], env={**env, **extra}, capture_output=True, text=True,
                              timeout=30)
        assert done.returncode == 0 and done.stdout == want + "\n", (extra, done.stdout, done.stderr)


def test_build_kokkos_refuses_an_option_as_the_prefix_before_any_work(tmp_path):
    root, env = clone(tmp_path)
    for name in ("apt-get", "tee", "sudo", "tar", "patch", "dpkg-source"):
        fake(tmp_path / "fakebin" / name, LOGGER)
    env.update(SUITE_CACHE_DIR=str(tmp_path / "cache"), HOME=str(tmp_path))
    for args in (["--help"], ["--openmp-only", "-x"], [""], ["a", "b"]):
        done = subprocess.run(["bash", str(root / "backends" / "kokkos" / "build-kokkos.sh"), *args], cwd=tmp_path,
                              env=env, capture_output=True, text=True, timeout=60)
        assert done.returncode == 2 and done.stderr.count("\n") == 1, (args, done.stdout, done.stderr)
        assert done.stderr.startswith("build-kokkos.sh: usage: ") and done.stdout == "", (args, done.stderr)
        assert log(tmp_path) == [] and not (root / "build" / "kokkos-src").exists(), args


def test_build_kokkos_quick_start_without_a_prefix_gives_its_note_and_exit_0(tmp_path):
    # With no prefix the argument check read an unset $1 (set -u: "unbound variable"), and the quick start, finding
    # no error line in the log, ended in its own `grep` (set -e, pipefail): exit 1, and CI's quick start ran the
    # kokkos backend on Debian's Serial Kokkos without saying why.
    root, env = clone(tmp_path)
    (root / "build" / "kokkos-install").rename(root / "build" / "not-installed")
    for name in ("apt-get", "tee", "sudo", "tar", "patch", "dpkg-source"):
        fake(tmp_path / "fakebin" / name, LOGGER)
    env.update(SUITE_CACHE_DIR=str(tmp_path / "cache"), HOME=str(tmp_path))
    done = subprocess.run(["bash", str(root / "backends" / "kokkos" / "build-kokkos.sh"), "--quick-start"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, (done.stdout, done.stderr)
    assert done.stdout.startswith("kokkos: note: Kokkos' OpenMP space not built"), done.stdout
    quick_log = (root / "build" / "kokkos-src" / "quick-start.log").read_text()
    assert "unbound variable" not in quick_log and "usage" not in quick_log, quick_log
