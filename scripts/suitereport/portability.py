"""The portability verdict: Pennycook et al.'s performance portability over platforms named by their
hardware (identity.py), like for like.

  PP(a, p, H) = |H| / sum over i in H of 1 / e_i(a, p)   if model a is supported on every i in H
              = 0                                          otherwise
A model is a backend (a folder under backends/, or the peer `pytorch`); its entry on a platform is its best validated run
there, of the commit it was measured with last, with the platform's full resources: on a CPU every logical core (a 1-thread run is no CPU entry), on
a GPU the GPU. An offload model that fell back to the host is on no platform. H is every platform in the
data unless the user names some. Beside the strict PP (0 where a model is missing on any platform) the
verdict gives "supported on k of N", the PP over the supported subset, and the PP over the CPU-only and
GPU-only subsets.

Two efficiencies, at one image count:
  application    the fastest entry of any model on platform i / model a's entry
  architectural  a's executed GFLOP/s / platform i's measured peak of the unit a runs on (the report's
                 `arithmetic`: Winograd executes fewer FLOP than direct convolution, 3xFP16 three tensor
                 products per useful one); runs whose report predates `arithmetic` have none. A run whose
                 layers use several units (arithmetic.parts) is credited with the time its executed FLOP
                 would take at each unit's peak, over the time it took: sum of GFLOP/s on u / peak of u.
Peaks, measured and kept beside the reports: gpu_peak.json (benchmarks/gpu_peak.cu: FP32 FMA, TF32 and
FP16 tensor) for the GPU it names; fma_peak.json (benchmarks/fma_peak, all threads) for the CPU platform
of the suite reports in its folder; else a report meta's `peak_gflops` (FP32 FMA) for its platforms.
"""

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from . import identity, safe_io

KINDS = ("application", "architectural")


@dataclass
class Entry:
    run: object  # load.Run: the model's best validated full-resource run on the platform
    application: float = None
    architectural: float = None
    peak: float = None  # GFLOP/s of the unit the run used


@dataclass
class PlatformData:
    platform: identity.Platform
    runs: list = field(default_factory=list)  # its eligible runs at the verdict's image count
    peaks: dict = field(default_factory=dict)  # unit -> (GFLOP/s, where it comes from)

    @property
    def id(self):
        return self.platform.id

    def commits(self, entries):
        """The suite commits its entries were measured with (a peer's report names the checkout it ran
        from, not the code it measured: left out)."""
        from .gate import is_peer_run
        return sorted({e.run.git_commit[:10] or "unknown" for e in entries if not is_peer_run(e.run)})


@dataclass
class Verdict:
    images: int
    platforms: list  # PlatformData, CPUs first, then GPUs, each by label
    models: list  # backend names, the most portable first
    entries: dict  # (model, platform id) -> Entry
    left_out: dict = field(default_factory=dict)  # why runs are not entries -> count

    def entry(self, model, pid):
        return self.entries.get((model, pid))

    def efficiency(self, model, pid, kind="application"):
        e = self.entry(model, pid)
        return getattr(e, kind) if e else None

    def ids(self, kind_of_platform=None):
        return [p.id for p in self.platforms if kind_of_platform in (None, p.platform.kind)]

    def pp(self, model, ids=None, kind="application"):
        """Strict: 0 unless the model has an efficiency on every platform of `ids` (default: all)."""
        ids = self.ids() if ids is None else ids
        return harmonic_mean([self.efficiency(model, i, kind) for i in ids])

    def supported(self, model, ids=None, kind="application"):
        ids = self.ids() if ids is None else ids
        return [i for i in ids if (self.efficiency(model, i, kind) or 0) > 0]

    def pp_supported(self, model, ids=None, kind="application"):
        """The PP over the platforms where the model runs (None where it runs on none)."""
        s = self.supported(model, ids, kind)
        return harmonic_mean([self.efficiency(model, i, kind) for i in s]) if s else None

    def fastest(self, pid):
        entries = [e for (m, i), e in self.entries.items() if i == pid]
        return min(entries, key=lambda e: e.run.forward_ms) if entries else None

    def cascade(self, model, kind="application"):
        """Sewall et al.: (platform id, efficiency, PP over the first k) with the model's platforms sorted
        by efficiency, high to low; unsupported platforms last, with efficiency 0 and PP 0 from there on."""
        effs = sorted(((self.efficiency(model, i, kind) or 0.0, i) for i in self.ids()), key=lambda t: -t[0])
        out = []
        for k, (e, pid) in enumerate(effs):
            out.append((pid, e, harmonic_mean([x for x, _ in effs[:k + 1]])))
        return out


