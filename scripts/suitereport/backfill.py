"""Benchmarks past commits: each commit checked out in a separate git worktree, built, run, and its report
added to the history store (`history backfill`), or a binary search for the commit where a benchmark
stepped (`history bisect`, bisect.py).

Where: one worktree under build/ (default build/history-backfill/src), re-used from commit to commit
(`git checkout --detach --force`: only the files that differ change, so the build is incremental) and
one build tree beside it (build/history-backfill/build) with ccache as the compiler launcher where it is
installed, so going back to a commit built before (bisect) compiles nothing. The worktree is git's own
(`git worktree add`), so the user's checkout is never touched; a folder there that is not a worktree of
this repository is refused, never deleted. `--remove-worktree` removes it at the end.

With several runs a commit (`--runs N`), the commits' runs take turns (interleaved): each commit is built
first in a worktree and build tree of its own (src-1, build-1, src-2, ...), then round k runs every commit
once, forward in even rounds and backward in odd ones (A B, B A, A B, ...). A machine that drifts over the
minutes (its clock, a neighbour's load) then weighs on both sides alike; run one after the other, a drift of
a few per cent a run reads as a step (tests/test_backfill.py shows both).

What: the backends of the set only (-DWITH_<X>=OFF for the others: the CUDA and offload backends take minutes to
compile; every commit since the backends became folders reads these options, older ones ignore them),
only the `suite` target, no tests. The run is pluggable (Probe: a build command and a run command, shell
templates), so a test can bisect a throw-away repository without the C++ build.

A commit that does not build, whose suite fails, or whose runs fail validation is recorded in the store
as such (an entry with "status" and no runs, or with the runs that failed marked), so a resumed backfill
skips it and the dashboard can say why a commit has no point.
"""

import hashlib
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from . import history, identity, load, manifests, safe_io

REPO_ROOT = identity.REPO_ROOT
DEFAULT_WORKDIR = REPO_ROOT / "build" / "history-backfill"
# The quick CPU set (the manifests' "history" variants): about a minute per commit on 2 cores (build
# excluded). A variant renamed since is asked for under its name at that commit.
DEFAULT_SET = manifests.history_set()
DEFAULT_IMAGES = "1200"
DEFAULT_THREADS = 2
DEFAULT_REPEAT = 10
BASE_CMAKE_OPTIONS = ["-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release", "-DCMAKE_COMPILE_WARNING_AS_ERROR=OFF",
                      "-DBUILD_TESTING=OFF", "-DSUITE_BUILD_TESTS=OFF", "-DSUITE_BUILD_BENCHMARKS=OFF",
                      "-DSUITE_BUILD_FUZZERS=OFF"]


def backend_names(backends):
    """The backends of a benchmark set's backend:variant words."""
    return {want.partition(":")[0] for want in backends}


def cmake_options(backends):
    """The default build's options for a benchmark set: only the backends it runs are built (the others, GPU
    and offload toolchains among them, take minutes to compile; confirming a step of a library backend
    needs that library built). The asked ones are set back to AUTO: the build tree is re-used, and an earlier
    set may have cached them OFF."""
    names = backend_names(backends)
    asked = [f"-DWITH_{name.upper()}=AUTO" for name in sorted(names) if name in manifests.manifests()]
    return BASE_CMAKE_OPTIONS + asked + manifests.cmake_off(names)


class BackfillError(load.ReportError):
    """One line: what could not be done (not a commit's failure, which is recorded in the store)."""


def git(repo, *args, check=True):
    r = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)
    if check and r.returncode != 0:
        raise BackfillError(f"git {' '.join(args)}: {_git_error(r.stderr)}")
    return r.stdout


def _git_error(stderr):
    """The line of git's stderr that says what failed: its first fatal: or error: line (advice may follow it:
    a lock left by a killed git is five lines of it), else its last line."""
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    said = [ln for ln in lines if ln.startswith(("fatal:", "error:"))]
    return said[0] if said else lines[-1] if lines else "failed"


