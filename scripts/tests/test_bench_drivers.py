"""scripts/gpu-bench.sh, verdict-bench.sh and mpi-scaling.sh with fake programs (suite, nvidia-smi, mpirun,
ldconfig, the peer's Python) that log their arguments: bad input is one line and exit 2 before any work, a
machine without nvidia-smi exits 4, they run from any folder with relative arguments, and nothing is
written to fixed names in /tmp or left as an empty report."""

import json
import os
import subprocess
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parents[1]

LIST = {"backends": [{"name": "cuda", "kind": "gpu", "built": True, "runnable": True,
                      "variants": [{"name": "naive"}, {"name": "fused"}]}]}
# Logs its arguments; `--list` answers as a build with CUDA; the out-of-memory run exits 1 as the real one.
SUITE = """#!/bin/sh
echo "suite $*" >> "$FAKE_LOG"
case " $* " in
  *" --list "*) echo '%s'; exit 0;;
  *" 2000000 "*) exit 1;;
esac
exit 0
""" % json.dumps(LIST)
LOGGER = '#!/bin/sh\necho "$(basename "$0") $*" >> "$FAKE_LOG"\n'
# The peer is not run; every other Python call is the real one (scripts/backends).
PYTHON = '#!/bin/sh\ncase "$1" in *peer_pytorch.py) exit 0;; esac\nexec /usr/bin/python3 "$@"\n'
# gpu-libs.sh looks for cuDNN and cuBLAS with find / when ldconfig lacks them: say they are there.
LDCONFIG = '#!/bin/sh\necho "libcudnn.so.9 libcublas.so.13"\n'


def fake(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)


def tree(tmp_path, nvidia=True, suite=True):
    """A caller's folder with a fake build ('my build/bin/suite'), fake programs on PATH, and the env."""
    cwd = tmp_path / "caller dir"
    if suite:
        fake(cwd / "my build" / "bin" / "suite", SUITE)
        fake(cwd / "my build" / "bin" / "gpu_peak", '#!/bin/sh\necho \'{"fp32": 1}\'\n')
    else:
        (cwd / "my build" / "bin").mkdir(parents=True)
    bin_ = tmp_path / "fakebin"
    for name in ("mpirun", "ncu", "compute-sanitizer"):
        fake(bin_ / name, LOGGER)
    if nvidia:
        fake(bin_ / "nvidia-smi", LOGGER)
    fake(bin_ / "python3", PYTHON)
    fake(bin_ / "ldconfig", LDCONFIG)
    # Only the system's folders besides the fakes: a real nvidia-smi, mpirun or ncu stays out.
    env = dict(os.environ, PATH=f"{bin_}:/usr/bin:/bin", FAKE_LOG=str(tmp_path / "log"),
               GPU_BENCH_SLOW="0", GPU_BENCH_SANITIZER="0", GPU_BENCH_NCU="0")
    return cwd, env


