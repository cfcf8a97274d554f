"""PNG charts of the history store: one per platform x backend x image count (its variants as lines,
each in its palette colour, the same as on the dashboard; dashed where a CPU run used more than one
thread), and one overview per platform (every benchmark, log scale). Commits in git order; a point made
on a busy machine is hollow; steps are circled (red slower, green faster, grey where no commit changed the code
it runs)."""

import math
import re

from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from . import palette
from .charts import plain_number, plt, save  # matplotlib with the Agg backend, deterministic PNG bytes

STEP_COLORS = {"slower": "#d62728", "faster": "#2ca02c", "machine": "#7f7f7f"}  # machine: no code change


def slug(text):
    return re.sub(r"[^A-Za-z0-9._]+", "-", text).strip("-")


def groups(series_list):
    """{(platform label, backend, images): [series]}: one chart each."""
    out = {}
    for s in series_list:
        out.setdefault((s.machine, s.backend, s.images), []).append(s)
    return out


def _positions(series_list, order):
    """({commit: x}, [the commit at each x]): the commits with a point, in `order`'s order; a commit that
    `order` lacks after those, at an x of its own (it was drawn at the first commit's x, and "?" labelled an
    empty place at the end)."""
    index = {c: i for i, c in enumerate(order)}
    commits = {p.commit for s in series_list for p in s.points}
    shown = sorted(commits, key=lambda c: (index.get(c, len(order)), c))
    return {c: i for i, c in enumerate(shown)}, shown


def _commit_axis(ax, shown):
    # At most 24 labels: a label per commit is unreadable beyond that (len // 24 gave 47 labels to 47 commits).
    step = math.ceil(len(shown) / 24)
    ticks = list(range(0, len(shown), step))
    ax.set_xticks(ticks)
    ax.set_xticklabels([shown[i][:7] for i in ticks], rotation=60, ha="right", fontsize=7, family="monospace")
    ax.set_xlim(-0.5, len(shown) - 0.5)
    ax.set_xlabel(f"commit, in git order ({len(shown)} with results)")


def _draw(ax, xs, s, style, label):
    """One series: its line, its points (hollow where the machine was busy), its steps circled. The points are
    two artists, filled and hollow, whatever the number of commits: an artist per point took a chart of 2000
    commits ten seconds to draw."""
    ys = [p.median_ms for p in s.points]
    ax.plot(xs, ys, label=label, color=style["color"],
            linestyle=palette.thread_linestyle(1 if s.on_gpu else s.threads), linewidth=1.6, zorder=3)
    for busy in (False, True):
        at = [(x, y) for x, y, p in zip(xs, ys, s.points) if bool(p.busy) == busy]
        if at:
            ax.plot([x for x, _ in at], [y for _, y in at], linestyle="none", marker=style["marker"], markersize=5,
                    color=style["color"], markerfacecolor="white" if busy else style["color"], zorder=4)
    for x, p in zip(xs, s.points):
        if p.step:
            ax.plot([x], [p.median_ms], marker="o", markersize=13, fillstyle="none", color=STEP_COLORS[p.step],
                    markeredgewidth=2, zorder=5)
            ax.annotate(f"{100 * p.change:+.0f} %", (x, p.median_ms), textcoords="offset points",
                        xytext=(7, 7), fontsize=8, color=STEP_COLORS[p.step])


def group_chart(key, series_list, order, path):
    """Forward time of one backend at one image count on one platform over commits, a line per variant."""
    platform_label, backend, images = key
    pos, shown = _positions(series_list, order)
    fig, ax = plt.subplots(figsize=(9, 4.2))
    for s in sorted(series_list, key=lambda s: (s.variant, s.threads)):
        xs = [pos[p.commit] for p in s.points]
        _draw(ax, xs, s, palette.style(f"{s.backend}:{s.variant}"), s.line_name)
    _commit_axis(ax, shown)
    values = [p.median_ms for s in series_list for p in s.points]
    if max(values) > 20 * min(values):  # a naive variant beside a fast one: linear would flatten the fast
        ax.set_yscale("log")
        ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1, 2, 5)))
        ax.yaxis.set_major_formatter(FuncFormatter(plain_number))
        ax.yaxis.set_minor_formatter(NullFormatter())
        ax.set_ylabel("forward time per pass, ms\n(median; log scale, lower is faster)")
    else:
        ax.set_ylabel("forward time per pass, ms\n(median; lower is faster)")
        ax.set_ylim(bottom=0)
    peer = " (a peer: drawn, never a verdict)" if any(s.peer for s in series_list) else ""
    ax.set_title(f"{backend} at {images} images on {platform_label}{peer}\n"
                 "circled: a step beyond the noise; hollow: measured on a busy machine", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.02, 0.5), frameon=False)
    return save(fig, path)


def overview_chart(machine, series_list, order, path):
    """Every benchmark of one platform over commits (forward ms, log scale), colour per backend:variant,
    dashed where it ran on more than one thread, step changes circled."""
    mine = [s for s in series_list if s.machine == machine]
    pos, shown = _positions(mine, order)
    if len(shown) < 2:  # no series of the machine, or one commit: no history to draw
        return None
    fig, ax = plt.subplots(figsize=(9.5, 4.8))
    for s in sorted(mine, key=lambda s: s.title):
        xs = [pos[p.commit] for p in s.points]
        _draw(ax, xs, s, palette.style(f"{s.backend}:{s.variant}"), s.title)
    _commit_axis(ax, shown)
    ax.set_yscale("log")
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1, 2, 5)))
    ax.yaxis.set_major_formatter(FuncFormatter(plain_number))
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_ylabel("forward time per pass, ms\n(median; log scale, lower is faster)")
    ax.set_title(f"History of every benchmark, {machine}", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.02, 0.5), frameon=False)
    return save(fig, path)
