"""The history store: suite reports over commits and machines, one JSON line per report.

Why JSON lines and not SQLite: the store is committed (results/history/store.jsonl) and grows by
appending, so git shows each new report as added lines, reviews and merges of two branches that each
appended are plain text, and any tool (jq, pandas) reads it. What SQLite would add is done here:
  append-only   entries are only ever appended, never rewritten
  idempotent    an entry's id is a hash of the report's content; a report already in the store is
                skipped (`add` the same file twice: one entry)
  concurrent    `add` holds an exclusive flock on the store while it reads the ids and appends, so
                two CI jobs appending at once are serialised and neither line is torn or doubled
  validated     every report is read by load.read_report (the tools' own checks) and must carry a
                date; every line read back must parse, or the tool says which line is wrong
"""

import fcntl
import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from . import gate, load

STORE_VERSION = 1


def benchmark_name(run):
    return f"{run.backend}:{run.variant}/images:{run.images}/threads:{run.threads}"


def report_id(raw_text):
    """The same report content, the same id, wherever the file lies."""
    data = json.loads(raw_text)
    canonical = json.dumps(data, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:24]


def machine_of(path, report):
    """The report's folder under results/ (cpu/epyc-2core, h200) where it has one, else its host."""
    parts = Path(path).resolve().parent.parts
    if "results" in parts:
        rel = parts[len(parts) - parts[::-1].index("results"):]
        if rel:
            return "/".join(rel)
    return report.runs[0].machine.host


def entry_of(path, machine=None):
    """The store entry of one report file; ReportError if it is no valid suite report."""
    rep = load.read_report(path)
    raw = Path(path).read_text(encoding="utf-8")
    m = rep.meta
    if not isinstance(m.get("date_utc"), str) or not m["date_utc"]:
        raise load.ReportError(f"{rep.path}: no meta.date_utc: the history orders entries by date")
    first = rep.runs[0].machine
    runs = []
    for r in rep.runs:
        runs.append({"benchmark": benchmark_name(r), "backend": r.backend, "variant": r.variant,
                     "images": r.images, "threads": r.threads, "device": r.device, "on_gpu": r.on_gpu,
                     "median_ms": r.forward_ms, "samples": r.samples, "gflop_per_s": r.gflop_per_s,
                     "passed": r.passed if r.validation else None})
    return {"store_version": STORE_VERSION, "id": report_id(raw), "machine": machine or machine_of(path, rep),
            "host": first.host, "cpu_model": first.cpu_model, "gpu_name": first.gpu_name,
            "git_commit": str(m.get("git_commit") or "unknown"), "git_dirty": bool(m.get("git_dirty")),
            "date_utc": m["date_utc"], "source": rep.path, "runs": runs}


def _check_entry(e, where):
    if not isinstance(e, dict) or e.get("store_version") != STORE_VERSION:
        raise load.ReportError(f"{where}: not a history entry of store_version {STORE_VERSION}")
    for key in ("id", "machine", "git_commit", "date_utc"):
        if not isinstance(e.get(key), str) or not e[key]:
            raise load.ReportError(f"{where}: missing '{key}'")
    if not isinstance(e.get("runs"), list) or not e["runs"]:
        raise load.ReportError(f"{where}: no runs")
    for r in e["runs"]:
        if not isinstance(r, dict) or not isinstance(r.get("benchmark"), str) or \
                not isinstance(r.get("median_ms"), (int, float)) or not isinstance(r.get("samples"), list):
            raise load.ReportError(f"{where}: a run without benchmark, median_ms or samples")


def _parse_lines(text, path):
    entries = []
    for i, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        where = f"{load.shown(path)}:{i}"
        try:
            e = json.loads(line)
        except json.JSONDecodeError as err:
            raise load.ReportError(f"{where}: not JSON ({err.msg})") from None
        _check_entry(e, where)
        entries.append(e)
    return entries


def read_store(path):
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise load.ReportError(f"{load.shown(path)}: no such store (create it with `history add`)") from None
    except (OSError, UnicodeDecodeError) as e:
        raise load.ReportError(f"{load.shown(path)}: cannot read: {getattr(e, 'strerror', None) or e}") from None
    return _parse_lines(text, path)


def add(store, entries):
    """Appends the entries whose id is not in the store yet, under an exclusive lock; returns the
    list of (entry, added?)."""
    store = Path(store)
    store.parent.mkdir(parents=True, exist_ok=True)
    out = []
    with open(store, "a+", encoding="utf-8") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            f.seek(0)
            text = f.read()
            known = {e["id"] for e in _parse_lines(text, store)}
            if text and not text.endswith("\n"):
                raise load.ReportError(f"{load.shown(store)}: the last line is cut off (a write was interrupted)")
            for e in entries:
                fresh = e["id"] not in known
                if fresh:
                    f.write(json.dumps(e, sort_keys=True, separators=(",", ":")) + "\n")
                    known.add(e["id"])
                out.append((e, fresh))
            f.flush()
            os.fsync(f.fileno())
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)
    return out


# ---- series over commits


@dataclass
class Point:
    commit: str
    date: str
    median_ms: float
    samples: list
    passed: object
    step: str = ""  # "slower" / "faster" where the benchmark moved beyond its noise here
    change: float = 0.0  # median ratio to the previous commit - 1
    medians: list = field(default_factory=list)  # of each report (for runs without passes)


@dataclass
class Series:
    machine: str
    benchmark: str
    backend: str
    on_gpu: bool
    points: list = field(default_factory=list)


def commit_order(entries):
    """Commits in the order of their first report's date."""
    first = {}
    for e in sorted(entries, key=lambda e: (e["date_utc"], e["id"])):
        first.setdefault(e["git_commit"], len(first))
    return list(first)


def series(entries, threshold=0.10, alpha=gate.DEFAULT_ALPHA):
    """One series per machine and benchmark, one point per commit (of several reports of one commit,
    the passes are pooled and the median taken over them), with the step changes marked: a commit
    whose passes differ from the previous commit's beyond the threshold and noise (gate.decide)."""
    order = {c: i for i, c in enumerate(commit_order(entries))}
    pooled = {}
    for e in sorted(entries, key=lambda e: (e["date_utc"], e["id"])):
        for r in e["runs"]:
            key = (e["machine"], r["benchmark"])
            s = pooled.setdefault(key, Series(e["machine"], r["benchmark"], r["backend"], bool(r.get("on_gpu"))))
            p = next((p for p in s.points if p.commit == e["git_commit"]), None)
            if p is None:
                p = Point(e["git_commit"], e["date_utc"], r["median_ms"], [], r.get("passed"))
                s.points.append(p)
            p.samples += r["samples"]
            p.medians.append(r["median_ms"])
            p.median_ms = _median(p.samples) if p.samples else _median(p.medians)
    out = []
    for key in sorted(pooled):
        s = pooled[key]
        s.points.sort(key=lambda p: order[p.commit])
        for prev, p in zip(s.points, s.points[1:]):
            d = gate.decide(prev.samples, p.samples, prev.median_ms, p.median_ms, threshold, alpha)
            p.change = d.ratio - 1.0
            if d.fails:
                p.step = "slower"
            elif d.status.startswith("faster"):
                p.step = "faster"
        out.append(s)
    return out


def _median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else 0.5 * (xs[n // 2 - 1] + xs[n // 2])
