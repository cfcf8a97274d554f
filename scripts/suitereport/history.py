"""The history store: suite reports over commits and machines, one JSON line per report.

Why JSON lines and not SQLite: the store is committed (results/history/store.jsonl) and grows by
appending, so git shows each new report as added lines, reviews and merges of two branches that each
appended are plain text, and any tool (jq, pandas) reads it. What SQLite would add is done here:
  append-only   entries are only ever appended (safe_io.append_text: all or nothing, a full disk leaves
                the store as it was); the one exception: `add` of reports already stored, by a store
                written before runs recorded their build, gives them their build (complete_builds) and
                rewrites the store whole, atomically
  idempotent    an entry's id is a hash of the report's content; a report already in the store is
                skipped (`add` the same file twice: one entry)
  concurrent    `add` holds an exclusive flock on the store while it reads the ids and appends, so
                two CI jobs appending at once are serialised and neither line is torn or doubled
  validated     every report is read by load.read_report (the tools' own checks), must carry an ISO
                date and finite positive times; every line read back must be a valid entry, or the tool
                says which line is wrong. A torn LAST line (a write cut short before these appends were
                all or nothing) is reported and ignored, and the next `add` cuts it off.

Identity (identity.py): a series is one benchmark on one platform (the hardware: a CPU model and its
core count, or the GPU a GPU run used) and one build (build_of: what the person building chose, the
compiler, -march and the runtime), never the host name or the folder a report came from; variants renamed
since a line was stored are read under their name of today. Order: commits in git's topological order of
the repository (git_order.py), not by report dates.

Noise and load: a report whose run saw a busy machine (machine_load: other runnable processes, as the
suite measures them) is drawn but is neither the base nor the verdict of a step unless asked
(include_busy); peers (PEERS: PyTorch) are drawn and never get a verdict: they are not this project's
code.
"""

import fcntl
import hashlib
import json
import math
import os
import re
import sys
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from pathlib import Path

from . import gate, identity, load, manifests, safe_io

STORE_VERSION = 1
PEERS = ("pytorch",)
MAX_STORE_BYTES = safe_io.MAX_INPUT_BYTES
DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$")
STATUSES = ("build_failed", "run_failed", "validation_failed", "no_benchmarks", "checkout_failed")


def is_number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def valid_date(text):
    if not isinstance(text, str) or not DATE_RE.match(text):
        return False
    try:
        datetime.strptime(text[:19], "%Y-%m-%dT%H:%M:%S")
    except ValueError:
        return False
    return True


def benchmark_name(backend, variant, images, threads, on_gpu):
    """backend:variant/images:N/threads:T; a GPU run has no threads in its name (Kokkos' launch width,
    270336, is no setting a reader chose)."""
    name = f"{backend}:{variant}/images:{images}"
    return name if on_gpu else f"{name}/threads:{threads}"


# The flags of a build that the person building chooses, not a commit: the target ISA (SUITE_MARCH) and
# the optimisation level (the build type). The rest comes from the project's CMake files, so a change
# there is a commit's, and a step it causes is that commit's.
CHOSEN_FLAGS = ("-march=", "-mtune=", "-O")


def build_of(meta, device):
    """How a run's code was built, as text, where the commit does not decide it: the compiler and its
    version, the chosen flags (CHOSEN_FLAGS) the build gave any folder (meta.compiler: its flags and
    backend_flags; one -march for the whole build, whichever folders a commit has), and the runtime the
    run's device text names first (two execution spaces of one portable model). None where the report
    records no flags per folder (reports older than that field)."""
    comp = meta.get("compiler") if isinstance(meta, dict) else None
    if not isinstance(comp, dict) or not comp.get("id") or not isinstance(comp.get("backend_flags"), dict):
        return None
    texts = [comp.get("flags"), *comp["backend_flags"].values()]
    words = {w for t in texts if isinstance(t, str) for w in t.split() if w.startswith(CHOSEN_FLAGS)}
    runtime = str(device or "").split(",")[0].strip()
    return f"{comp['id']} {comp.get('version', '')} {' '.join(sorted(words))} | runtime: {runtime}"


def build_tags(builds):
    """{build: a short name for people} for the builds of one benchmark (None: not recorded): the words
    of each that the others lack, its target (-march) first. Empty for one build."""
    builds = list(dict.fromkeys(builds))
    if len(builds) < 2:
        return {}
    words = {b: b.replace("|", " ").split() if b else [] for b in builds}
    tags = {}
    for b in builds:
        if b is None:
            tags[b] = "build not recorded"
            continue
        others = set().union(*(words[o] for o in builds if o not in (b, None)))
        own = [w for w in words[b] if w not in others and w != "runtime:"]
        own.sort(key=lambda w: not w.startswith("-march"))
        tags[b] = " ".join(own)[:48] or "build " + hashlib.sha256(b.encode()).hexdigest()[:6]
    return tags


def report_id(raw_text):
    """The same report content, the same id, wherever the file lies."""
    data = json.loads(raw_text)
    canonical = json.dumps(data, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:24]


def entry_id(entry):
    """The id of an entry built here (backfill): a hash of everything in it but the id."""
    body = {k: v for k, v in entry.items() if k != "id"}
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:24]


