"""Grouping runs by machine, dropping superseded duplicates, and the baselines of the speedups.

Speedups are only taken between runs of the same machine group (same report set and host) and the
same image count:
  x serial:naive   over serial:naive (the thesis' serial C code)
  x cuDNN          GPU runs only, over the fastest cudnn variant (NVIDIA's library, the vendor peer)
  x PyTorch        over the fastest pytorch run on the same kind of device: pytorch:cpu for CPU runs,
                   pytorch:cuda for GPU runs
"""

from dataclasses import dataclass, field


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
    return (r.backend, r.variant, r.images, r.threads, r.batch)


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
        first_seen = {}
        for r in g.runs:
            first_seen.setdefault(r.name, len(first_seen))
        # By image count, then backend (suite order), then variant (report order: the faithful port
        # first), then threads.
        g.runs.sort(key=lambda r: (r.images, backend_order(r.backend), r.backend, first_seen[r.name], r.threads,
                                   r.batch))
    return list(groups.values())


BACKEND_ORDER = ("serial", "openmp", "openacc", "kokkos", "cuda", "cudnn", "pytorch")


def backend_order(b):
    return BACKEND_ORDER.index(b) if b in BACKEND_ORDER else len(BACKEND_ORDER)


def _fastest(runs):
    return min(runs, key=lambda r: r.forward_ms) if runs else None


@dataclass
class Baselines:
    serial: object = None
    cudnn: object = None
    pytorch_cpu: object = None
    pytorch_gpu: object = None

    def vendor_pytorch(self, run):
        return self.pytorch_gpu if run.on_gpu else self.pytorch_cpu


def baselines(group, images):
    at = [r for r in group.runs if r.images == images]
    return Baselines(
        serial=_fastest([r for r in at if r.backend == "serial" and r.variant == "naive"]),
        cudnn=_fastest([r for r in at if r.backend == "cudnn"]),
        pytorch_cpu=_fastest([r for r in at if r.backend == "pytorch" and not r.on_gpu]),
        pytorch_gpu=_fastest([r for r in at if r.backend == "pytorch" and r.on_gpu]),
    )


def speedup(run, baseline):
    if baseline is None or run.forward_ms <= 0:
        return None
    return baseline.forward_ms / run.forward_ms


def speedups(group, run):
    """(x serial:naive, x cuDNN, x PyTorch) for one run; None where there is no baseline."""
    b = baselines(group, run.images)
    return (
        speedup(run, b.serial),
        speedup(run, b.cudnn) if run.on_gpu else None,
        speedup(run, b.vendor_pytorch(run)),
    )


def baseline_notes(group):
    """One line per image count naming the baseline runs the speedups of that count were taken over."""
    notes = []
    for n in group.image_counts():
        b = baselines(group, n)
        parts = []
        for label, r in (("serial:naive", b.serial), ("cuDNN", b.cudnn), ("PyTorch CPU", b.pytorch_cpu),
                         ("PyTorch GPU", b.pytorch_gpu)):
            if r is not None:
                threads = f", {r.threads} threads" if r.threads > 1 else ""
                who = r.name if r.name == label else f"{label} = {r.name}"
                parts.append(f"{who}{threads} ({fmt_ms(r.forward_ms)} ms)")
        if parts:
            notes.append(f"{n} images: " + "; ".join(parts))
    return notes


def fmt_ms(x):
    """Milliseconds with about four significant digits, never in exponent notation."""
    if x is None:
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
    if x is None:
        return "–"
    if x >= 100:
        return f"{x:.0f}×"
    if x >= 10:
        return f"{x:.1f}×"
    return f"{x:.2f}×"


def fmt_rate(x):
    if x >= 100:
        return f"{x:,.0f}"
    return f"{x:.3g}"
