"""PNG charts of the history store: one per benchmark over commits (a line per machine, step changes
marked), and one overview per machine (every benchmark relative to its first commit)."""

import re

from . import palette
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from .charts import plain_number, plt, save  # matplotlib with the Agg backend, deterministic PNG bytes

STEP_COLORS = {"slower": "#d62728", "faster": "#2ca02c"}


def slug(text):
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-")


def _commit_axis(ax, commits):
    ax.set_xticks(range(len(commits)))
    ax.set_xticklabels([c[:7] for c in commits], rotation=45, ha="right", fontsize=8)
    ax.set_xlim(-0.5, len(commits) - 0.5)
    ax.set_xlabel("commit (ordered by the date of its first report)")


def _mark_steps(ax, xs, points):
    for x, p in zip(xs, points):
        if p.step:
            ax.plot([x], [p.median_ms], marker="o", markersize=13, fillstyle="none", color=STEP_COLORS[p.step],
                    markeredgewidth=2, zorder=5)
            ax.annotate(f"{p.step} {100 * p.change:+.0f} %", (x, p.median_ms), textcoords="offset points",
                        xytext=(8, 8), fontsize=8, color=STEP_COLORS[p.step])


def benchmark_chart(benchmark, series_list, commits, path):
    """Forward time of one benchmark over commits, one line per machine."""
    index = {c: i for i, c in enumerate(commits)}
    used = sorted({index[p.commit] for s in series_list for p in s.points})
    shown = [commits[i] for i in used]
    pos = {c: i for i, c in enumerate(shown)}
    fig, ax = plt.subplots(figsize=(8.5, 4.2))
    styles = palette.machine_styles(sorted({s.machine for s in series_list}))
    for s in series_list:
        xs = [pos[p.commit] for p in s.points]
        ax.plot(xs, [p.median_ms for p in s.points], label=s.machine, **styles[s.machine])
        _mark_steps(ax, xs, s.points)
    _commit_axis(ax, shown)
    ax.set_ylabel("forward time per pass, ms (median; lower is faster)")
    ax.set_ylim(bottom=0)
    ax.set_title(f"{benchmark} over commits\n(circled: a step beyond the noise, Mann-Whitney U on the passes)",
                 fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.02, 0.5), frameon=False)
    return save(fig, path)


def overview_chart(machine, series_list, commits, path):
    """Every benchmark of one machine over commits (forward ms, log scale), colour per backend:variant,
    dashed where it ran on more than one thread, step changes circled."""
    index = {c: i for i, c in enumerate(commits)}
    mine = [s for s in series_list if s.machine == machine]
    used = sorted({index[p.commit] for s in mine for p in s.points})
    if not mine or len(used) < 2:
        return None
    shown = [commits[i] for i in used]
    pos = {c: i for i, c in enumerate(shown)}
    fig, ax = plt.subplots(figsize=(9, 4.8))
    for s in mine:
        xs = [pos[p.commit] for p in s.points]
        name = s.benchmark.split("/")[0]
        style = dict(palette.style(name))
        style["linestyle"] = palette.thread_linestyle(s.benchmark)
        ax.plot(xs, [p.median_ms for p in s.points], label=s.benchmark, **style)
        _mark_steps(ax, xs, s.points)
    _commit_axis(ax, shown)
    ax.set_yscale("log")
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1, 2, 5)))
    ax.yaxis.set_major_formatter(FuncFormatter(plain_number))
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_ylabel("forward time per pass, ms (median; log scale, lower is faster)")
    ax.set_title(f"History of every benchmark, {machine}", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.02, 0.5), frameon=False)
    return save(fig, path)