def machine_of(path, report):
    """The report's folder under results/ (cpu/epyc-2core, h200) where it has one, else its host: where
    it was kept, shown only; the series key is the hardware."""
    parts = Path(path).resolve().parent.parts
    if "results" in parts:
        rel = parts[len(parts) - parts[::-1].index("results"):]
        if rel:
            return "/".join(rel)
    return report.runs[0].machine.host


def _load_of(raw_run):
    ml = raw_run.get("machine_load") if isinstance(raw_run, dict) else None
    if not isinstance(ml, dict):
        return None
    out = {k: ml[k] for k in ("load_avg_1min_start", "load_avg_1min_end", "other_runnable_start",
                              "other_runnable_end") if is_number(ml.get(k))}
    return out or None


def read_report_safely(path):
    """load.read_report, after safe_io's checks (a device, FIFO or oversized file is refused in one line
    before anything is read) and with the raw text read once, bounded: (report, raw text)."""
    try:
        raw = safe_io.read_text(path, "report")
    except safe_io.UnsafePath as e:
        raise load.ReportError(str(e)) from None
    return load.read_report(path), raw


# What the suite writes as git_commit: a commit id, or "unknown" outside a checkout. Anything else is refused:
# the id is given to git and shown in a shell command the dashboard offers.
COMMIT_RE = re.compile(r"^(?:[0-9a-f]{7,40}|unknown)$")


def _check_commit(commit, where):
    if not COMMIT_RE.match(commit):
        raise load.ReportError(f"{where}: git_commit {commit[:50]!r} is no commit id (7 to 40 hex digits, or 'unknown')")


def entry_of(path, machine=None, label=""):
    """The store entry of one report file; ReportError (one line) if it is no valid suite report or
    holds anything the history cannot draw (a date that is no ISO time, a time that is not a finite
    positive number)."""
    rep, raw = read_report_safely(path)
    try:
        raw_runs = json.loads(raw).get("runs", [])
    except (ValueError, AttributeError):
        raw_runs = []
    m = rep.meta
    where = rep.path
    if not isinstance(m.get("date_utc"), str) or not m["date_utc"]:
        raise load.ReportError(f"{where}: no meta.date_utc: the history needs the date of each report")
    if not valid_date(m["date_utc"]):
        raise load.ReportError(f"{where}: meta.date_utc {m['date_utc'][:40]!r} is no UTC time "
                               "(YYYY-MM-DDTHH:MM:SSZ)")
    first = rep.runs[0].machine
    raw_by_key = {}
    for rr in raw_runs if isinstance(raw_runs, list) else []:
        if isinstance(rr, dict):
            raw_by_key.setdefault((rr.get("backend"), rr.get("variant"), rr.get("images"), rr.get("threads")), rr)
    runs = []
    for i, r in enumerate(rep.runs):
        what = f"{where}: {r.backend}:{r.variant} at {r.images} images"
        if not is_number(r.forward_ms) or r.forward_ms <= 0:
            raise load.ReportError(f"{what}: forward_ms.median {r.forward_ms!r} is not a finite positive time")
        if any(not is_number(x) for x in r.samples):
            raise load.ReportError(f"{what}: a forward pass time is not a finite number")
        if not is_number(r.gflop_per_s):
            raise load.ReportError(f"{what}: gflop_per_s {r.gflop_per_s!r} is not a finite number")
        rr = raw_by_key.get((r.backend, r.reported_variant, r.images, r.threads), {})
        run = {"benchmark": benchmark_name(r.backend, r.variant, r.images, r.threads, r.on_gpu),
               "backend": r.backend, "variant": r.variant, "images": r.images, "threads": r.threads,
               "device": r.device, "on_gpu": r.on_gpu, "median_ms": r.forward_ms, "samples": r.samples,
               "gflop_per_s": r.gflop_per_s, "passed": r.passed if r.validation else None,
               "platform": identity.platform_of(r.on_gpu, r.device, r.device_info, first.cpu_model,
                                                first.logical_cores, first.gpu_name, label or first.label_text).id}
        build = build_of(m, r.device)
        if build:
            run["build"] = build
        load_info = _load_of(rr)
        if load_info:
            run["machine_load"] = load_info
        runs.append(run)
    boot = m.get("boot_id")
    commit = str(m.get("git_commit") or "unknown")
    _check_commit(commit, path)
    entry = {"store_version": STORE_VERSION, "id": report_id(raw), "machine": machine or machine_of(path, rep),
             "host": first.host, "cpu_model": first.cpu_model, "logical_cores": first.logical_cores,
             "gpu_name": first.gpu_name, "label": label or first.label_text,
             "git_commit": commit, "git_dirty": bool(m.get("git_dirty")),
             "date_utc": m["date_utc"], "source": rep.path, "runs": runs}
    if isinstance(boot, str) and identity.BOOT_ID_RE.match(boot):  # reports before the suite recorded it have none
        entry["boot_id"] = boot
    return entry