def resolve(repo, rev):
    out = git(repo, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}", check=False).strip()
    if not out:
        raise BackfillError(f"{rev}: no such commit in {repo}")
    return out


def commits_of(repo, specs, every=1, first_parent=False):
    """The commits named by specs, oldest first in git's topological order: `A..B` (as git reads it: the
    commits after A up to B), or single commits. With every N: every N-th of them, the newest always."""
    out = []
    for spec in specs:
        if ".." in spec:
            a, b = spec.split("..", 1)
            rng = f"{resolve(repo, a)}..{resolve(repo, b or 'HEAD')}"
            args = ["rev-list", "--topo-order", "--reverse"] + (["--first-parent"] if first_parent else []) + [rng]
            out += git(repo, *args).split()
        else:
            out.append(resolve(repo, spec))
    seen, unique = set(), []
    for c in out:
        if c not in seen:
            seen.add(c)
            unique.append(c)
    if every > 1 and unique:
        picked = unique[::-1][::every][::-1]  # counted from the newest, so the newest is always in
        unique = picked
    return unique


def commit_meta(repo, commit):
    """(subject, git order): the order is the number of commits reachable from it (rev-list --count),
    which grows along every line of history: the store's fallback order where the repo is absent."""
    subject = git(repo, "log", "-1", "--format=%s", commit).strip()
    count = int(git(repo, "rev-list", "--count", commit).strip() or 0)
    return subject, count


# ---- the machine's load, as the suite measures it (suite/system_info.cpp)


def _procs_running():
    try:
        for line in safe_io.read_text("/proc/stat", limit=1 << 20).splitlines():
            if line.startswith("procs_running "):
                return int(line.split()[1])
    except (safe_io.UnsafePath, ValueError):
        pass
    return None


def machine_load():
    """{load_avg_1min, other_runnable}: other runnable processes besides this one (least of 5 looks)."""
    try:
        avg = os.getloadavg()[0]
    except OSError:
        avg = 0.0
    least = None
    for i in range(5):
        if i:
            time.sleep(0.01)
        n = _procs_running()
        if n is not None:
            least = n - 1 if least is None else min(least, n - 1)
    return {"load_avg_1min": round(avg, 3), "other_runnable": max(0, least or 0)}


def wait_quiet(max_s, log=print):
    """Waits up to max_s seconds for no other runnable process (three looks in a row), so a benchmark
    is not timed beside someone's compiler; returns the seconds waited."""
    start = time.monotonic()
    quiet = 0
    while time.monotonic() - start < max_s:
        quiet = quiet + 1 if machine_load()["other_runnable"] == 0 else 0
        if quiet >= 3:
            break
        time.sleep(1.0)
    waited = time.monotonic() - start
    if quiet < 3 and max_s > 0:
        log(f"  the machine stayed busy for {waited:.0f} s; running anyway (the report records the load)")
    return waited


# ---- the worktree and the build


def prepare_worktree(repo, src, commit):
    """Checks out commit in the worktree src (created with `git worktree add` if missing)."""
    src = Path(src)
    if src.exists():
        try:
            common = git(src, "rev-parse", "--path-format=absolute", "--git-common-dir").strip()
            mine = git(repo, "rev-parse", "--path-format=absolute", "--git-common-dir").strip()
            top = git(src, "rev-parse", "--show-toplevel").strip()
        except BackfillError:
            common, mine, top = "", "x", ""
        if common != mine or Path(top).resolve() != src.resolve():
            raise BackfillError(f"{src}: exists and is not a worktree of {repo}; refusing to use or delete it "
                                "(pick another --workdir)")
        git(src, "checkout", "--quiet", "--detach", "--force", commit)
        git(src, "clean", "-fdxq")  # files an earlier commit's build step left in the sources
    else:
        src.parent.mkdir(parents=True, exist_ok=True)
        git(repo, "worktree", "add", "--quiet", "--detach", str(src), commit)


