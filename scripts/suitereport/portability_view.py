"""The portability verdict (portability.py) as people read it: Markdown tables, the cascade plot and the PP
bar chart (PNG), and one HTML page with both. Every name in them comes from reports, i.e. from anyone:
Markdown cells are escaped, the page is built with html.escape, never as markup from the data."""

import html
import io

from . import manifests, safe_io
from .portability import KINDS
from .tables import md_cell as cell, md_plain

UNIT_NAMES = {"fp32_fma": "FP32 FMA", "fp16_tensor": "FP16 tensor", "tf32_tensor": "TF32 tensor"}
PLATFORM_COLORS = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7")




def pct(x):
    return "–" if x is None else f"{100 * x:.1f} %"


def _short(v, pid):
    """Column headings: the platforms' labels, numbered so that the tables stay narrow."""
    return f"P{[p.id for p in v.platforms].index(pid) + 1}"


def _what_ran(e):
    r = e.run
    where = f"{r.threads} thr" if r.platform.kind == "cpu" else r.device
    if manifests.manifests().get(r.backend, {}).get("kind") == "portable" and r.platform.kind == "cpu":  # its space
        where += f", {r.device}"
    return f"{r.variant} ({where})"


def _peak_sources(v, pid):
    p = next(p for p in v.platforms if p.id == pid)
    return "; ".join(f"{UNIT_NAMES.get(u, u)} {g:,.0f} GFLOP/s from {src}" for u, (g, src) in sorted(p.peaks.items()))


def markdown(v):
    """The verdict's tables: platforms, application efficiency with PP, what ran, architectural efficiency."""
    if not v.platforms:
        return "No platform has a validated full-resource run at this image count.\n"
    n = len(v.platforms)
    cpus, gpus = v.ids("cpu"), v.ids("gpu")
    lines = [f"### The portability verdict, {v.images} images, {n} platform(s)", "",
             "| | platform | kind | commit(s) of its entries | fastest | forward ms | peaks, GFLOP/s |",
             "|---|---|---|---|---|---:|---|"]
    for p in v.platforms:
        es = [e for (m, i), e in v.entries.items() if i == p.id]
        f = v.fastest(p.id)
        commits = p.commits(es)
        mark = "" if len(commits) == 1 else " (differ)"
        peaks = ", ".join(f"{UNIT_NAMES.get(u, u)} {g:,.0f}" for u, (g, _) in sorted(p.peaks.items())) or "–"
        lines.append(f"| {_short(v, p.id)} | {cell(p.platform.label)} | {p.platform.kind.upper()} | "
                     f"{cell(', '.join(commits))}{mark} | {cell(f.run.name)} | {f.run.forward_ms:.4g} | {cell(peaks)} |")
    head = " | ".join(_short(v, i) for i in v.ids())
    lines += ["", f"| model | {head} | supported | PP (all {n}) | PP (supported) | PP CPUs | PP GPUs |",
              "|---|" + "---:|" * (n + 5)]
    for m in v.models:
        effs = " | ".join(pct(v.efficiency(m, i)) for i in v.ids())
        sub = [pct(v.pp(m, ids)) if ids else "–" for ids in (cpus, gpus)]
        lines.append(f"| {cell(m)} | {effs} | {len(v.supported(m))} of {n} | {pct(v.pp(m))} | "
                     f"{pct(v.pp_supported(m))} | {sub[0]} | {sub[1]} |")
    lines += ["", f"| model | {head} |", "|---|" + "---|" * n]
    for m in v.models:
        lines.append(f"| {cell(m)} | " + " | ".join(cell(_what_ran(v.entry(m, i))) if v.entry(m, i) else "–"
                                                  for i in v.ids()) + " |")
    lines += ["", f"| model (architectural) | {head} | supported | PP (all {n}) | PP (supported) |",
              "|---|" + "---:|" * (n + 3)]
    for m in v.models:
        cells = []
        for i in v.ids():
            e = v.entry(m, i)
            a = e.architectural if e else None
            units = " + ".join(UNIT_NAMES.get(u, u) for u, _ in e.run.arith_parts) if e else ""
            cells.append(f"{pct(a)} {units}".strip() if a is not None else "–")
        lines.append(f"| {cell(m)} | {' | '.join(cells)} | {len(v.supported(m, None, 'architectural'))} of {n} | "
                     f"{pct(v.pp(m, None, 'architectural'))} | {pct(v.pp_supported(m, None, 'architectural'))} |")
    left = "; ".join(f"{k}: {c}" for k, c in sorted(v.left_out.items()))
    lines += ["",
              "- application efficiency: the platform's fastest entry / this model's entry; a model's entry is "
              "its best validated run with the platform's full resources (every core of a CPU, the GPU); "
              "the second table says which variant, threads and device that was",
              "- PP: the harmonic mean of the efficiencies (Pennycook et al.); strict over all platforms (0 where "
              "the model has no entry on one), and over the platforms it supports, the CPUs, the GPUs",
              "- architectural efficiency: the FLOP the entry executes per second / the platform's measured peak "
              "of the unit it runs on (Winograd executes fewer FLOP than the direct convolution; 3xFP16 three "
              "tensor-core products per useful one; an entry on two units adds each unit's share of its own "
              "peak); – where the report predates that record or no peak was measured"]
    above = sorted({i for (m, i), e in v.entries.items() if e.architectural is not None and e.architectural > 1})
    if above:  # faster than the peak: the peak was measured low (a busy machine), not the entry too fast
        lines.append("- above 100 %: faster than the measured peak of " + ", ".join(
            f"{_short(v, i)} ({cell(_peak_sources(v, i))})" for i in above) + ": that measurement is too low "
            "(a busy machine?); measure the peak again (scripts/verdict-bench.sh keeps the higher of two)")
    if left:
        lines.append(f"- not entries: {cell(left)}")
    return "\n".join(lines) + "\n"