def _check_entry(e, where):
    if not isinstance(e, dict) or e.get("store_version") != STORE_VERSION:
        raise load.ReportError(f"{where}: not a history entry of store_version {STORE_VERSION}")
    for key in ("id", "machine", "git_commit", "date_utc"):
        if not isinstance(e.get(key), str) or not e[key]:
            raise load.ReportError(f"{where}: missing '{key}'")
    _check_commit(e["git_commit"], where)
    if not valid_date(e["date_utc"]):
        raise load.ReportError(f"{where}: date_utc is no UTC time (YYYY-MM-DDTHH:MM:SSZ)")
    for key in ("cpu_model", "gpu_name", "label", "host", "source", "git_subject", "status", "error", "boot_id"):
        if key in e and not isinstance(e[key], str):
            raise load.ReportError(f"{where}: '{key}' is not a string")
    if "logical_cores" in e and not (is_number(e["logical_cores"]) and e["logical_cores"] >= 0):
        raise load.ReportError(f"{where}: 'logical_cores' is not a count")
    if not isinstance(e.get("runs"), list) or (not e["runs"] and not e.get("status")):
        raise load.ReportError(f"{where}: no runs")
    for r in e["runs"]:
        if not isinstance(r, dict) or not isinstance(r.get("benchmark"), str) or not isinstance(r.get("samples"), list):
            raise load.ReportError(f"{where}: a run without benchmark, median_ms or samples")
        for key in ("backend", "variant"):
            if not isinstance(r.get(key), str) or not r[key]:
                raise load.ReportError(f"{where}: a run without '{key}'")
        if not is_number(r.get("median_ms")) or r["median_ms"] <= 0:
            raise load.ReportError(f"{where}: {r['benchmark'][:80]}: median_ms is not a finite positive number")
        if any(not is_number(x) or x <= 0 for x in r["samples"]):
            raise load.ReportError(f"{where}: {r['benchmark'][:80]}: a sample is not a finite positive number")
        if "build" in r and not isinstance(r["build"], str):
            raise load.ReportError(f"{where}: {r['benchmark'][:80]}: 'build' is not a string")
        for key in ("images", "threads"):
            if not is_number(r.get(key)) or r[key] < 0:
                raise load.ReportError(f"{where}: {r['benchmark'][:80]}: '{key}' is not a count")


def _parse_lines(text, path, note=True):
    """The entries of the store's text. A bad line is an error naming it, except a torn last line (no
    newline at its end, not JSON): the trace of an interrupted write, noted and left out."""
    entries = []
    lines = text.split("\n")
    torn_tail = lines[-1] != ""  # the text does not end with a newline
    for i, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"{load.shown(path)}:{i}"
        try:
            e = json.loads(line, parse_constant=_no_constant)
        except (json.JSONDecodeError, ValueError) as err:
            if torn_tail and i == len(lines):
                if note:
                    print(f"note: {where}: the last line is cut off (an interrupted write), left out",
                          file=sys.stderr)
                break
            raise load.ReportError(f"{where}: not JSON ({getattr(err, 'msg', err)})") from None
        _check_entry(e, where)
        entries.append(e)
    return entries


def _no_constant(name):
    raise ValueError(f"{name} is no number JSON knows")


def read_store(path):
    path = Path(path)
    try:
        text = safe_io.read_text(path, "store", limit=MAX_STORE_BYTES)
    except safe_io.UnsafePath as e:
        if not os.path.lexists(path):
            raise load.ReportError(f"{load.shown(path)}: no such store (create it with `history add`)") from None
        raise load.ReportError(str(e)) from None
    return _parse_lines(text, path)


def complete_builds(stored, entries):
    """Gives the stored entries the builds (build_of) that the same reports, read again (`entries`), now
    tell: stores written before the field get it from `add` of the reports they came from (their git
    versions, for committed ones). Returns how many entries were completed."""
    fresh = {e["id"]: e for e in entries}
    completed = 0
    for e in stored:
        new = fresh.get(e["id"])
        if new is None or e.get("status"):
            continue
        builds = {(r.get("benchmark"), r.get("median_ms")): r.get("build") for r in new.get("runs", [])}
        changed = False
        for r in e.get("runs", []):
            b = builds.get((r.get("benchmark"), r.get("median_ms")))
            if b and "build" not in r:
                r["build"] = b
                changed = True
        completed += changed
    return completed


def _line(e):
    return json.dumps(e, sort_keys=True, separators=(",", ":"), allow_nan=False) + "\n"


def add(store, entries):
    """Appends the entries whose id is not in the store yet, under an exclusive lock; returns the
    list of (entry, added?). All or nothing: on a write error the store is as it was. Entries already
    stored without their runs' builds get them (complete_builds): then the store is rewritten whole,
    atomically, and a writer waiting for the lock opens the new file."""
    for _ in range(5):
        done = _add_once(store, entries)
        if done is not None:
            return done
    raise load.ReportError(f"{load.shown(store)}: replaced while opened, again and again; try later")