def run(script, args, cwd, env):
    return subprocess.run(["bash", str(SCRIPTS / script), *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=60)


def log(tmp_path):
    path = tmp_path / "log"
    return path.read_text() if path.exists() else ""


def test_gpu_bench_runs_from_any_folder_and_writes_no_fixed_tmp_names(tmp_path):
    cwd, env = tree(tmp_path)
    env.update(GPU_BENCH_SANITIZER="1")
    done = run("gpu-bench.sh", ["my build", "out"], cwd, env)
    calls = log(tmp_path)
    assert "GPU out of memory: cuda:naive" in done.stdout and "exit code 1" in done.stdout, done.stdout + done.stderr
    assert "suite --list" in calls and "nvidia-smi" in calls, calls
    assert "/tmp/oom.json" not in calls and "/tmp/m.json" not in calls and "/tmp/r.json" not in calls, calls
    assert "No such file" not in done.stderr and "can't open file" not in done.stderr, done.stderr
    assert (cwd / "out").is_dir()


def test_gpu_bench_skips_the_oom_check_without_an_nvcc_backend(tmp_path):
    cwd, env = tree(tmp_path)
    fake(cwd / "my build" / "bin" / "suite", SUITE.replace('"cuda"', '"openacc"'))
    done = run("gpu-bench.sh", ["my build", "out"], cwd, env)
    assert "GPU out of memory: skipped" in done.stdout, done.stdout + done.stderr
    assert "2000000" not in log(tmp_path)


def check_refusal(tmp_path, script, args, code, words, nvidia=True, suite=True):
    cwd, env = tree(tmp_path, nvidia=nvidia, suite=suite)
    done = run(script, args, cwd, env)
    assert done.returncode == code, (script, args, done.returncode, done.stdout, done.stderr)
    assert done.stderr.count("\n") == 1 and done.stderr.startswith(script + ": ") and words in done.stderr, \
        (script, args, done.stderr)
    assert done.stdout == "" and log(tmp_path) == "", (done.stdout, log(tmp_path))
    assert sorted(p.name for p in cwd.iterdir()) == ["my build"], "it made a folder before refusing"


def test_a_build_without_the_suite_is_one_line_and_exit_2(tmp_path):
    for i, (script, args) in enumerate([("gpu-bench.sh", ["my build", "out"]),
                                        ("verdict-bench.sh", ["gpu", "my build", "out"]),
                                        ("verdict-bench.sh", ["cpu", "my build", "out"]),
                                        ("mpi-scaling.sh", ["cpu", "my build", "out", "openmp:winograd"]),
                                        ("mpi-scaling.sh", ["gpu", "my build", "out", "cuda:fused"])]):
        check_refusal(tmp_path / str(i), script, args, 2, "bin/suite: no such program", suite=False)


def test_no_nvidia_smi_is_one_line_and_exit_4(tmp_path):
    for i, (script, args) in enumerate([("gpu-bench.sh", ["my build", "out"]),
                                        ("verdict-bench.sh", ["gpu", "my build", "out"]),
                                        ("mpi-scaling.sh", ["gpu", "my build", "out", "cuda:fused"])]):
        check_refusal(tmp_path / str(i), script, args, 4, "nvidia-smi not found", nvidia=False)


def test_bad_kinds_and_missing_arguments_are_the_usage_line_and_exit_2(tmp_path):
    cases = [("verdict-bench.sh", ["GPU", "my build", "out"]), ("verdict-bench.sh", ["gpux", "my build", "out"]),
             ("verdict-bench.sh", ["cpu", "my build"]), ("mpi-scaling.sh", ["cpu", "my build", "out"]),
             ("mpi-scaling.sh", ["tpu", "my build", "out", "cuda:fused"]), ("mpi-scaling.sh", []),
             ("gpu-bench.sh", ["my build"]), ("gpu-bench.sh", ["", "out"])]
    for i, (script, args) in enumerate(cases):
        check_refusal(tmp_path / str(i), script, args, 2, "usage: ")


def test_verdict_bench_gpu_writes_the_peaks_only_from_a_run_that_succeeded(tmp_path):
    cwd, env = tree(tmp_path)
    done = run("verdict-bench.sh", ["gpu", "my build", "out"], cwd, env)
    assert json.loads((cwd / "out" / "gpu_peak.json").read_text()) == {"fp32": 1}, done.stdout + done.stderr
    assert (cwd / "out" / "gpu_peak.json").stat().st_mode & 0o777 == 0o644  # as a redirect would make it
    assert "can't open file" not in done.stderr, done.stderr
    fake(cwd / "my build" / "bin" / "gpu_peak", "#!/bin/sh\nexit 3\n")
    (cwd / "out" / "gpu_peak.json").unlink()
    done = run("verdict-bench.sh", ["gpu", "my build", "out"], cwd, env)
    assert done.returncode == 1 and [p.name for p in (cwd / "out").iterdir() if "peak" in p.name] == [], \
        sorted(p.name for p in (cwd / "out").iterdir())


def test_mpi_scaling_runs_from_any_folder(tmp_path):
    cwd, env = tree(tmp_path)
    done = run("mpi-scaling.sh", ["cpu", "my build", "out", "openmp:winograd"], cwd, env)
    calls = log(tmp_path)
    assert f"{cwd}/my build/bin/suite" in calls and f"{cwd}/out/cpu-ranks1.json" in calls, calls
    assert "data/cifar10" in calls and "usage" not in done.stderr, done.stderr