def remove_worktree(repo, src):
    if Path(src).exists():
        git(repo, "worktree", "remove", "--force", str(src))


def remove_worktrees(repo, workdir):
    """The work folder's worktrees: src and the interleaved runs' src-N (each refused if it is not a worktree
    of repo, as prepare_worktree refuses it)."""
    for src in [Path(workdir) / "src"] + sorted(Path(workdir).glob("src-*")):
        remove_worktree(repo, src)


@dataclass
class Probe:
    """How to build and run one commit. build/run are shell templates with {src} (the worktree), {build}
    (the build folder), {out} (the report to write), {backends}, {images}, {threads}, {repeat}; empty build:
    the default CMake build of the suite; empty run: the suite found in the build folder."""

    repo: Path
    workdir: Path = DEFAULT_WORKDIR
    build: str = ""
    run: str = ""
    backends: tuple = DEFAULT_SET
    images: str = DEFAULT_IMAGES
    threads: int = DEFAULT_THREADS
    repeat: int = DEFAULT_REPEAT
    quiet_wait_s: float = 0.0
    runs: int = 1  # suite processes per commit: the step test compares per-run medians from gate.MIN_RUNS on
    slot: str = ""  # "": the shared worktree src and build tree build; "N": src-N and build-N (interleaved runs)
    timeout_s: float = 1800.0
    log: object = print
    last_output: str = field(default="", repr=False)
    _hooks: list = field(default=None, repr=False)

    def __post_init__(self):
        # The commands run inside the worktree: a relative --workdir must not be read from there.
        self.workdir = Path(self.workdir).absolute()

    @property
    def src(self):
        return Path(self.workdir) / (f"src-{self.slot}" if self.slot else "src")

    @property
    def build_dir(self):
        return Path(self.workdir) / (f"build-{self.slot}" if self.slot else "build")

    def in_slot(self, slot):
        """The same probe on a worktree and build tree of its own; the toolchain hooks run once for all."""
        if not self.build:
            self.hook_args()
        return replace(self, slot=slot)

    def _fill(self, template, **extra):
        values = {"src": self.src, "build": self.build_dir, "images": self.images, "threads": self.threads,
                  "repeat": self.repeat, "backends": ",".join(self.backends)}
        values.update(extra)
        return template.format(**{k: shlex.quote(str(v)) for k, v in values.items()})

    def _sh(self, command, cwd):
        r = subprocess.run(command, shell=True, cwd=cwd, capture_output=True, text=True, timeout=self.timeout_s)
        self.last_output = (r.stdout + r.stderr)[-4000:]
        return r.returncode

    def checkout(self, commit):
        prepare_worktree(self.repo, self.src, commit)

    def build_commit(self, commit):
        """Builds the checked-out commit; (ok, why)."""
        if self.build:
            rc = self._sh(self._fill(self.build, commit=commit), self.src)
            return rc == 0, f"build command exit {rc}"
        return self._cmake_build()

    def _cmake_build(self):
        b = self.build_dir
        launcher = ["-DCMAKE_CXX_COMPILER_LAUNCHER=ccache", "-DCMAKE_C_COMPILER_LAUNCHER=ccache"] \
            if shutil.which("ccache") else []
        configure = ["cmake", "-S", str(self.src), "-B", str(b)] + cmake_options(self.backends) + \
            self.hook_args() + launcher
        build = ["cmake", "--build", str(b), "--target", "suite"]
        for attempt in (1, 2):
            ok = self._sh(shlex.join(configure), self.src) == 0 and self._sh(shlex.join(build), self.src) == 0
            if ok:
                return True, ""
            # A tree configured by another commit's CMake files can fail where a fresh one builds: once more
            # from scratch (only a folder that is a CMake build tree is deleted).
            if attempt == 1 and (b / "CMakeCache.txt").is_file():
                self.log("  build failed; once more in a fresh build tree")
                shutil.rmtree(b)
        return False, "build failed: " + _last_line(self.last_output)

    def hook_args(self):
        """The CMake arguments of the asked backends' "cpu_build" hooks (manifests.cpu_build_hooks), run once
        from this repository, not from the commit's worktree: every commit is built on the toolchain the
        quick start and the verdict use (a portable model's OpenMP space, not the one-thread space Debian
        packages: another runtime is another build, history.build_of). A hook that fails is said, and the
        build goes on without it."""
        if self._hooks is None:
            self._hooks = []
            for name, argv in manifests.cpu_build_hooks(backend_names(self.backends)):
                try:
                    r = subprocess.run(argv, cwd=REPO_ROOT, capture_output=True, text=True, timeout=self.timeout_s)
                except (OSError, subprocess.SubprocessError) as e:
                    r = subprocess.CompletedProcess(argv, 1, "", str(e))
                if r.returncode == 0:
                    self._hooks += shlex.split(r.stdout)
                else:
                    self.log(f"  {name}: its cpu_build hook failed ({_last_line(r.stderr)}); built without it")
        return self._hooks

    def suite(self):
        """The suite program of the build tree (build/bin/suite today; older layouts searched)."""
        for rel in ("bin/suite", "suite/suite", "suite"):
            p = self.build_dir / rel
            if p.is_file() and os.access(p, os.X_OK):
                return p
        hits = [p for p in self.build_dir.rglob("suite") if p.is_file() and os.access(p, os.X_OK)]
        if not hits:
            raise BackfillError(f"{self.build_dir}: no suite program after the build")
        return max(hits, key=lambda p: p.stat().st_mtime)

    def runnable_backends(self):
        """The wanted backends and variants that `suite --list` says this commit has, built and runnable."""
        if self.run:
            return list(self.backends)
        r = subprocess.run([str(self.suite()), "--list"], cwd=self.src, capture_output=True, text=True, timeout=120)
        listed = parse_list(r.stdout)
        out = []
        for want in self.backends:
            backend, _, variant = want.partition(":")
            have = listed.get(backend)
            if not have:
                continue
            if not variant:
                out.append(backend)
                continue
            # The variant under the name it had at this commit (manifest.json "renamed": old -> new).
            named = [v for v in have if v == variant or identity.current_variant(backend, v) == variant]
            if named:
                out.append(f"{backend}:{named[0]}")
        return out

    def run_commit(self, commit, out, backends):
        """Runs the benchmark set; (exit code, load before, load after)."""
        if self.quiet_wait_s:
            wait_quiet(self.quiet_wait_s, self.log)
        before = machine_load()
        if self.run:
            cmd = self._fill(self.run, commit=commit, out=out, backends=",".join(backends))
        else:
            cmd = shlex.join([str(self.suite()), "--backend", ",".join(backends), "--images", str(self.images),
                              "--threads", str(self.threads), "--repeat", str(self.repeat), "--quiet",
                              "--output", str(out)])
        rc = self._sh(cmd, self.src)
        return rc, before, machine_load()