def _add_once(store, entries):
    store = Path(store)
    if os.path.lexists(store):
        try:
            safe_io.check_input(store, "store", MAX_STORE_BYTES)
        except safe_io.UnsafePath as e:
            raise load.ReportError(str(e)) from None
    elif not store.parent.is_dir():
        try:
            store.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise load.ReportError(f"{load.shown(store)}: cannot create its folder: {e.strerror}") from None
    flags = os.O_RDWR | os.O_CREAT | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(store, flags, 0o644)
    except OSError as e:
        raise load.ReportError(f"{load.shown(store)}: cannot open the store: {e.strerror}") from None
    out = []
    with os.fdopen(fd, "rb+") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            if not os.path.samestat(os.fstat(f.fileno()), os.stat(store)):
                return None  # rewritten by the writer this one waited for: open the new file
            try:
                text = safe_io.read_text(store, "store", limit=MAX_STORE_BYTES)
            except safe_io.UnsafePath as e:
                raise load.ReportError(str(e)) from None
            stored = _parse_lines(text, store, note=False)
            if text.strip() and not stored:
                # One line that is no entry reads as a torn last line: cutting it would empty somebody's file.
                raise load.ReportError(f"{load.shown(store)}: not a history store (no line of it is an entry): "
                                       "refused and kept; name a new file or an existing store")
            known = {e["id"] for e in stored}
            lines = []
            for e in entries:
                fresh = e["id"] not in known
                if fresh:
                    lines.append(_line(e))
                    known.add(e["id"])
                out.append((e, fresh))
            if complete_builds(stored, entries):
                # Whole and atomic (a torn last line, which _parse_lines left out, goes with it).
                try:
                    safe_io.write_text(store, "".join(map(_line, stored)) + "".join(lines), replaces_input=True)
                except safe_io.UnsafePath as err:
                    raise load.ReportError(str(err)) from None
                return out
            prefix = ""
            if text and not text.endswith("\n"):
                tail = text[text.rfind("\n") + 1:]
                try:
                    json.loads(tail)
                    prefix = "\n"  # a whole last line without its newline (edited by hand): keep it
                except ValueError:
                    # A torn last line: the trace of a write cut short; cut it off, or the next line
                    # would be glued to it and the store damaged for good.
                    os.ftruncate(f.fileno(), len(text.encode("utf-8")) - len(tail.encode("utf-8")))
                    print(f"note: {load.shown(store)}: cut off a torn last line ({len(tail)} characters)",
                          file=sys.stderr)
            if lines:
                try:
                    safe_io.append_text(store, prefix + "".join(lines))
                except safe_io.UnsafePath as err:
                    raise load.ReportError(str(err)) from None
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)
    return out


# ---- what the lines mean: platforms, variants, load


def _cores_by_model(entries):
    """{cpu model: its core count} where every line that states one agrees (lines written before the
    store kept core counts take it from the others)."""
    seen = {}
    for e in entries:
        if is_number(e.get("logical_cores")) and e["logical_cores"] > 0:
            seen.setdefault(e.get("cpu_model", ""), set()).add(int(e["logical_cores"]))
    return {m: next(iter(c)) for m, c in seen.items() if len(c) == 1}


def run_platform(e, r, cores_by_model):
    """The platform of a stored run: its GPU for a GPU run, else the CPU and its cores (identity.py)."""
    label = e.get("label", "") or ""
    if r.get("on_gpu"):
        return identity.gpu_platform(e.get("gpu_name", "") or identity.gpu_name_of({}, "", r.get("device", "")),
                                     label)
    cores = e.get("logical_cores") or cores_by_model.get(e.get("cpu_model", ""), 0)
    return identity.cpu_platform(e.get("cpu_model", ""), cores, label)


def entry_platform_ids(e):
    cores = {e.get("cpu_model", ""): e.get("logical_cores", 0)}
    return {run_platform(e, r, cores).id for r in e.get("runs", [])}