# ---- charts


def _platform_colors(v):
    return {p.id: PLATFORM_COLORS[k % len(PLATFORM_COLORS)] for k, p in enumerate(v.platforms)}


def cascade_png(v, kind="application"):
    """Sewall et al.'s cascade plot, the way Intel's p3-analysis-library draws it: per model, its
    efficiencies from the best platform to the worst (markers) and the PP over the first k of them (line),
    which stops where a platform is unsupported; under the axis, which platform is k-th for each model."""
    from matplotlib.patches import Rectangle  # matplotlib only for charts: the tables need none

    from . import palette
    from .matplotlib_setup import plt
    models = v.models
    n = len(v.platforms)
    colors = _platform_colors(v)
    fig = plt.figure(figsize=(9.5, 5.2 + 0.22 * len(models)))
    grid = fig.add_gridspec(2, 2, height_ratios=(4, 0.35 * len(models) + 0.4), width_ratios=(5, 1.6),
                            hspace=0.12, wspace=0.05)
    ax, boxes, legend_ax = fig.add_subplot(grid[0, 0]), fig.add_subplot(grid[1, 0]), fig.add_subplot(grid[:, 1])
    for row, m in enumerate(models):
        steps = v.cascade(m, kind)
        color, marker = palette.backend_color(m)
        xs = [k + 1 for k, (_, e, _) in enumerate(steps) if e > 0]
        ax.plot(xs, [100 * steps[x - 1][1] for x in xs], linestyle="none", marker=marker, color=color, alpha=0.55)
        ax.plot(xs, [100 * steps[x - 1][2] for x in xs], color=color, marker=marker,
                label=f"{m}: PP {100 * v.pp(m, None, kind):.0f} %")
        for k, (pid, e, _) in enumerate(steps):
            face = colors[pid] if e > 0 else "white"
            boxes.add_patch(Rectangle((k + 0.6, row + 0.1), 0.8, 0.8, facecolor=face, edgecolor=colors[pid],
                                      hatch=None if e > 0 else "///"))
    ax.set_xlim(0.5, n + 0.5)
    ax.set_ylim(0, 105)
    ax.set_xticks(range(1, n + 1))
    ax.set_xticklabels([])
    ax.set_ylabel(f"{kind} efficiency / PP over the first k, %")
    ax.grid(alpha=0.3)
    ax.set_title(f"Performance portability cascade, {kind} efficiency, {v.images} images", fontsize=11)
    boxes.set_xlim(0.5, n + 0.5)
    boxes.set_ylim(len(models), 0)
    boxes.set_yticks([r + 0.5 for r in range(len(models))])
    boxes.set_yticklabels(models, fontsize=8)
    boxes.set_xticks(range(1, n + 1))
    boxes.set_xlabel("k: platforms, each model's own order (most efficient first; hatched: not supported)")
    boxes.tick_params(length=0)
    for s in boxes.spines.values():
        s.set_visible(False)
    legend_ax.axis("off")
    handles, labels = ax.get_legend_handles_labels()
    plats = [Rectangle((0, 0), 1, 1, facecolor=colors[p.id]) for p in v.platforms]
    first = legend_ax.legend(handles, labels, loc="upper left", fontsize=8, frameon=False, title="models")
    legend_ax.add_artist(first)
    legend_ax.legend(plats, [p.platform.label for p in v.platforms], loc="lower left", fontsize=8, frameon=False,
                     title="platforms")
    return _png(fig)