def harmonic_mean(effs):
    if not effs or any(e is None or not e > 0 for e in effs):
        return 0.0
    return len(effs) / sum(1.0 / e for e in effs)


# ---- which runs are entries


def why_not_entry(run):
    """None for a run that may be a platform entry, else the reason (counted in Verdict.left_out)."""
    if not run.passed:
        return "not validated, or validation failed"
    if run.host_fallback:
        return "an offload model's host fallback (no device): on no platform"
    if run.mpi:  # one rank too: mpirun's binding, not the one the verdict's runs share
        return "a run under an MPI launcher (scripts/report --scaling)"
    if run.platform.kind == "cpu" and run.platform.cores and run.threads != run.platform.cores:
        return "a CPU run on fewer threads than the platform's cores"
    return None


def _peaks(runs):
    """{platform id: {unit: (GFLOP/s, source)}}: the measured peak files beside the runs' reports first
    (the newest report folder's wins), then the reports' meta.peak_gflops."""
    peaks = {}

    def put(pid, unit, value, source):
        if isinstance(value, (int, float)) and value > 0 and math.isfinite(value):
            peaks.setdefault(pid, {}).setdefault(unit, (float(value), source))

    folders = {}
    for r in sorted(runs, key=lambda r: r.date, reverse=True):
        folders.setdefault(Path(r.source).parent, []).append(r)
    for folder, rs in folders.items():
        cpu_ids = sorted({r.machine.cpu.id for r in rs})
        gpu_peak = _read_json(folder / "gpu_peak.json")
        if isinstance(gpu_peak, dict) and isinstance(gpu_peak.get("peaks_gflop_per_s"), dict):
            pid = identity.gpu_platform(str(gpu_peak.get("gpu_name", ""))).id
            for unit, v in gpu_peak["peaks_gflop_per_s"].items():
                put(pid, unit, v, f"{folder / 'gpu_peak.json'} (benchmarks/gpu_peak)")
        fma = fma_peak(folder / "fma_peak.json")
        if fma and len(cpu_ids) == 1:
            put(cpu_ids[0], "fp32_fma", fma[0], f"{folder / 'fma_peak.json'} ({fma[1]})")
    for r in runs:
        if r.meta_peak_gflops:
            put(r.platform.id, "fp32_fma", r.meta_peak_gflops, f"{r.source}: meta.peak_gflops")
    return peaks


def _read_json(path):
    """A peak file's JSON, or None where there is none or it is unreadable (bounded, regular files only)."""
    if not path.is_file():
        return None
    try:
        return json.loads(safe_io.read_text(path, "peak file", limit=16 * 1024 * 1024))
    except (safe_io.UnsafePath, ValueError, RecursionError):
        return None


def fma_peak(path):
    """(GFLOP/s, how) of benchmarks/fma_peak's Google Benchmark output: the all-threads median of the
    repetitions (with their coefficient of variation), else the single run."""
    data = _read_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("benchmarks"), list):
        return None
    entries = [b for b in data["benchmarks"] if isinstance(b, dict) and "AllThreads" in str(b.get("name", ""))
               and isinstance(b.get("GFLOP/s"), (int, float)) and math.isfinite(b["GFLOP/s"])]
    by = {b.get("aggregate_name"): b["GFLOP/s"] for b in entries}
    if "median" in by:
        cv = f", cv {100 * by['cv']:.0f} %" if "cv" in by else ""
        return float(by["median"]), f"all threads, median of repetitions{cv}"
    if None in by:
        return float(by[None]), "all threads, one repetition"
    return None


# ---- the verdict


def _architectural(run, peaks):
    """The run's executed FLOP rate on each of its units over that unit's peak, summed (one unit: executed
    GFLOP/s / its peak); None where the report records no arithmetic or a unit's peak is not known."""
    shares = [rate / peaks[unit][0] if unit in peaks and peaks[unit][0] else None for unit, rate in run.arith_parts]
    return sum(shares) if shares and None not in shares else None


def image_counts(runs):
    """Image counts in the data, those with the most platforms first (ties: the larger)."""
    plats = {}
    for r in runs:
        if why_not_entry(r) is None:
            plats.setdefault(r.images, set()).add(r.platform.id)
    return sorted(plats, key=lambda n: (-len(plats[n]), -n))