def parse_list(text):
    """{backend: [variants]} of `suite --list` that are built and runnable here. Its format has not changed
    since the first commit: `backend:variant  yes  yes (device)` per variant (a description line under
    it), `backend  no  no: why` for a backend not built."""
    listed = {}
    for line in text.splitlines():
        m = re.match(r"^([A-Za-z0-9_]+):([A-Za-z0-9_]+)\s+yes\s+yes\b", line)
        if m:
            listed.setdefault(m.group(1), []).append(m.group(2))
    return listed


def _last_line(text):
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1][:300] if lines else "(no output)"


def now_utc():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def status_entry(commit, subject, order, status, why, platform):
    """A commit that gave no usable report: its own store entry, so a resumed backfill skips it."""
    ident = hashlib.sha256(f"{commit}|{platform.id}|{status}".encode()).hexdigest()[:24]
    return {"store_version": history.STORE_VERSION, "id": ident, "status": status, "error": why[:500],
            "machine": platform.id, "platform": platform.id, "platform_label": platform.label,
            "git_commit": commit, "git_subject": subject, "git_order": order, "git_dirty": False,
            "date_utc": now_utc(), "runs": [], "host": os.uname().nodename}


def this_platform():
    """The CPU platform of this machine, as the suite names it (identity.cpu_platform)."""
    model = ""
    try:
        for line in safe_io.read_text("/proc/cpuinfo", limit=16 << 20).splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except safe_io.UnsafePath:
        pass
    return identity.cpu_platform(model, os.cpu_count() or 0)