def pp_bars_png(v, kind="application"):
    """PP per model: strict over every platform, and over the platforms it supports (k of N)."""
    from . import palette
    from .matplotlib_setup import plt
    models = v.models
    n = len(v.platforms)
    fig, ax = plt.subplots(figsize=(8.5, 0.9 + 0.42 * len(models)))
    ys = range(len(models))
    strict = [100 * v.pp(m, None, kind) for m in models]
    supported = [100 * (v.pp_supported(m, None, kind) or 0) for m in models]
    ax.barh([y + 0.2 for y in ys], supported, height=0.38, color="#bbbbbb", label="PP over the platforms it supports")
    ax.barh([y - 0.2 for y in ys], strict, height=0.38,
            color=[palette.backend_color(m)[0] for m in models], label=f"PP over all {n} platforms")
    for y, m, s in zip(ys, models, supported):
        ax.annotate(f"{len(v.supported(m, None, kind))} of {n}", (s, y + 0.2), xytext=(3, -3),
                    textcoords="offset points", fontsize=7)
    ax.set_yticks(list(ys))
    ax.set_yticklabels(models)
    ax.invert_yaxis()
    ax.set_xlim(0, 110)
    ax.set_xlabel(f"performance portability ({kind} efficiency), %")
    ax.set_title(f"Performance portability, {v.images} images", fontsize=11)
    ax.legend(fontsize=8, loc="lower right")
    ax.grid(axis="x", alpha=0.3)
    return _png(fig)


def _png(fig):
    from .matplotlib_setup import plt
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)
    return buf.getvalue()


# ---- the page


def page(v, images):
    """One self-contained HTML page: the tables (built from the data as text, escaped) and the charts."""
    md = markdown(v).splitlines()
    body, table = [], []

    def flush():
        if not table:
            return
        rows = [[md_plain(c) for c in r.strip().strip("|").split(" | ")] for r in table if not set(r) <= set("|-: ")]
        body.append("<table>" + "".join(
            "<tr>" + "".join(f"<{'th' if k == 0 else 'td'}>{c}</{'th' if k == 0 else 'td'}>" for c in row) + "</tr>"
            for k, row in enumerate(rows)) + "</table>")
        table.clear()

    for line in md:
        if line.startswith("|"):
            table.append(line.replace("\\|", "&#124;"))
            continue
        flush()
        if line.startswith("### "):
            body.append(f"<h2>{md_plain(line[4:])}</h2>")
        elif line.startswith("- "):
            body.append(f"<p class=note>{md_plain(line[2:])}</p>")
    flush()
    imgs = "".join(f'<p><img src="{html.escape(name)}" alt="{html.escape(alt)}"></p>' for name, alt in images)
    # The Markdown cells are already HTML-escaped (md_cell); headings and notes are this module's own text.
    return ("<!doctype html><html><head><meta charset=utf-8><title>Portability verdict</title><style>"
            "body{font-family:sans-serif;margin:2em;max-width:80em}table{border-collapse:collapse;margin:1em 0}"
            "td,th{border:1px solid #ccc;padding:.25em .5em;text-align:right}td:first-child{text-align:left}"
            ".note{color:#444;font-size:.9em}img{max-width:100%}</style></head><body>"
            f"<h1>Performance portability</h1>{''.join(body)}{imgs}</body></html>\n")


def write_outputs(v, out_dir):
    """cascade and PP bar PNGs for both kinds of efficiency, and portability.html, into out_dir; the
    paths written."""
    written, images = [], []
    for kind in KINDS:
        if not any(v.supported(m, None, kind) for m in v.models):
            continue
        for what, draw in (("cascade", cascade_png), ("pp", pp_bars_png)):
            name = f"portability-{what}-{kind}-{v.images}.png"
            safe_io.write_bytes(out_dir / name, draw(v, kind))
            written.append(out_dir / name)
            images.append((name, f"{what}, {kind} efficiency"))
    safe_io.write_text(out_dir / "portability.html", page(v, images))
    written.append(out_dir / "portability.html")
    return written