def verdict(runs, images=None, platform_ids=None):
    """The verdict over `runs` at `images` (default: the count most platforms share); platform_ids
    restricts H (the ids of identity.Platform; unknown ids are an error for the caller to report)."""
    counts = image_counts(runs)
    if images is None:
        images = counts[0] if counts else 0
    left_out = {}
    plats = {}
    for r in runs:
        if r.images != images:
            continue
        why = why_not_entry(r)
        if why:
            left_out[why] = left_out.get(why, 0) + 1
            continue
        if platform_ids and r.platform.id not in platform_ids:
            continue
        plats.setdefault(r.platform.id, PlatformData(r.platform)).runs.append(r)
    peaks = _peaks(runs)
    for pid, p in plats.items():
        p.peaks = peaks.get(pid, {})
    order = sorted(plats.values(), key=lambda p: (p.platform.kind != "cpu", p.platform.label))
    entries = {}
    for p in order:
        best = {}
        for r in newest_code(p.runs):
            if r.backend not in best or r.forward_ms < best[r.backend].forward_ms:
                best[r.backend] = r
        fastest = min(r.forward_ms for r in best.values())
        for model, r in best.items():
            peak = p.peaks.get(r.arith_unit, (None, ""))[0] if r.arith_unit else None
            arch = _architectural(r, p.peaks)
            entries[(model, p.id)] = Entry(r, fastest / r.forward_ms, arch, peak)
    models = []
    for p in order:
        for r in p.runs:
            if r.backend not in models:
                models.append(r.backend)
    v = Verdict(images, order, models, entries, left_out)
    v.models.sort(key=lambda m: (-v.pp(m), -(v.pp_supported(m) or 0), -len(v.supported(m)), m))
    return v


def verdicts(runs):
    """The verdict at every image count that at least two platforms and two models share, fewest images first
    (one model's sweep over image counts, say a check of its thresholds on two GPUs, compares no models)."""
    for n in sorted(image_counts(runs)):
        v = verdict(runs, n)
        if len(v.platforms) >= 2 and len(v.models) >= 2:
            yield v


def newest_code(runs):
    """Of each model's runs, those of the commit it was measured with last (by report date): an older
    measurement of older code is superseded, not mixed in. Runs of uncommitted changes (git_dirty: say an A/B's
    candidate build, whose code no commit has) count only for a model with no run of committed code."""
    committed = {r.backend for r in runs if not r.git_dirty}
    runs = [r for r in runs if not r.git_dirty or r.backend not in committed]
    newest = {}
    for r in runs:
        if r.backend not in newest or r.date > newest[r.backend].date:
            newest[r.backend] = r
    return [r for r in runs if r.git_commit == newest[r.backend].git_commit]


def to_json(v):
    """The verdict for scripts and CI (README: "The portability verdict")."""

    def rounded(x):
        return None if x is None else round(x, 4)

    def sub_pp(m, kind, which):
        ids = v.ids(which)
        return rounded(v.pp(m, ids, kind)) if ids else None

    platforms = []
    for p in v.platforms:
        es = [e for (m, i), e in v.entries.items() if i == p.id]
        f = v.fastest(p.id)
        platforms.append({"id": p.id, "kind": p.platform.kind, "label": p.platform.label,
                          "cores": p.platform.cores or None, "commits": p.commits(es),
                          "fastest": f.run.name if f else None,
                          "fastest_ms": rounded(f.run.forward_ms) if f else None,
                          "peaks_gflop_per_s": {u: round(g, 1) for u, (g, _) in p.peaks.items()}})
    models = {}
    for m in v.models:
        entry = {}
        for kind in KINDS:
            key = "" if kind == "application" else "architectural_"
            entry[f"{key}pp"] = rounded(v.pp(m, None, kind))
            entry[f"{key}pp_supported"] = rounded(v.pp_supported(m, None, kind))
            entry[f"{key}pp_cpu"] = sub_pp(m, kind, "cpu")
            entry[f"{key}pp_gpu"] = sub_pp(m, kind, "gpu")
            entry[f"{key}supported"] = len(v.supported(m, None, kind))
            entry["efficiency" if kind == "application" else "architectural"] = {
                i: rounded(v.efficiency(m, i, kind)) for i in v.ids()}
        entry["runs"] = {i: _run_facts(v.entry(m, i)) for i in v.ids() if v.entry(m, i)}
        models[m] = entry
    return {"images": v.images, "platforms": platforms, "models": models,
            "left_out": dict(sorted(v.left_out.items()))}


def _run_facts(e):
    r = e.run
    return {"variant": r.variant, "threads": r.threads if r.platform.kind == "cpu" else None, "device": r.device,
            "forward_ms": round(r.forward_ms, 6), "unit": r.arith_unit or None, "commit": r.git_commit[:10]}
