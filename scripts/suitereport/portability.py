"""Pennycook et al.'s performance portability metric over the report folders (the platforms).

  PP(a, p, H) = |H| / sum over i in H of 1 / e_i(a, p)   if model a runs (validated) on every i in H
              = 0                                          otherwise
with two kinds of efficiency e_i, at one image count:
  application    the fastest validated run of any model on platform i / model a's fastest validated run
  architectural  model a's best useful GFLOP/s on i (flops_per_image x images/s) / platform i's peak
A model is a backend (its fastest variant counts); a platform is a report folder (results/cpu/<machine>,
results/h200): on a folder with GPU runs only GPU runs count (its host CPU is not the platform).
A platform's peak, in this order: a report meta's "peak_gflops"; benchmarks/fma_peak's output in the
folder (fma_peak.json, all threads, median); the first number in the folder's peak.txt.
"""

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

KINDS = ("application", "architectural")


@dataclass
class Platform:
    name: str
    runs: list
    peak_gflops: float = None
    peak_source: str = ""


@dataclass
class Result:
    kind: str
    images: int
    platforms: list  # Platform, in the order of the folders
    efficiency: dict = field(default_factory=dict)  # model -> {platform name: e or None}

    def pp(self, model, names=None):
        names = names or [p.name for p in self.platforms]
        effs = [self.efficiency[model].get(n) for n in names]
        if not effs or any(e is None or e <= 0 for e in effs):
            return 0.0
        return len(effs) / sum(1 / e for e in effs)


def platform_peak(folder, runs):
    for r in runs:
        if r.meta_peak_gflops:
            return r.meta_peak_gflops, "report meta peak_gflops"
    folder = Path(folder) if folder else None
    if folder and (folder / "fma_peak.json").is_file():
        peak = _fma_peak(folder / "fma_peak.json")
        if peak:
            return peak
    if folder and (folder / "peak.txt").is_file():
        for line in (folder / "peak.txt").read_text().splitlines():
            m = re.match(r"\s*([0-9.]+(?:[eE][0-9]+)?)\s*$", line)
            if m:
                return float(m.group(1)), "peak.txt"
    return None, ""


def _fma_peak(path):
    """(GFLOP/s, source) of benchmarks/fma_peak's Google Benchmark output: the all-threads median of
    the repetitions (with their coefficient of variation), else the single run."""
    try:
        entries = [b for b in json.loads(path.read_text()).get("benchmarks", [])
                   if "AllThreads" in str(b.get("name", "")) and isinstance(b.get("GFLOP/s"), (int, float))]
    except (ValueError, AttributeError, OSError):
        return None
    by = {b.get("aggregate_name"): b["GFLOP/s"] for b in entries}
    if "median" in by:
        cv = f", cv {100 * by['cv']:.0f} %" if "cv" in by else ""
        return float(by["median"]), f"fma_peak.json, all threads, median of repetitions{cv}"
    if None in by:
        return float(by[None]), "fma_peak.json, all threads, one repetition"
    return None


def platforms(groups):
    """One platform per machine group (a report folder, whose peak files are next to its reports)."""
    out = []
    for g in groups:
        gpu = any(r.on_gpu for r in g.runs)
        runs = [r for r in g.runs if r.on_gpu == gpu and r.passed]
        if not runs:
            continue
        peak, source = platform_peak(Path(g.runs[0].source).parent, runs)
        out.append(Platform(g.machine.set_name or g.machine.host, runs, peak, source))
    return out


def compute(plats, images, kind):
    res = Result(kind, images, plats)
    models = []
    for p in plats:
        models += [r.backend for r in p.runs if r.images == images and r.backend not in models]
    for m in models:
        res.efficiency[m] = {}
    for p in plats:
        at = [r for r in p.runs if r.images == images]
        if not at:
            continue
        best_any = min(r.forward_ms for r in at)
        for m in models:
            mine = [r for r in at if r.backend == m]
            if not mine:
                res.efficiency[m][p.name] = None
            elif kind == "application":
                res.efficiency[m][p.name] = best_any / min(r.forward_ms for r in mine)
            else:
                best = max(r.gflop_per_s for r in mine)
                res.efficiency[m][p.name] = best / p.peak_gflops if p.peak_gflops and best > 0 else None
    return res


def common_image_counts(plats):
    counts = None
    for p in plats:
        mine = {r.images for r in p.runs}
        counts = mine if counts is None else counts & mine
    return sorted(counts or [])


def results(groups):
    """(platforms, [(images, kind, compute(...))]) for every image count that all platforms share and every
    kind of efficiency; no cases with fewer than two platforms (nothing to compare)."""
    plats = platforms(groups)
    if len(plats) < 2:
        return plats, []
    return plats, [(n, kind, compute(plats, n, kind)) for n in common_image_counts(plats) for kind in KINDS]


def cascade(res, model):
    """Sewall et al.: the model's efficiencies sorted high to low, and PP over the first k of them."""
    effs = sorted(((e or 0.0, n) for n, e in res.efficiency[model].items()), reverse=True)
    effs += [(0.0, p.name) for p in res.platforms if p.name not in res.efficiency[model]]
    names = [n for _, n in effs]
    return [(n, e, res.pp(model, names[:k + 1])) for k, (e, n) in enumerate(effs)]
