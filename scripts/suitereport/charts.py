"""PNG charts of one machine group (matplotlib, Agg backend: no display needed).

Each chart is drawn only where the data has what it shows: speedup needs a run of the
baseline (its manifest's "baseline"), image scaling
two image counts of one variant, thread scaling two thread counts of one variant on the CPU, in one process
(not under mpirun). Colours come from palette.py: one per backend:variant, the same in bar and line charts.
"""

import hashlib
import io
import math
import sys

from .matplotlib_setup import plt  # first: the Agg backend before anything of matplotlib draws
from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, NullFormatter

from . import analysis, palette, safe_io
from .analysis import fmt_ms, fmt_speedup
from .load import LAYER_KINDS

LAYER_COLORS = {"conv": "#1f77b4", "relu": "#ff7f0e", "pool": "#2ca02c", "fc": "#d62728", "softmax": "#9467bd",
                "other": "#8c564b"}
DPI = 110


def _threads_vary(runs):
    """Whether the CPU runs among runs have several thread counts (a GPU run's 'threads' is the backend's
    launch width, not a choice: a GPU run's 270336 beside a one-thread CPU run gave it "(1 thr)")."""
    return len({r.threads for r in runs if not r.on_gpu}) > 1


def _label(run, with_threads, with_batch=False):
    """backend:variant, with the thread count where threads vary, on CPU runs only (a GPU run's
    'threads' is the backend's launch width, not a choice); the MPI ranks of a run under mpirun (its
    images/s are all ranks'), and the batch where asked."""
    parts = [f"{run.threads} thr"] if with_threads and not run.on_gpu else []
    if run.mpi:
        parts.append(f"{run.ranks} MPI rank{'s' if run.ranks != 1 else ''}, {run.mpi.get('mode')}")
    if with_batch:
        parts.append(f"batch {run.batch}")
    return run.name + (f" ({', '.join(parts)})" if parts else "")


def _labels(runs):
    """A label per run that tells it from the others in one chart: the batch only where runs of a variant
    would otherwise share a label (a chart of eight bars, four of them with one GPU variant's name at four
    batch sizes, left the reader to guess)."""
    threads_vary = _threads_vary(runs)
    plain = [_label(r, threads_vary) for r in runs]
    return [_label(r, threads_vary, plain.count(p) > 1) for r, p in zip(runs, plain)]


def _series_style(run):
    st = dict(palette.style(run.name))
    st["linestyle"] = palette.thread_linestyle(run.threads if not run.on_gpu else 1)
    return st


def _log_axis(axis, ticks=None):
    """Compact plain numbers on a log axis (50, 1.2k, 50k): the given ticks thinned so that
    neighbours are at least 0.25 decades apart, else 1-2-5 steps."""
    if ticks:
        kept = []
        for t in sorted(set(ticks)):
            if not kept or math.log10(t / kept[-1]) >= 0.25:
                kept.append(t)
        axis.set_major_locator(FixedLocator(kept))
    else:
        axis.set_major_locator(LogLocator(base=10, subs=(1, 2, 5)))
    axis.set_major_formatter(FuncFormatter(plain_number))
    axis.set_minor_formatter(NullFormatter())


def save(fig, path):
    """The PNG is drawn in memory, then written by safe_io (a random temporary name beside the target,
    renamed over it): savefig(path) followed a link planted at the name and left half a file behind
    on a full disk."""
    buf = io.BytesIO()
    try:
        fig.savefig(buf, format="png", dpi=DPI, bbox_inches="tight", metadata={"Software": None})
    finally:
        plt.close(fig)
    safe_io.write_bytes(path, buf.getvalue())
    return path


MAX_SLUG = 100  # "<slug>-<chart>.png" stays far below the 255 bytes a file name may have


def short_name(text, limit=MAX_SLUG):
    """text, or its first characters and a hash of the whole where it is longer than limit: a 300-character
    host name made a file name too long; the hash keeps two long names apart."""
    if len(text.encode("utf-8")) <= limit:
        return text
    digest = hashlib.sha1(text.encode("utf-8")).hexdigest()[:10]
    return text.encode("utf-8")[:limit - 11].decode("utf-8", "ignore") + "-" + digest



def plain_number(x, _pos=None):
    """50, 1.2k, 50k, 2M: short enough that neighbouring tick labels do not run together."""
    for div, suffix in ((1e6, "M"), (1e3, "k")):
        if x >= div:
            return f"{x / div:.3g}{suffix}"
    if x >= 1:
        return f"{x:g}"
    return f"{x:.3g}"



def _bar_runs(group, images):
    """The runs at one image count, one bar each (as the runs table has a row each; _labels tells them apart)."""
    return [r for r in group.runs if r.images == images]


