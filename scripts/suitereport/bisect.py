"""`history bisect BENCHMARK GOOD BAD`: the commit where a benchmark stepped, found by binary search over
git's topological order between GOOD and BAD, each probe one build and one run (asv find's idea). Only
the commits the search visits are built; a commit that does not build or run is skipped for its nearest
neighbour inside the interval (toward GOOD first where two are as near), and where none in the interval
builds the answer is that interval.

A probe is classified by its median: nearer (in ratio) to BAD's than to GOOD's is "bad". The step's size
is the ratio of the first bad commit's median to the last good one's.
"""

import math
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from . import backfill, gate, identity, load
from .git_order import commits_between


@dataclass
class Found:
    commit: str
    subject: str
    good: str  # the last good commit before it
    ratio: float  # median at commit / median at good
    probes: int
    untestable: list  # commits skipped: no build or no run


def parse_benchmark(text):
    """backend:variant/images:N[/threads:T] -> (backend, variant, images, threads or None)."""
    m = re.match(r"^([A-Za-z0-9_]+):([A-Za-z0-9_]+)/images:(\d+)(?:/threads:(\d+))?$", text)
    if not m:
        raise load.ReportError(f"{text!r}: a benchmark is backend:variant/images:N/threads:T "
                               "(as the dashboard and `history plot` name it)")
    return m.group(1), m.group(2), int(m.group(3)), int(m.group(4)) if m.group(4) else None


def measure(probe, commit, benchmark, log):
    """(median ms, samples) of the benchmark at the commit, or None where it does not build or run."""
    backend, variant, images, threads = parse_benchmark(benchmark)
    probe.checkout(commit)
    ok, why = probe.build_commit(commit)
    if not ok:
        log(f"  {commit[:10]}: {why}")
        return None
    probe.backends, probe.images = (f"{backend}:{variant}",), str(images)
    if threads:
        probe.threads = threads
    wanted = probe.runnable_backends()
    if not wanted:
        log(f"  {commit[:10]}: no {backend}:{variant} at this commit")
        return None
    with tempfile.TemporaryDirectory(prefix="history-bisect-") as tmp:
        out = Path(tmp) / "report.json"
        rc, _, _ = probe.run_commit(commit, out, wanted)
        if not out.is_file():
            log(f"  {commit[:10]}: the run wrote no report (exit {rc})")
            return None
        try:
            rep = load.read_report(out)
        except load.ReportError as e:
            log(f"  {commit[:10]}: {e}")
            return None
    for r in rep.runs:
        if (r.backend == backend and identity.current_variant(r.backend, r.variant) == variant and r.images == images
                and (threads is None or r.on_gpu or r.threads == threads)):
            return r.forward_ms, list(r.samples)
    log(f"  {commit[:10]}: the report has no {benchmark}")
    return None


def bisect(probe, benchmark, good, bad, threshold=0.10, alpha=gate.DEFAULT_ALPHA, log=print):
    repo = probe.repo
    good, bad = backfill.resolve(repo, good), backfill.resolve(repo, bad)
    line = [good] + commits_between(repo, good, bad)
    if line[-1] != bad:
        raise load.ReportError(f"{bad[:10]} does not descend from {good[:10]}: nothing to bisect")
    results = {}

    def probe_at(i):
        c = line[i]
        if c not in results:
            log(f"probe {line[i][:10]} ({i} of {len(line) - 1} after GOOD) {backfill.commit_meta(repo, c)[0][:60]}")
            results[c] = measure(probe, c, benchmark, log)
            if results[c]:
                log(f"  {results[c][0]:.4g} ms")
        return results[c]

    g, b = probe_at(0), probe_at(len(line) - 1)
    if g is None or b is None:
        raise load.ReportError(f"{'GOOD' if g is None else 'BAD'} ({(good if g is None else bad)[:10]}) gives no "
                               f"time for {benchmark}: bisect needs both ends")
    d = gate.decide(g[1], b[1], g[0], b[0], threshold, alpha)
    if d.status.startswith("ok") or d.status == "noisy":
        raise load.ReportError(f"no step in {benchmark} from GOOD to BAD: {g[0]:.4g} -> {b[0]:.4g} ms "
                               f"({d.status}, threshold {100 * threshold:g} %)")

    def is_bad(m):
        return abs(math.log(m[0] / b[0])) < abs(math.log(m[0] / g[0]))

    lo, hi = 0, len(line) - 1
    untestable = []
    while hi - lo > 1:
        mid = (lo + hi) // 2
        # A commit that does not build: its neighbours, nearest first, inside (lo, hi).
        order = sorted(range(lo + 1, hi), key=lambda i: (abs(i - mid), i))
        got = None
        for i in order:
            m = probe_at(i)
            if m is None:
                untestable.append(line[i])
                continue
            got = (i, m)
            break
        if got is None:
            break  # nothing in between can be measured: the answer is the interval
        i, m = got
        if is_bad(m):
            hi = i
        else:
            lo = i
    subject = backfill.commit_meta(repo, line[hi])[0]
    ratio = results[line[hi]][0] / results[line[lo]][0]
    return Found(line[hi], subject, line[lo], ratio, len(results), sorted(set(untestable), key=line.index))