def done_commits(store, platform_id):
    """Commits the store already holds for this platform (a report or a recorded failure)."""
    try:
        entries = history.read_store(store)
    except load.ReportError as e:
        if "no such store" in str(e):
            return set()
        raise
    done = set()
    for e in entries:
        if e.get("status") and e.get("platform") == platform_id:
            done.add(e["git_commit"])
        elif e.get("backfill") and e.get("machine") == platform_id:  # backfill names it so
            done.add(e["git_commit"])
    return done


def backfill(probe, commits, store, label="", log=print, resume=True, interleave=True):
    """Builds and runs each commit, adding what it gave to the store. Returns {status: count}. With
    probe.runs > 1 and interleave, the commits' runs take turns (the module's docstring says why)."""
    platform = this_platform()
    done = done_commits(store, platform.id) if resume else set()
    counts = {}
    out_dir = Path(probe.workdir) / "reports"
    out_dir.mkdir(parents=True, exist_ok=True)
    todo = []
    for n, commit in enumerate(commits, 1):
        subject, order = commit_meta(probe.repo, commit)
        head = f"[{n}/{len(commits)}] {commit[:10]} {subject[:70]}"
        if commit in done:
            log(f"{head}: already in the store, skipped")
            counts["skipped"] = counts.get("skipped", 0) + 1
            continue
        todo.append(Pending(commit, subject, order, head))
    if interleave and probe.runs > 1 and len(todo) > 1:
        log(f"{len(todo)} commits, each built in a worktree of its own, their runs taking turns")
        finished = probe_interleaved(probe, todo, out_dir, platform, label, log)
    else:
        finished = (probe_commit(probe, c, out_dir, platform, label) for c in todo)
    for c in finished:  # each stored as soon as it is finished (a resumed backfill skips it)
        counts[c.status] = counts.get(c.status, 0) + 1
        for k, (e, fresh) in enumerate(history.add(store, c.entries), 1):
            what = (e.get("status") or "ok") if fresh else "already in the store"
            extra = f", {len(e['runs'])} benchmarks" if e["runs"] else f": {e.get('error', '')[:160]}"
            run = f" (run {k} of {probe.runs})" if probe.runs > 1 else ""
            log(f"{c.head}: {what}{extra}{run} ({time.monotonic() - c.t0:.0f} s)")
    return counts


@dataclass
class Pending:
    """One commit of a backfill, and what probing it gave: status 'ok', 'validation_failed',
    'build_failed', 'run_failed', 'checkout_failed' or 'no_benchmarks' (none of the set exists at this
    commit), and its store entries (one a run, up to the first that failed)."""
    commit: str
    subject: str
    order: int
    head: str  # its log lines' start
    status: str = "ok"
    entries: list = field(default_factory=list)
    backends: list = field(default_factory=list)
    t0: float = field(default_factory=time.monotonic)

    def failed(self, status, why, platform):
        self.status = status
        self.entries.append(status_entry(self.commit, self.subject, self.order, status, why, platform))
        return self


