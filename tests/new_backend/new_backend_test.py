#!/usr/bin/python3
"""A new backend is one folder, nothing else edited (README.md, "Adding a backend").

Copies the source tree into <build>/new-backend-test/src, adds two throw-away backend folders there (a
manifest, a CMakeLists.txt and one .cpp reusing the shared CPU kernel; one of kind cpu, one of kind gpu),
configures and builds only the suite with them (every other backend off, from the manifests), and shows
them in `suite --list` in their manifests' order, running and validating at 1200 images (78.25 %), in the
lists the GPU and CI scripts take from scripts/backends, and filtered by SUITE_BACKEND_KINDS as the presets
do. The every-variant test takes its cases from the same registry (tests/test_backends.cpp checks that they
are `suite --list`'s runnable variants), so a backend in the list is in that test.
  new_backend_test.py <source dir> <build dir>
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

PROBES = {"zz_probe_cpu": "cpu", "zz_probe_gpu": "gpu"}
HERE = Path(__file__).resolve().parent


def fail(message):
    print(f"new_backend_test: FAILED: {message}", file=sys.stderr)
    sys.exit(1)


def run(cmd, timeout, env=None, cwd=None):
    try:
        done = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=timeout, env=env,
                              cwd=cwd, check=False)
    except subprocess.TimeoutExpired:
        fail(f"{' '.join(map(str, cmd))}: no result within {timeout} s")
    if done.returncode != 0:
        fail(f"{' '.join(map(str, cmd))} exited {done.returncode}:\n{done.stdout[-3000:]}{done.stderr[-3000:]}")
    return done.stdout


def source_files(src, build_dir):
    """The checkout's files (tracked and untracked, not ignored), or, outside git, every file but builds."""
    try:
        out = subprocess.run(["git", "-C", src, "ls-files", "-co", "--exclude-standard", "-z"], capture_output=True,
                             check=True, timeout=60).stdout.decode()
        return [f for f in out.split("\0") if f and (src / f).is_file()]
    except (OSError, subprocess.SubprocessError):
        return [str(p.relative_to(src)) for p in src.rglob("*") if p.is_file() and build_dir not in p.parents
                and p.relative_to(src).parts[0] not in ("build", ".git")]


def copy_tree(src, dst, build_dir):
    for rel in source_files(src, build_dir):
        if rel.split("/")[0] == "results":  # committed reports: not needed to build or run
            continue
        (dst / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src / rel, dst / rel)


def add_probe(tree, name, kind, order):
    folder = tree / "backends" / name
    if folder.exists():
        fail(f"{folder} exists already: pick another probe name")
    folder.mkdir()
    (folder / "manifest.json").write_text(json.dumps({"order": order, "kind": kind, "label": name}) + "\n")
    for template, target in (("CMakeLists.txt.in", "CMakeLists.txt"), ("probe.cpp.in", f"{name}.cpp")):
        (folder / target).write_text((HERE / template).read_text().replace("@NAME@", name))


def configure(tree, build, extra):
    others = [p.parent.name for p in (tree / "backends").glob("*/manifest.json") if p.parent.name not in PROBES]
    cmd = ["cmake", "-S", tree, "-B", build, "-DCMAKE_BUILD_TYPE=Release", "-DCMAKE_COMPILE_WARNING_AS_ERROR=ON",
           "-DBUILD_TESTING=OFF", "-DSUITE_BUILD_BENCHMARKS=OFF"] + [f"-DWITH_{n.upper()}=OFF" for n in others]
    if shutil.which("ninja"):
        cmd += ["-G", "Ninja"]
    if shutil.which("ccache"):  # the copy's paths, relative to its build folder, are the source tree's
        cmd += ["-DCMAKE_CXX_COMPILER_LAUNCHER=ccache", "-DCMAKE_C_COMPILER_LAUNCHER=ccache"]
    run(cmd + extra, timeout=300)


def check_list(suite):
    listed = json.loads(run([suite, "--list", "--format", "json"], timeout=60))["backends"]
    names = [b["name"] for b in listed]
    if names[-2:] != list(PROBES):
        fail(f"the probes should come last, in their manifests' order: {names}")
    for b in listed[-2:]:
        if b["kind"] != PROBES[b["name"]] or not b["built"] or not b["runnable"] or len(b["variants"]) != 1:
            fail(f"--list --format json: {b}")
    if any(b["built"] for b in listed[:-2]):
        fail("every other backend was configured off")


def check_runs(suite, out):
    run([suite, "--backend", ",".join(PROBES), "--images", "1200", "--quiet", "--output", out], timeout=300)
    runs = json.loads(Path(out).read_text())["runs"]
    for r in runs:
        if r["accuracy"] != 0.7825 or not r["validation"]["passed"]:
            fail(f"{r['backend']}:{r['variant']}: accuracy {r['accuracy']}, validation {r['validation']}")
    if sorted(r["backend"] for r in runs) != sorted(PROBES):
        fail(f"runs: {[r['backend'] for r in runs]}")


def check_script_lists(tree, suite):
    backends = tree / "scripts" / "backends"
    gpu = run([backends, "--suite", suite, "--where", "kind=gpu,portable", "--variants", "--fast"], timeout=60)
    cpu = run([backends, "--suite", suite, "--where", "kind=cpu,portable", "--variants", "--fast"], timeout=60)
    no_device = run([backends, "--where", "kind=gpu", "--where", "!host_fallback"], timeout=60)
    off = run([backends, "--where", "kind=cpu", "--cmake-off"], timeout=60)
    if gpu.strip() != "zz_probe_gpu:only" or cpu.strip() != "zz_probe_cpu:only":
        fail(f"the GPU scripts' variants {gpu!r}, the CPU ones {cpu!r}")
    if "zz_probe_gpu" not in no_device.strip().split(",") or "-DWITH_ZZ_PROBE_GPU=OFF" not in off.split():
        fail(f".ci/run's GPU backends {no_device!r}; --cmake-off for kind cpu {off!r}")


def check_kind_filter(tree, build):
    configure(tree, build, ["-DSUITE_BACKEND_KINDS=cpu"])  # what the asan preset sets
    registry = (build / "generated" / "registry_generated.cpp").read_text()
    if '{"zz_probe_cpu", "cpu", ""}' not in registry or \
       '{"zz_probe_gpu", "gpu", "not built: a gpu backend, and this build configures SUITE_BACKEND_KINDS=cpu"}' \
       not in registry:
        fail(f"SUITE_BACKEND_KINDS=cpu: the generated registry is\n{registry}")


def main():
    src, build_dir = Path(sys.argv[1]).resolve(), Path(sys.argv[2]).resolve()
    work = build_dir / "new-backend-test"
    shutil.rmtree(work, ignore_errors=True)
    tree = work / "src"
    copy_tree(src, tree, build_dir)
    for i, (name, kind) in enumerate(PROBES.items()):
        add_probe(tree, name, kind, 1000 + i)
    build = tree / "build" / "default"  # as the source tree's build: the same relative paths for ccache
    common = os.path.commonpath([src, tree])
    if common != "/":
        os.environ["CCACHE_BASEDIR"] = common
    configure(tree, build, [])
    run(["cmake", "--build", build, "--target", "suite", "-j2"], timeout=900)
    suite = build / "bin" / "suite"
    check_list(suite)
    check_runs(suite, work / "r.json")
    check_script_lists(tree, suite)
    check_kind_filter(tree, tree / "build" / "kinds-cpu")
    shutil.rmtree(work, ignore_errors=True)
    print("new_backend_test: two new backend folders listed, run, validated and chosen by kind; no other file edited")


if __name__ == "__main__":
    main()
