"""Grouping runs by machine, dropping superseded duplicates, and the baselines of the speedups.

The tools know no backend or variant by name; two roles come from the backends' manifests
(suitereport/manifests.py; a missing entry is tolerated: its column or note is simply left out):
  BASELINE      the manifest's "baseline" variant, the thesis' C code: "speedup vs <baseline>"
  VENDOR_PEERS  vendor libraries ("vendor": true) and the framework peer: "speedup vs <peer>", taken
                over the fastest run of that peer on the same kind of device (CPU runs: CPU runs of the
                peer with the same thread count; GPU runs: its GPU runs)
Every ratio is a speedup: the other run's forward time over this run's (above 1: this run is faster),
and only between runs of the same machine group (report set and host) and the same image count.
Backends are ordered as the reports list them (baseline first, peers last), not from a list here.
"""

import math
from dataclasses import dataclass, field

from . import manifests


@dataclass
class Group:
    machine: object  # load.Machine
    runs: list = field(default_factory=list)
    superseded: int = 0  # older duplicates dropped
    sources: list = field(default_factory=list)
    hosts: list = field(default_factory=list)

    def image_counts(self):
        return sorted({r.images for r in self.runs})

    def main_image_count(self):
        """The image count most runs share (ties: the larger), for one-image-count charts."""
        counts = {}
        for r in self.runs:
            counts[r.images] = counts.get(r.images, 0) + 1
        return max(counts, key=lambda n: (counts[n], n)) if counts else None


def run_key(r):
    # A run of several MPI ranks is another configuration than one process's with the same threads per rank.
    return (r.backend, r.variant, r.images, r.threads, r.batch, r.ranks, r.mpi.get("mode"))


def group_runs(runs):
    """Runs per machine, in first-seen order; of runs with the same backend, variant, image count,
    threads and batch on one machine, only the newest (report date, then file order) is kept."""
    groups = {}
    for r in runs:
        g = groups.get(r.machine.key)
        if g is None:
            g = groups[r.machine.key] = Group(machine=r.machine)
        elif not g.machine.cpu_model and r.machine.cpu_model:
            g.machine = r.machine
        if r.source not in g.sources:
            g.sources.append(r.source)
        if r.machine.host not in g.hosts:
            g.hosts.append(r.machine.host)
        g.runs.append(r)
    for g in groups.values():
        newest = {}
        for i, r in enumerate(g.runs):
            k = run_key(r)
            if k not in newest or (r.date, i) >= (newest[k][1].date, newest[k][0]):
                newest[k] = (i, r)
        kept = sorted(newest.values(), key=lambda ir: ir[0])
        g.superseded = len(g.runs) - len(kept)
        g.runs = [r for _, r in kept]
    ranks = backend_ranks(runs)
    for g in groups.values():
        first_seen = {}
        for r in g.runs:
            first_seen.setdefault(r.name, len(first_seen))
        # By image count, then backend (suite order), then variant (report order: the faithful port
        # first), then threads.
        g.runs.sort(key=lambda r: (r.images, ranks.get(r.backend, len(ranks)), r.backend, first_seen[r.name],
                                   r.threads, r.batch))
    return list(groups.values())


# ---- The two roles the tools know, from the manifests (a missing entry is tolerated).
BASELINE = manifests.baseline()
BASELINE_NAME = ":".join(BASELINE)
VENDOR_PEERS = manifests.vendor_peers()  # backend -> label


def is_baseline(run):
    return (run.backend, run.variant) == BASELINE


def is_peer(run):
    return run.backend in VENDOR_PEERS


def backend_ranks(runs):
    """{backend: rank}: the baseline's backend first, vendor peers last, the others in the order the
    reports list them: the suite's own order, read first from the reports that hold the baseline (a
    suite run over all backends), then from those with the most backends."""
    by_source = {}
    for r in runs:
        by_source.setdefault(r.source, []).append(r.backend)
    order = []
    for src in sorted(by_source, key=lambda s: (BASELINE[0] not in by_source[s], -len(set(by_source[s])), s)):
        for b in by_source[src]:
            if b not in order:
                order.append(b)
    order.sort(key=lambda b: 0 if b == BASELINE[0] else 2 if b in VENDOR_PEERS else 1)  # stable
    return {b: i for i, b in enumerate(order)}


def peers_present(runs):
    """The vendor peers that have a run, in VENDOR_PEERS order."""
    have = {r.backend for r in runs}
    return [p for p in VENDOR_PEERS if p in have]


def _fastest(runs):
    return min(runs, key=lambda r: r.forward_ms) if runs else None


def baseline_run(group, images):
    return _fastest([r for r in group.runs if r.images == images and is_baseline(r) and r.passed_or_unvalidated])


def peer_run(group, peer, run):
    """The run of a vendor peer (a backend, or one backend:variant) that `run` is compared with: same
    image count, same kind of device, and on a CPU the same thread count (like with like); None if
    there is none."""
    cands = [r for r in group.runs if peer in (r.backend, r.name) and r.images == run.images
             and r.on_gpu == run.on_gpu and r.passed_or_unvalidated]
    if not run.on_gpu:
        cands = [r for r in cands if r.threads == run.threads]
    return _fastest(cands)


def speedup(run, baseline):
    """The baseline's forward time over this run's: above 1, this run is faster."""
    if baseline is None or run.forward_ms <= 0:
        return None
    return baseline.forward_ms / run.forward_ms


def speedups(group, run, peers):
    """[speedup vs the baseline, speedup vs each peer in peers]; None where there is no such run."""
    return [speedup(run, baseline_run(group, run.images))] + [speedup(run, peer_run(group, p, run)) for p in peers]


def baseline_notes(group):
    """One line per image count naming the runs the speedups of that count were taken over."""
    notes = []
    for n in group.image_counts():
        at = [r for r in group.runs if r.images == n]
        parts = []
        base = baseline_run(group, n)
        if base is not None:
            parts.append(f"{BASELINE_NAME} ({fmt_ms(base.forward_ms)} ms)")
        for peer in peers_present(at):
            seen = set()
            for r in sorted((r for r in at if r.backend == peer), key=lambda r: (r.on_gpu, r.threads)):
                key = ("GPU",) if r.on_gpu else ("CPU", r.threads)
                if key in seen:
                    continue
                seen.add(key)
                best = peer_run(group, peer, r)
                if best is None:
                    continue
                where = "GPU" if best.on_gpu else f"CPU {best.threads} thr"
                parts.append(f"{VENDOR_PEERS[peer]} {where} = {best.name} ({fmt_ms(best.forward_ms)} ms)")
        if parts:
            notes.append(f"{n} images: " + "; ".join(parts))
    return notes


def fmt_ms(x):
    """Milliseconds with about four significant digits, never in exponent notation."""
    if x is None or not math.isfinite(x):  # NaN used to print as 0
        return "–"
    ax = abs(x)
    if ax >= 1000:
        return f"{x:.0f}"
    if ax >= 100:
        return f"{x:.1f}"
    if ax >= 10:
        return f"{x:.2f}"
    if ax >= 1:
        return f"{x:.3f}"
    if ax >= 0.01:
        return f"{x:.4f}"
    return f"{x:.2g}" if ax > 0 else "0"


def fmt_speedup(x):
    if x is None or not math.isfinite(x):
        return "–"
    if x >= 100:
        return f"{x:.0f}×"
    if x >= 10:
        return f"{x:.1f}×"
    return f"{x:.2f}×"


def fmt_rate(x):
    if x is None or not math.isfinite(x):
        return "–"
    if x >= 100:
        return f"{x:,.0f}"
    return f"{x:.3g}"