def prepare(probe, c, platform):
    """Checks c out and builds it; c.status says whether it can run (c.backends: what it runs)."""
    c.t0 = time.monotonic()
    try:
        probe.checkout(c.commit)
    except BackfillError as e:
        return c.failed("checkout_failed", str(e), platform)
    ok, why = probe.build_commit(c.commit)
    if not ok:
        return c.failed("build_failed", why, platform)
    try:
        c.backends = probe.runnable_backends()
    except (BackfillError, subprocess.SubprocessError, OSError) as e:
        return c.failed("run_failed", f"suite --list: {e}", platform)
    if not c.backends:
        return c.failed("no_benchmarks", f"none of {','.join(probe.backends)} at this commit", platform)
    return c


def run_next(probe, c, out_dir, platform, label):
    """One more run of the built commit c, its entry added to c."""
    name = c.commit if probe.runs <= 1 else f"{c.commit}-{len(c.entries) + 1}"
    c.status, entry = run_once(probe, c.commit, c.subject, c.order, Path(out_dir) / f"{name}.json", platform, label,
                               c.backends)
    c.entries.append(entry)


def probe_commit(probe, c, out_dir, platform, label=""):
    """c built once and run probe.runs times, one run after the other."""
    if prepare(probe, c, platform).status != "ok":
        return c
    while len(c.entries) < max(1, probe.runs) and c.status == "ok":
        run_next(probe, c, out_dir, platform, label)
    return c


def probe_interleaved(probe, todo, out_dir, platform, label="", log=print):
    """The commits built each in a slot of their own, then run in rounds, forward and backward in turn; yields
    each commit when it is finished (those that did not build at once, the others after the last round)."""
    slots = []
    for k, c in enumerate(todo, 1):
        p = probe.in_slot(str(k))
        if prepare(p, c, platform).status != "ok":
            yield c
        else:
            slots.append((p, c))
            log(f"{c.head}: built in {p.build_dir.name} ({time.monotonic() - c.t0:.0f} s)")
    for r in range(probe.runs):
        if slots:
            log(f"round {r + 1} of {probe.runs}")
        for p, c in slots if r % 2 == 0 else reversed(slots):
            if c.status == "ok":
                run_next(p, c, out_dir, platform, label)
    yield from (c for _, c in slots)


def run_once(probe, commit, subject, order, out, platform, label, backends):
    """(status, store entry) of one run of the built commit's suite."""
    if out.exists():
        out.unlink()
    try:
        rc, before, after = probe.run_commit(commit, out, backends)
    except subprocess.TimeoutExpired:
        return "run_failed", status_entry(commit, subject, order, "run_failed",
                                          f"timed out after {probe.timeout_s:.0f} s", platform)
    if not out.is_file():
        return "run_failed", status_entry(commit, subject, order, "run_failed",
                                          f"exit {rc}, no report: {_last_line(probe.last_output)}", platform)
    try:
        entry = history.entry_of(out, machine=platform.id, label=label)
    except load.ReportError as e:
        return "run_failed", status_entry(commit, subject, order, "run_failed", f"exit {rc}: {e}", platform)
    entry["git_commit"] = commit  # the worktree's commit, whatever the build recorded
    entry["git_subject"], entry["git_order"] = subject, order
    entry["backfill"] = {"backends": backends, "images": probe.images, "threads": probe.threads,
                         "repeat": probe.repeat, "exit": rc,
                         "machine_load": {"load_avg_1min_start": before["load_avg_1min"],
                                          "load_avg_1min_end": after["load_avg_1min"],
                                          "other_runnable_start": before["other_runnable"],
                                          "other_runnable_end": after["other_runnable"]}}
    # A past commit's suite may not record its boot; this run's is the boot it ran in. Its points and any
    # other run of this boot compare like for like (history.judge_across_boots).
    boot = identity.this_boot_id()
    if boot:
        entry.setdefault("boot_id", boot)
    entry["id"] = history.entry_id(entry)
    failed = [r["benchmark"] for r in entry["runs"] if r.get("passed") is False]
    if failed:
        entry["status"] = "validation_failed"
        entry["error"] = "failed validation: " + ", ".join(failed)
        return "validation_failed", entry
    return "ok", entry


def log_to_stderr(msg):
    print(msg, file=sys.stderr, flush=True)