def is_busy(e, r, cores):
    """The run saw other runnable processes at its start or end, as many as half the cores (the suite's
    own warning), by its own machine_load, else by what `history backfill` measured around the suite."""
    ml = r.get("machine_load")
    if not isinstance(ml, dict):
        ml = (e.get("backfill") or {}).get("machine_load") if isinstance(e.get("backfill"), dict) else None
    if not isinstance(ml, dict):
        return False
    limit = max(1, int(cores or 0) // 2)
    return any(is_number(ml.get(k)) and ml[k] >= limit for k in ("other_runnable_start", "other_runnable_end"))


# ---- series over commits


@dataclass
class Point:
    commit: str
    date: str
    median_ms: float
    samples: list
    passed: object
    step: str = ""  # "slower" / "faster" where the benchmark moved beyond its noise here; "machine" where it
    # moved so with no change to the code it runs (Step.no_code_change)
    change: float = 0.0  # median ratio to the base point - 1
    medians: list = field(default_factory=list)  # of each report (for runs without passes)
    busy: bool = False  # every report of this point saw a busy machine
    subject: str = ""
    base: str = ""  # the commit this point was compared with
    p_value: float = None  # of the step test (one-sided Mann-Whitney U), where there was one
    reports: int = 0
    dirty: bool = False  # every report of this point was made on uncommitted changes (git_dirty)
    boots: frozenset = frozenset()  # the machine boots its reports ran in (meta.boot_id; None: not recorded)
    by_boot: dict = field(default_factory=dict)  # {boot id: the passes of this point's reports of that boot}
    runs_by_boot: dict = field(default_factory=dict)  # {boot id: the median of each of those reports}


@dataclass
class Series:
    machine: str  # the platform's label, for people
    benchmark: str
    backend: str
    on_gpu: bool
    platform: str = ""  # the platform id
    variant: str = ""
    images: int = 0
    threads: int = 1
    points: list = field(default_factory=list)
    build: str = None  # build_of, None where its reports record none
    build_tag: str = ""  # what tells its build from the other builds of its benchmark and platform (build_tags)

    @property
    def peer(self):
        return self.backend in PEERS

    @property
    def line_name(self):
        """The series' name inside its chart (backend x images): variant, threads on a CPU, and its build
        where the benchmark has several."""
        name = f"{self.backend}:{self.variant}"
        name = name if self.on_gpu else f"{name}, {self.threads} thr"
        return f"{name} [{self.build_tag}]" if self.build_tag else name

    @property
    def title(self):
        """The benchmark, and its build where it has several on the platform: the series' name for people."""
        return f"{self.benchmark} [{self.build_tag}]" if self.build_tag else self.benchmark

    @property
    def key(self):
        return (self.platform, self.benchmark, self.build)


@dataclass
class Step:
    series: Series
    point: Point
    direction: str  # "slower" or "faster"
    range: list  # [(commit, subject)] after the base up to the point's commit, in git order
    ratio: float
    p_value: float = None
    basis: str = ""
    suspects: list = field(default_factory=list)  # [(commit, why)]: the range's commits that change code it runs
    # git knew the range and none of its commits changes code the benchmark runs: the machine, its driver or
    # toolchain moved it, not a commit (shown apart, never a regression)
    no_code_change: bool = False
    # How far the step can be trusted (judge_across_boots): EVIDENCE's keys.
    evidence: str = ""
    controls: list = field(default_factory=list)  # [(benchmark, ratio)]: what the machine alone did meanwhile
    drift: float = None  # the controls' median ratio
    boot_ratio: float = None  # the ratio within the boot both commits ran in, where there is one
    boot_basis: str = ""  # what that boot's test compared: "N v M runs" (per-run medians) or "passes"
    boot_build: str = ""  # where that boot's runs were another build of the benchmark (one_boot_pair): its tag
    boot_family: int = 1  # how many benchmarks that boot's test took together (gate.decide_family)
    undone: str = ""  # a slower step's: the commit from which its benchmark is back (undone_at)

    @property
    def confidence(self):
        return None if self.p_value is None else 1.0 - self.p_value


def commit_order(entries, repo=None):
    """Commits in git's topological order (git_order.order), where the repository knows them."""
    from . import git_order
    return git_order.order(entries, repo)[0]


def series(entries, threshold=0.10, alpha=gate.DEFAULT_ALPHA, order=None, include_busy=False, subjects=None):
    """One series per platform, benchmark and build (build_of), one point per commit (of several reports of
    one commit, the passes are pooled; reports under load are pooled only where no quiet one exists), with the step
    changes marked: a point whose passes differ from the base point's (the last earlier point that was
    not busy) beyond the threshold and the noise (gate.decide). Busy points are never the base nor get a
    verdict unless include_busy; peers never get one."""
    if order is None:
        order = commit_order(entries)
    subjects = subjects or {}
    index = {c: i for i, c in enumerate(order)}
    cores_by_model = _cores_by_model(entries)
    pooled, rows_of = {}, {}
    ok_entries = [e for e in entries if e.get("runs")]
    for e in sorted(ok_entries, key=lambda e: (e["date_utc"], e["id"])):
        commit = e["git_commit"]
        for r in e["runs"]:
            plat = run_platform(e, r, cores_by_model)
            variant = identity.current_variant(r["backend"], r["variant"])
            on_gpu = bool(r.get("on_gpu"))
            bench = benchmark_name(r["backend"], variant, int(r["images"]), int(r["threads"]), on_gpu)
            busy = is_busy(e, r, plat.cores or e.get("logical_cores") or cores_by_model.get(e.get("cpu_model", ""), 0))
            rows_of.setdefault((plat.id, bench), (plat, r["backend"], on_gpu, variant, []))[-1].append(
                (commit, busy, e, r))
    # One series per build. Runs whose report records no build join the benchmark's one known build, or,
    # where it has several, a series of their own.
    for (_, bench), (plat, backend, on_gpu, variant, rows) in rows_of.items():
        known = list(dict.fromkeys(r.get("build") for _, _, _, r in rows if r.get("build")))
        for commit, busy, e, r in rows:
            build = r.get("build") or (known[0] if len(known) == 1 else None)
            s = pooled.setdefault((plat.id, bench, build or ""), Series(
                plat.label, bench, backend, on_gpu, plat.id, variant, int(r["images"]), int(r["threads"]),
                build=build))
            s._raw = getattr(s, "_raw", {})
            s._raw.setdefault(commit, []).append((busy, e, r))
    out = []
    for key in sorted(pooled):
        s = pooled[key]
        for commit, rows in s._raw.items():
            quiet = [row for row in rows if not row[0]]
            use = quiet or rows
            samples = [x for _, _, r in use for x in r["samples"]]
            medians = [r["median_ms"] for _, _, r in use]
            first = min(use, key=lambda row: (row[1]["date_utc"], row[1]["id"]))
            passed = [r.get("passed") for _, _, r in use]
            p = Point(commit, first[1]["date_utc"], _median(samples) if samples else _median(medians), samples,
                      False if False in passed else (True if True in passed else None), medians=medians,
                      busy=not quiet, subject=subjects.get(commit) or first[1].get("git_subject", ""),
                      reports=len(use), dirty=all(row[1].get("git_dirty") is True for row in use),
                      boots=frozenset(row[1].get("boot_id") for row in use))
            for _, e, r in use:
                if e.get("boot_id"):
                    p.by_boot.setdefault(e["boot_id"], []).extend(r["samples"] or [r["median_ms"]])
                    p.runs_by_boot.setdefault(e["boot_id"], []).append(r["median_ms"])
            s.points.append(p)
        del s._raw
        s.points.sort(key=lambda p: index.get(p.commit, len(index)))
        out.append(s)
    by_benchmark = {}
    for s in out:
        by_benchmark.setdefault((s.platform, s.benchmark), []).append(s)
    for group in by_benchmark.values():
        tags = build_tags([s.build for s in group])
        for s in group:
            s.build_tag = tags.get(s.build, "")
    for s in out:
        mark_steps(s, threshold, alpha, include_busy)
    return out


def mark_steps(s, threshold, alpha, include_busy=False):
    base = None
    for p in s.points:
        usable = include_busy or not p.busy
        if not usable:
            continue
        if base is not None:
            d = gate.decide(base.samples, p.samples, base.median_ms, p.median_ms, threshold, alpha)
            p.change = d.ratio - 1.0
            p.base = base.commit
            if not s.peer:  # a peer is not this project's code: drawn, never a verdict
                if d.fails:
                    p.step, p.p_value = "slower", d.p_slower
                elif d.status.startswith("faster"):
                    p.step, p.p_value = "faster", d.p_faster
        base = p


# How many commits after a point measured on uncommitted changes are suspects of its step, at most.
DIRTY_AFTER = 10


def steps(series_list, order, subjects, between=None, touching=None):
    """Every step marked by series(), with the commits that could have caused it: those the step's commit
    has and the base's has not (between(base, commit): git rev-list base..commit, so a branch merged
    elsewhere in the topological order is not blamed), else those after the base up to the step in the
    order. Suspects first: touching(base, commit, backend, variant) names the range's commits that change
    code the variant runs (git_order.code_of_variant), where a step of it most likely comes from. Where git
    gave the range and none of its commits changes that code, the step is no_code_change."""
    index = {c: i for i, c in enumerate(order)}
    out = []
    cache = {}
    for s in series_list:
        for p in s.points:
            if not p.step:
                continue
            key = (p.base, p.commit)
            if between and key not in cache:
                cache[key] = between(p.base, p.commit)
            lo, hi = index.get(p.base, -1), index.get(p.commit, -1)
            if cache.get(key):
                rng = [(c, subjects.get(c, "")) for c in cache[key]]
            elif 0 <= lo < hi:
                rng = [(c, subjects.get(c, "")) for c in order[lo + 1:hi + 1]]
            else:
                rng = [(p.commit, p.subject)]
            # Measured on uncommitted changes: what they became is committed after p.commit, so the commits
            # up to the series' next point are suspects too.
            upto = p.commit
            if p.dirty and between:
                later = [q.commit for q in s.points if index.get(q.commit, -1) > hi]
                after = between(p.commit, later[0] if later else "HEAD")[:DIRTY_AFTER]
                if later and after and after[-1] == later[0]:
                    after = after[:-1]  # the next point measured its own commit
                rng += [(c, subjects.get(c, "")) for c in after]
                upto = after[-1] if after else p.commit
            known = bool(touching and cache.get(key))
            changed = touching(p.base, upto, s.backend, s.variant) if known else {}
            found = suspects(rng, changed)
            out.append(Step(s, p, p.step, rng, 1.0 + p.change, p.p_value, suspects=found,
                            no_code_change=known and not found))
    out.sort(key=lambda st: (st.direction != "slower", -abs(st.ratio - 1.0), st.series.title))
    return out


def suspects(rng, changed):
    """[(commit, why)] of the range's commits that change code the backend runs ({commit: why}, why one of
    git_order.code_of's), nearest code first, newest first within each."""
    rank = {"its folder": 0, "shared kernels": 1}
    newest_first = [c for c, _ in reversed(rng) if c in changed]
    return [(c, changed[c]) for c in sorted(newest_first, key=lambda c: rank.get(changed[c], 2))]


def sustained(st, threshold, alpha):
    """A step that the next point keeps (against the same base, beyond the threshold and the noise, the
    same way): under load a single slow run is the machine far more often than the code. The last point
    of a series has no next one and stands as it is."""
    pts = st.series.points
    i = pts.index(st.point)
    if i + 1 >= len(pts):
        return True
    base = next(p for p in pts if p.commit == st.point.base)
    nxt = pts[i + 1]
    d = gate.decide(base.samples, nxt.samples, base.median_ms, nxt.median_ms, threshold, alpha)
    return d.fails if st.direction == "slower" else d.status.startswith("faster")


# What a step's evidence says, for people (the dashboard shows it beside each step).
EVIDENCE = {
    "no code change": "no commit between its two points changes the code it runs: the machine",
    "one boot": "both commits ran in one boot of the machine: like for like",
    "gone in one boot": "across boots it moved, but both commits run in one boot did not: the machine",
    "beyond controls": "across boots; benchmarks whose code did not change moved less meanwhile",
    "moved with controls": "across boots; benchmarks whose code did not change moved as much: the machine",
    "unconfirmed": "across boots, with too few unchanged benchmarks to tell the machine from the code: "
                   "rerun both commits in one boot",
}
MIN_CONTROLS = 3  # unchanged benchmarks needed before their median says what the machine did


def shared_boot(a, b):
    """A recorded boot in which both points' commits ran (the one with the most passes), or None."""
    shared = [x for x in a.by_boot if x in b.by_boot]
    return max(shared, key=lambda x: (len(a.by_boot[x]) + len(b.by_boot[x]), x), default=None)


def controls_of(st, series_list, changed_code):
    """[(benchmark, ratio)] of the benchmarks on the step's platform measured at both of its commits, in
    the same boots as its two points, not busy, whose code no commit between them changes (a peer's never
    does): what the machine did between the two points, without the code."""
    s, p = st.series, st.point
    base = next(q for q in s.points if q.commit == p.base)
    out = []
    for o in series_list:
        if o is s or o.platform != s.platform:
            continue
        pts = {q.commit: q for q in o.points}
        b, n = pts.get(p.base), pts.get(p.commit)
        if not b or not n or b.busy or n.busy or b.boots != base.boots or n.boots != p.boots:
            continue
        if not o.peer and changed_code(p.base, p.commit, o.backend, o.variant):
            continue
        out.append((o.title, n.median_ms / b.median_ms))
    return out


def one_boot_pair(st, series_list):
    """(base point, new point, boot, build) where the step's two commits ran in one boot: in its own series,
    else in another build of its benchmark on its platform, both commits built that same way (a backfill with
    its own build options confirms a step of the verdict's build: the code is what differs between the two).
    build: "" for the step's own, else the other's tag. (None, None, None, "") where they never did."""
    own = [st.series] + [o for o in series_list if o is not st.series and o.platform == st.series.platform
                         and o.benchmark == st.series.benchmark]
    for o in own:
        pts = {q.commit: q for q in o.points}
        b, n = pts.get(st.point.base), pts.get(st.point.commit)
        boot = shared_boot(b, n) if b and n else None
        if boot:
            return b, n, boot, "" if o is st.series else (o.build_tag or "another build")
    return None, None, None, ""


def boot_decision(base, new, boot, threshold, alpha):
    """(gate.decide of two points' reports of one boot, its basis). The suite's noise is mostly between
    processes: from gate.MIN_RUNS reports a side (a backfill's --runs), their medians are the samples, as
    the gate takes them; else the passes."""
    b, n = base.runs_by_boot[boot], new.runs_by_boot[boot]
    basis = f"{len(b)} v {len(n)} runs"
    if min(len(b), len(n)) < gate.MIN_RUNS:
        b, n, basis = base.by_boot[boot], new.by_boot[boot], "passes"
    return gate.decide(b, n, _median(b), _median(n), threshold, alpha), basis


def read_boot(st, series_list, threshold, alpha):
    """(gate.decide of the step's commits in the boot they both ran in, that boot), with the step's
    boot_build, boot_basis and boot_ratio set from it; (None, None) where they never ran in one boot."""
    base, new, boot, st.boot_build = one_boot_pair(st, series_list)
    if not boot:
        return None, None
    d, st.boot_basis = boot_decision(base, new, boot, threshold, alpha)
    st.boot_ratio = d.ratio
    return d, boot


def boot_family(st, series_list, boot):
    """[(base point, new point)] of the other benchmarks of the step's platform (of any build; peers and the
    step's own benchmark left out) that ran at both of its commits in that boot: what was compared with it
    there."""
    s, p = st.series, st.point
    out = []
    for o in series_list:
        if o.platform != s.platform or o.peer or o.benchmark == s.benchmark:
            continue
        pts = {q.commit: q for q in o.points}
        b, n = pts.get(p.base), pts.get(p.commit)
        if b and n and boot in b.runs_by_boot and boot in n.runs_by_boot:
            out.append((b, n))
    return out


def judge_across_boots(found, series_list, changed_code, threshold, alpha=gate.DEFAULT_ALPHA):
    """(kept, machine). Where both commits ran in one boot (a backfill of the two confirms a step, also one
    built its own way: one_boot_pair), that boot's runs alone decide (their medians from gate.MIN_RUNS a
    side, else their passes): the step stays (boot_ratio: their ratio), or, if they show none, it is the
    machine's. Otherwise (a fresh VM, another GPU machine: the same code may run 1.5x apart) the benchmarks
    whose code did not change are its controls; where they moved as much as the step (its ratio over their
    median within the threshold) the step is the machine's, else it stays, marked with what its controls
    did, or as unconfirmed where they are too few."""
    kept, machine = [], []
    for st in found:
        d, boot = read_boot(st, series_list, threshold, alpha)
        if boot:
            # Every benchmark of the platform that both commits ran in that boot was tested with it: the
            # step holds only as one of that family (gate.decide_family).
            others = [boot_decision(b, n, boot, threshold, alpha)[0] for b, n in boot_family(st, series_list, boot)]
            st.boot_family = gate.decide_family([d] + others, alpha)
            held = d.fails if st.direction == "slower" else d.status.startswith("faster")
            st.evidence = "one boot" if held else "gone in one boot"
            (kept if held else machine).append(st)
            continue
        st.controls = controls_of(st, series_list, changed_code)
        if len(st.controls) < MIN_CONTROLS:
            st.evidence = "unconfirmed"
            kept.append(st)
            continue
        st.drift = _median([r for _, r in st.controls])
        alone = st.ratio / st.drift
        if 1 / (1 + threshold) <= alone <= 1 + threshold:
            st.evidence = "moved with controls"
            machine.append(st)
        else:
            st.evidence = "beyond controls"
            kept.append(st)
    return kept, machine


def undone_at(st, threshold):
    """The commit from which every later quiet point of a slower step's series is back within the threshold
    of the step's base (a later commit undid it: the benchmark is no slower today), or None."""
    pts = st.series.points
    base = next(q for q in pts if q.commit == st.point.base)
    later = [q for q in pts[pts.index(st.point) + 1:] if not q.busy]
    at = None
    for q in reversed(later):
        if q.median_ms > base.median_ms * (1 + threshold):
            break
        at = q.commit
    return at


def failures(entries, order):
    """(commit, subject, status, error) of the commits recorded as not built / not run, in git order."""
    index = {c: i for i, c in enumerate(order)}
    rows = {(e["git_commit"], e.get("status")): e for e in entries if e.get("status") and e.get("status") != "ok"}
    return [(c, e.get("git_subject", ""), st, e.get("error", ""))
            for (c, st), e in sorted(rows.items(), key=lambda kv: index.get(kv[0][0], -1))]


def _median(xs):
    xs = sorted(xs)
    n = len(xs)
    if not n:
        return float("nan")
    return xs[n // 2] if n % 2 else 0.5 * (xs[n // 2 - 1] + xs[n // 2])


@dataclass
class Analysis:
    """What the dashboard and the charts show: the store read, ordered and tested."""
    store_name: str
    entries: list
    order: list  # commits, oldest first (git's topological order)
    subjects: dict
    series: list
    steps: list
    failures: list
    threshold: float
    alpha: float
    include_busy: bool
    busy_steps: list = field(default_factory=list)  # steps seen only with the busy points: candidates
    # steps the machine explains (Step): no commit of their range changes their code, their controls moved as
    # much, or both commits run in one boot show none (judge_across_boots)
    no_code_change: list = field(default_factory=list)
    # slower steps that a later commit undid (undone_at): what was slower once, not what is slower today
    undone: list = field(default_factory=list)


def analyse(entries, store_name="store.jsonl", threshold=0.10, alpha=gate.DEFAULT_ALPHA, include_busy=False,
            repo=None):
    from . import git_order
    order, subjects = git_order.order(entries, repo)
    series_list = series(entries, threshold, alpha, order, include_busy, subjects)
    repo_dir = repo or identity.REPO_ROOT

    def between(older, newer):
        return git_order.commits_between(repo_dir, older, newer)

    backends = set(manifests.manifests())  # the folders under backends/ that are backends
    # Every variant the store measured: the code only the others are built from is no suspect of a step.
    variants = frozenset((s.backend, s.variant) for s in series_list if not s.peer)

    @lru_cache(maxsize=None)  # the busy-point pass below asks again for the steps the quiet one found
    def touching(older, newer, backend, variant):
        found = {}
        for why, paths in git_order.code_of_variant(repo_dir, older, newer, (backend, variant), variants,
                                                    backends | {backend}):
            for c in git_order.commits_touching(repo_dir, older, newer, paths):
                found.setdefault(c, why)
        return found

    found = steps(series_list, order, subjects, between, touching)
    # A step no commit explains is the machine's (a fresh GPU machine per session, a driver, a toolchain):
    # marked so on its point and listed apart.
    unexplained = [st for st in found if st.no_code_change]
    for st in unexplained:
        st.point.step = "machine"
        st.evidence = "no code change"
        # Where both commits ran in one boot, what that boot's runs say too (shown, not judged): the step's
        # ratio pools every pass, which the processes' own spread moves (a CI run: -19.7 % pooled, -6.7 % and
        # p 0.19 from 8 v 8 runs' medians).
        read_boot(st, series_list, threshold, alpha)
    found = [st for st in found if not st.no_code_change]
    found, with_machine = judge_across_boots(found, series_list, touching, threshold, alpha)
    for st in with_machine:
        st.point.step = "machine"
    unexplained += with_machine
    for st in found:
        if st.direction == "slower":
            st.undone = undone_at(st, threshold) or ""
    undone = [st for st in found if st.undone]
    found = [st for st in found if not st.undone]
    candidates = []
    if not include_busy:
        # What the busy points would say: shown apart as candidates (to confirm by a quiet rerun or a
        # bisect), never as verdicts; a step the quiet points found already is not repeated.
        known = {(st.series.key, st.point.commit) for st in found}
        loud = steps(series(entries, threshold, alpha, order, True, subjects), order, subjects, between, touching)
        known |= {(st.series.key, st.point.commit) for st in unexplained + undone}
        candidates = [st for st in loud if (st.series.key, st.point.commit) not in known
                      and not st.no_code_change and sustained(st, threshold, alpha)]
    return Analysis(store_name, entries, order, subjects, series_list, found, failures(entries, order), threshold,
                    alpha, include_busy, candidates, unexplained, undone)