def _barh(ax, runs, values):
    """A bar per run; a run that failed its validation hatched and marked so in its label (a peer that does
    not validate is neither)."""
    labels = _labels(runs)
    ys = range(len(runs))
    bars = ax.barh(ys, values, color=[palette.color(r.name) for r in runs])
    for bar, r in zip(bars, runs):
        if not r.passed and r.validation:
            bar.set_hatch("//")
            bar.set_edgecolor("black")
    ax.set_yticks(list(ys))
    ax.set_yticklabels([lab + ("  [validation FAILED]" if r.validation and not r.passed else "")
                        for lab, r in zip(labels, runs)])
    ax.invert_yaxis()
    return bars


def _fig_for_bars(n):
    return plt.subplots(figsize=(8.5, 1.2 + 0.38 * max(n, 2)))


def _finite(x):
    """x, or the largest float where it overflowed: the reports' times are any finite number of at least
    1 ns, and a time of 1e308 ms (or a speedup over one) made an axis limit infinite, which matplotlib
    refuses with a traceback."""
    return min(x, sys.float_info.max)


def time_chart(group, images, path):
    runs = _bar_runs(group, images)
    if not runs:
        return None
    fig, ax = _fig_for_bars(len(runs))
    values = [r.forward_ms for r in runs]
    _barh(ax, runs, values)
    ax.set_xscale("log")
    _log_axis(ax.xaxis)
    lo, hi = min(values), max(values)
    ax.set_xlim(lo / 3, _finite(hi * 6))
    for i, v in enumerate(values):
        ax.text(_finite(v * 1.08), i, f"{fmt_ms(v)} ms", va="center", fontsize=8)
    ax.set_xlabel("forward time per pass, ms (median, log scale; shorter is faster)")
    ax.set_title(f"Forward time, {images} images\n{group.machine.label}", fontsize=11)
    ax.grid(axis="x", which="major", alpha=0.3)
    return save(fig, path)


def speedup_chart(group, images, path):
    runs = _bar_runs(group, images)
    base = analysis.baseline_run(group, images)
    if base is None or len(runs) < 2:
        return None
    fig, ax = _fig_for_bars(len(runs))
    values = [_finite(base.forward_ms / r.forward_ms) for r in runs]
    _barh(ax, runs, values)
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _p: plain_number(x) + "×"))
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.set_xlim(min(min(values), 1) / 2, _finite(max(values) * 5))
    for i, v in enumerate(values):
        ax.text(_finite(v * 1.08), i, fmt_speedup(v), va="center", fontsize=8)
    ax.set_xlabel(f"speedup vs {analysis.BASELINE_NAME} = its time ({fmt_ms(base.forward_ms)} ms) / this run's; "
                  "log scale, longer is faster")
    ax.set_title(f"Speedup vs {analysis.BASELINE_NAME}, {images} images\n{group.machine.label}", fontsize=11)
    ax.grid(axis="x", which="major", alpha=0.3)
    return save(fig, path)


def layers_chart(group, images, path):
    runs = [r for r in group.runs if r.images == images and r.layers_ms]
    if not runs:
        return None
    kinds = list(LAYER_KINDS) + (["other"] if any("other" in r.layer_totals() for r in runs) else [])
    fig, ax = _fig_for_bars(len(runs))
    left = [0.0] * len(runs)
    totals = [sum(r.layer_totals().values()) for r in runs]
    for k in kinds:
        shares = [100 * r.layer_totals().get(k, 0.0) / t if t > 0 else 0 for r, t in zip(runs, totals)]
        ax.barh(range(len(runs)), shares, left=left, color=LAYER_COLORS[k], label=k)
        left = [a + b for a, b in zip(left, shares)]
    ax.set_yticks(range(len(runs)))
    ax.set_yticklabels(_labels(runs))
    ax.invert_yaxis()
    ax.set_xlim(0, 100)
    for i, t in enumerate(totals):
        ax.text(101, i, f"{fmt_ms(t)} ms", va="center", fontsize=8)
    ax.set_xlabel("share of the summed layer times, % (right: their sum per forward pass)")
    ax.set_title(f"Per-layer breakdown, {images} images\n{group.machine.label}", fontsize=11)
    ax.legend(ncol=len(kinds), loc="upper center", bbox_to_anchor=(0.5, -0.16 - 0.3 / max(len(runs), 2)),
              frameon=False, fontsize=8)
    return save(fig, path)


def _series(runs, label, key):
    """{label: [(x, run)] by x} of the labels with two or more x values; of several runs at one x (other
    batch sizes) the fastest: a line through all of them went up and down at that x."""
    by = {}
    for r in runs:
        pts = by.setdefault(label(r), {})
        x = key(r)
        if x not in pts or r.forward_ms < pts[x].forward_ms:
            pts[x] = r
    return {lab: sorted(pts.items(), key=lambda p: p[0]) for lab, pts in by.items() if len(pts) > 1}


def images_scaling_chart(group, path):
    # One line per variant and thread count (and MPI ranks): the fastest configuration of each image count.
    threads_vary = _threads_vary(group.runs)
    series = _series(group.runs, lambda r: _label(r, threads_vary), lambda r: r.images)
    if not series:
        return None
    fig, ax = plt.subplots(figsize=(8.5, 5))
    for lab, pts in series.items():
        ax.plot([x for x, _ in pts], [r.images_per_s for _, r in pts], label=lab, **_series_style(pts[0][1]))
    ax.set_xscale("log")
    ax.set_yscale("log")
    _log_axis(ax.xaxis, [x for pts in series.values() for x, _ in pts])
    _log_axis(ax.yaxis)
    ax.set_xlabel("images per run (log scale)")
    ax.set_ylabel("images/s (log scale; higher is faster)")
    ax.set_title(f"Scaling with image count\n{group.machine.label}", fontsize=11)
    ax.grid(which="major", alpha=0.3)
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.02, 0.5), frameon=False)
    return save(fig, path)


def threads_scaling_chart(group, images, path):
    # CPU runs of one process only: a GPU run's threads are its launch width, and an MPI run's images/s are
    # all its ranks' (scripts/report --scaling draws those): a 16-rank run at "1 thread" set the line's start.
    runs = [r for r in group.runs if r.images == images and not r.on_gpu and not r.mpi]
    series = _series(runs, lambda r: r.name, lambda r: r.threads)
    if not series:
        return None
    fig, ax = plt.subplots(figsize=(8.5, 5))
    for name, pts in series.items():
        xs = [x for x, _ in pts]
        ys = [r.images_per_s for _, r in pts]
        style = dict(palette.style(name))
        line, = ax.plot(xs, ys, label=name, **style)
        x0, y0 = xs[0], ys[0]
        ax.plot([x0, xs[-1]], [y0, y0 * xs[-1] / x0], linestyle=":", color=line.get_color(), alpha=0.6)
    ax.plot([], [], linestyle=":", color="gray", label="linear scaling from the fewest threads")
    ax.set_xscale("log", base=2)
    _log_axis(ax.xaxis, [x for pts in series.values() for x, _ in pts])
    ax.set_xlabel("threads (log scale)")
    ax.set_ylabel("images/s (higher is faster)")
    ax.set_ylim(bottom=0)
    ax.set_title(f"Scaling with threads, {images} images\n{group.machine.label}", fontsize=11)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.02, 0.5), frameon=False)
    return save(fig, path)


CHARTS = ("time", "layers", "speedup", "images", "threads")


def draw_group(group, out_dir, slug, images=None):
    """Every chart the group's data supports; returns [(kind, path)]."""
    n = images or group.main_image_count()
    made = []
    jobs = (("time", lambda p: time_chart(group, n, p)),
            ("layers", lambda p: layers_chart(group, n, p)),
            ("speedup", lambda p: speedup_chart(group, n, p)),
            ("images", lambda p: images_scaling_chart(group, p)),
            ("threads", lambda p: threads_scaling_chart(group, n, p)))
    for kind, draw in jobs:
        path = out_dir / f"{slug}-{kind}.png"
        if draw(path):
            made.append((kind, path))
    return made


def slugs(groups):
    """A file-name prefix per group: its machine's slug, made unique with the host where needed, and with a
    hash of the machine where that is not enough."""
    names = [g.machine.slug for g in groups]
    out = []
    for g, s in zip(groups, names):
        if names.count(s) > 1:
            s = f"{s}-{g.machine.host}"
        # a host name may hold any byte but "/" (and NUL): a newline or "\" must not reach the file name
        s = short_name("".join(ch if ch.isprintable() and ch not in "/\\" else "-" for ch in s))
        if s.lower() in {o.lower() for o in out}:
            # One host, two GPUs whose names differ only in punctuation or case (one slug): the second
            # group's charts were written over the first's. Groups are machines, so the hash keeps them apart.
            s = short_name(f"{s}-{hashlib.sha1(repr(g.machine.key).encode()).hexdigest()[:10]}")
        out.append(s)
    return out


def draw_portability(groups, out_dir):
    """The portability verdict's cascade and PP charts at every image count with at least two platforms;
    [(key, path)] with key portability-<kind>-<images> (the cascade)."""
    from . import portability, portability_view, safe_io
    runs = [r for g in groups for r in g.runs]
    out = []
    for v in portability.verdicts(runs):
        n = v.images
        for kind in portability.KINDS:
            if not any(v.supported(m, None, kind) for m in v.models):
                continue
            path = out_dir / f"portability-{kind}-{n}.png"
            safe_io.write_bytes(path, portability_view.cascade_png(v, kind))
            out.append((f"portability-{kind}-{n}", path))
            bars = out_dir / f"portability-pp-{kind}-{n}.png"
            safe_io.write_bytes(bars, portability_view.pp_bars_png(v, kind))
            out.append((f"portability-pp-{kind}-{n}", bars))
    return out
