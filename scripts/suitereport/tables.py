"""The tables of scripts/report and results/README.md, and their Markdown, CSV and LaTeX forms.

Cells hold raw values; each column's kind says how Markdown and LaTeX show them (CSV keeps full
precision and no units, for spreadsheets and pandas).
"""

import csv
import html
import io
import math
import re
from dataclasses import dataclass, field

from . import analysis, portability
from .analysis import fmt_ms, fmt_rate, fmt_speedup
from .load import LAYER_KINDS, ReportError


@dataclass
class Column:
    name: str
    kind: str = "text"  # text | int | ms | rate | speedup | pct | acc
    csv_name: str = ""  # ASCII header for CSV (default: the name)

    @property
    def right(self):
        return self.kind != "text"


@dataclass
class Table:
    title: str
    columns: list
    rows: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    machine: str = ""  # the machine group's label (a column in CSV)
    key: str = ""  # the name of the chart that goes with it, where one does (cascade-<kind>-<images>)


def _pretty(value, kind):
    if value is None or value == "":
        return "–"
    if isinstance(value, float) and not math.isfinite(value):  # a NaN peak gave "nan %"
        return "–"
    if kind == "ms":
        return fmt_ms(value)
    if kind == "rate":
        return fmt_rate(value)
    if kind == "speedup":
        return fmt_speedup(value)
    if kind == "pct":
        return f"{100 * value:.1f} %"
    if kind == "acc":
        return f"{100 * value:.2f} %"
    return str(value)


def _raw(value):
    if value is None:
        return ""
    if isinstance(value, (int, float)):
        return repr(value)
    return csv_text(str(value))


def csv_text(s):
    """A name from a report as a CSV cell: a spreadsheet runs a cell starting with = + - @ (or a tab or CR
    before one) as a formula, so such text gets a leading apostrophe (OWASP's advice); numbers stay numbers."""
    return "'" + s if s[:1] in ("=", "+", "-", "@", "\t", "\r") else s


# ---- the tables


SPEEDUP_NOTE = ("speedup vs X = X's forward time / this run's (above 1: faster than X), same machine and "
                "image count; a vendor peer on a CPU with the same thread count (– where there is no such run)")


def _validation_cell(r):
    v = r.validation
    if not v:
        return "not validated"
    diff = r.max_abs_prob_diff
    diff = f"{diff:.1e}" if diff is not None else "no max diff"
    if r.passed:
        return f"passed ({diff})"
    return f"FAILED ({diff}, {v.get('top1_mismatches', '?')} top-1)"


def _device_cell(r):
    """The device, and for a run of several MPI ranks how many (its threads are per rank, its images/s all
    ranks')."""
    return f"{r.device} ({r.ranks} MPI ranks, {r.mpi['mode']})" if r.ranks > 1 else r.device


def runs_table(group, peers=None):
    """Per backend:variant, image count and threads: time, rate, speedups, accuracy, validation.
    peers: the vendor peers that get a column (default: those with a run in the group)."""
    peers = analysis.peers_present(group.runs) if peers is None else peers
    cols = ([Column("backend:variant"), Column("device"), Column("images", "int"), Column("threads", "int"),
             Column("batch", "int"), Column("forward ms (median)", "ms", "forward_ms_median"),
             Column("images/s", "rate", "images_per_s"), Column("GFLOP/s", "rate", "gflop_per_s"),
             Column(f"speedup vs {analysis.BASELINE_NAME}", "speedup", "speedup_vs_serial_naive")] +
            [Column(f"speedup vs {analysis.VENDOR_PEERS[p]}", "speedup", f"speedup_vs_{p}") for p in peers] +
            [Column("accuracy", "acc"), Column("validation")])
    t = Table(title=f"Forward pass — {group.machine.label}", columns=cols, machine=group.machine.label)
    for r in group.runs:
        t.rows.append([r.name, _device_cell(r), r.images, r.threads, r.batch, r.forward_ms, r.images_per_s, r.gflop_per_s]
                      + analysis.speedups(group, r, peers) + [r.accuracy, _validation_cell(r)])
    t.notes.append("forward ms: median of the timed forward passes; " + SPEEDUP_NOTE)
    t.notes += ["speedups at " + n for n in analysis.baseline_notes(group)]
    if len(group.hosts) > 1:
        t.notes.append(f"these reports come from several hosts ({', '.join(group.hosts)}): one report folder "
                       "should hold one machine's reports, or the speedups mix machines")
    if group.superseded:
        t.notes.append(f"{group.superseded} older run(s) of the same configuration left out (the newest report wins)")
    return t


def _config(r):
    """A column of matrix_table: the image count, and on a CPU the threads (a GPU run's are the device's)."""
    return (r.images, None if r.on_gpu else r.threads)


def matrix_table(group, versus=()):
    """The compact form of runs_table: a row per backend:variant, and per configuration (image count, and
    threads on a CPU) its forward median and its speedup vs each of `versus` (a vendor peer's backend, or
    a backend:variant) as peer_run picks it. Two runs for one cell (other batch sizes) are an error: the
    table would have to hide one."""
    configs = sorted({_config(r) for r in group.runs}, key=lambda c: (c[0], c[1] or 0))
    cells, names = {}, []
    for r in group.runs:
        if r.name not in names:
            names.append(r.name)
        key = (r.name, _config(r))
        if key in cells:
            raise ReportError(f"{r.name}: two runs with {r.images} images and {r.threads} thread(s) in "
                              f"{cells[key].source} and {r.source} (batch {cells[key].batch} and {r.batch}); "
                              "name reports with one run each")
        cells[key] = r
    cols = [Column("backend:variant")]
    for n, threads in configs:
        where = f"{n} img" + (f", {threads} thr" if threads is not None else "")
        cols.append(Column(f"{where}: ms", "ms", f"forward_ms_{n}_{threads or 'gpu'}"))
        cols += [Column(f"{where}: vs {analysis.VENDOR_PEERS.get(p, p)}", "speedup",
                        f"speedup_vs_{p}_{n}_{threads or 'gpu'}") for p in versus]
    t = Table(title=f"Forward pass — {group.machine.label}", columns=cols, machine=group.machine.label)
    for name in names:
        row = [name]
        for c in configs:
            r = cells.get((name, c))
            row.append(r.forward_ms if r else None)
            row += [analysis.speedup(r, analysis.peer_run(group, p, r)) if r else None for p in versus]
        t.rows.append(row)
    # A speedup column without a value (no peer run at that configuration, e.g. PyTorch on 1 thread) says
    # nothing: left out.
    keep = [i for i, c in enumerate(cols) if c.kind != "speedup" or any(row[i] is not None for row in t.rows)]
    t.columns, t.rows = [cols[i] for i in keep], [[row[i] for i in keep] for row in t.rows]
    t.notes.append("ms: median of the timed forward passes" + ("; " + SPEEDUP_NOTE if versus else ""))
    return t


def layers_table(group):
    """The thesis' per-layer breakdown: conv/relu/pool/fc/softmax totals of each layer-wise run."""
    runs = [r for r in group.runs if r.layers_ms]
    if not runs:
        return None
    kinds = list(LAYER_KINDS)
    if any("other" in r.layer_totals() for r in runs):
        kinds.append("other")
    cols = ([Column("backend:variant"), Column("images", "int"), Column("threads", "int")] +
            [Column(f"{k} ms", "ms", f"{k}_ms") for k in kinds] +
            [Column("Σ layers ms", "ms", "layers_sum_ms"), Column("forward ms", "ms", "forward_ms"),
             Column("conv share", "pct", "conv_share")])
    t = Table(title=f"Per-layer breakdown — {group.machine.label}", columns=cols, machine=group.machine.label)
    for r in runs:
        tot = r.layer_totals()
        total = sum(tot.values())
        t.rows.append([r.name, r.images, r.threads] + [tot.get(k, 0.0) for k in kinds] +
                      [total, r.forward_ms, tot.get("conv", 0.0) / total if total > 0 else None])
    t.notes.append("layer times: mean per forward pass over the timed passes, summed per layer kind "
                   "(conv1+conv2+conv3, ...); only variants that run layer by layer report them")
    return t


PHASES = ("load", "setup", "h2d", "forward", "d2h", "total", "end_to_end", "h2d_pinned")


def end_to_end_over_floor(phases):
    """end_to_end / the slower of the forward pass and the images' pinned copy: how far the overlapped pass is
    from what computing or the host link allows it (1.0 at best); None without both times."""
    e2e, forward, copy = (phases.get(k) for k in ("end_to_end", "forward", "h2d_pinned"))
    if e2e is None or forward is None or copy is None or max(forward, copy) <= 0:
        return None
    return e2e / max(forward, copy)


def phases_table(group):
    """Phases of the runs that copy to and from a device (h2d/d2h present); None when there are none."""
    runs = [r for r in group.runs if "h2d" in r.phases_ms or "d2h" in r.phases_ms or "end_to_end" in r.phases_ms]
    if not runs:
        return None
    cols = ([Column("backend:variant"), Column("images", "int")] +
            [Column(f"{p} ms", "ms", f"{p}_ms") for p in PHASES] +
            [Column("end_to_end / floor", "speedup", "end_to_end_over_floor")])
    t = Table(title=f"Phases — {group.machine.label}", columns=cols, machine=group.machine.label)
    for r in runs:
        t.rows.append([r.name, r.images] + [r.phases_ms.get(p) for p in PHASES] + [end_to_end_over_floor(r.phases_ms)])
    t.notes.append("total = setup + h2d + forward + d2h; end_to_end: copies overlapping compute, where the "
                   "backend offers it; h2d_pinned: the same images' copy alone from its pinned buffer")
    t.notes.append("floor = the slower of forward and h2d_pinned: an overlapped pass can at best hide the faster "
                   "of the two behind the other (1.00×)")
    return t


def portability_tables(groups):
    """The portability verdict (portability.py) at every image count with at least two platforms, each kind
    of efficiency: per model its efficiency on each platform (named by its hardware) and its PP over all of
    them and over those it supports."""
    runs = [r for g in groups for r in g.runs]
    out = []
    for v in portability.verdicts(runs):
        n = v.images
        for kind in portability.KINDS:
            cols = ([Column("model")] + [Column(p.platform.label, "pct", f"eff_{p.id}") for p in v.platforms]
                    + [Column("supported", "text", "supported"), Column(f"PP ({kind})", "pct", "pp"),
                       Column("PP (supported)", "pct", "pp_supported")])
            t = Table(title=f"Performance portability, {kind} efficiency, {n} images", columns=cols,
                      machine="all platforms", key=f"portability-{kind}-{n}")
            for m in v.models:
                t.rows.append([m] + [v.efficiency(m, i, kind) for i in v.ids()]
                              + [f"{len(v.supported(m, None, kind))} of {len(v.platforms)}", v.pp(m, None, kind),
                                 v.pp_supported(m, None, kind)])
            t.notes.append("a platform is its hardware (CPU model and cores, or the GPU); a model's entry is its "
                           "best validated run with the platform's full resources (scripts/report --portability "
                           "shows which variant, threads and device)")
            t.notes.append("application efficiency: the platform's fastest entry / this model's" if kind ==
                           "application" else "architectural efficiency: executed FLOP/s / the measured peak of "
                           "the unit the run used (– where not recorded or not measured)")
            t.notes.append("PP: harmonic mean of the efficiencies (Pennycook et al.), 0 where a platform is "
                           "unsupported; PP (supported): over the platforms the model runs on")
            out.append(t)
    return out


TABLES = ("runs", "layers", "phases", "portability")


def build_tables(groups, which=TABLES):
    peers = analysis.peers_present([r for g in groups for r in g.runs])  # one set of columns for all
    out = []
    for g in groups:
        for name in which:
            if name == "portability":
                continue
            t = {"runs": lambda g: runs_table(g, peers), "layers": layers_table, "phases": phases_table}[name](g)
            if t is not None:
                out.append(t)
    if "portability" in which:
        out += portability_tables(groups)
    return out


# ---- renderers


# What Markdown reads as markup in running text: a backslash, code spans, emphasis, strike-through, link and
# image brackets (an underscore inside a word is never emphasis, so `winograd_mma` stays as it is).
_MD_MARKUP = re.compile(r"[\\`*~\[\]]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")


def md_cell(s):
    """Text for one Markdown table cell, heading line or image's alt text, shown as the text it is: a `|` would
    split the cell, a newline the table, raw HTML in a host, backend or variant name would be rendered (or run)
    by the viewer, and `![x](http://...)` would be fetched as a remote image."""
    s = html.escape(" ".join(str(s).splitlines()), quote=False)
    return _MD_MARKUP.sub(lambda m: "\\" + m.group(0), s).replace("|", "\\|")


def md_plain(cell):
    """The text of an md_cell again, for a page that puts it into HTML itself (html.escape stays)."""
    return re.sub(r"\\([\\`*~\[\]_|])", r"\1", cell)


_md_escape = md_cell


def to_markdown(table, heading="###"):
    lines = [f"{heading} {md_cell(table.title)}", ""] if heading is not None else []
    lines.append("| " + " | ".join(_md_escape(c.name) for c in table.columns) + " |")
    lines.append("|" + "|".join("---:" if c.right else "---" for c in table.columns) + "|")
    for row in table.rows:
        lines.append("| " + " | ".join(_md_escape(_pretty(v, c.kind)) for v, c in zip(row, table.columns)) + " |")
    if table.notes:
        lines.append("")
        lines += [f"- {md_cell(n)}" for n in table.notes]
    return "\n".join(lines) + "\n"


def to_csv(tables):
    """All rows of tables with the same columns in one CSV; a machine column first."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    last_header = None
    for t in tables:
        header = ["machine"] + [c.csv_name or c.name for c in t.columns]
        if header != last_header:
            if last_header is not None:
                buf.write("\n")
            w.writerow(header)
            last_header = header
        for row in t.rows:
            w.writerow([csv_text(t.machine)] + [_raw(v) for v in row])
    return buf.getvalue()


_LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                  "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
                  "×": r"$\times$", "Σ": r"$\Sigma$", "–": "--", "—": "---", "±": r"$\pm$",
                  "<": r"\textless{}", ">": r"\textgreater{}", "|": r"\textbar{}"}


def latex_escape(s):
    # A blank line ends a paragraph inside a tabular (a LaTeX error): line breaks become spaces.
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in " ".join(str(s).splitlines()))


def _latex_row(cells):
    """One tabular row. `{}` before a first cell starting with `[` or `*`: after `\\\\` or `\\midrule` it would be
    read as their optional argument (a LaTeX error, or a cell gone)."""
    text = " & ".join(latex_escape(c) for c in cells)
    return ("{}" if text.lstrip().startswith(("[", "*")) else "") + text + r" \\"


def to_latex(table):
    spec = "".join("r" if c.right else "l" for c in table.columns)
    out = [r"\begin{table}[htbp]", r"\centering", r"\small", rf"\caption{{{latex_escape(table.title)}}}",
           r"\resizebox{\linewidth}{!}{%", rf"\begin{{tabular}}{{{spec}}}", r"\toprule",
           _latex_row(c.name for c in table.columns), r"\midrule"]
    for row in table.rows:
        out.append(_latex_row(_pretty(v, c.kind) for v, c in zip(row, table.columns)))
    out += [r"\bottomrule", r"\end{tabular}}"]
    for n in table.notes:
        out.append(r"\par\smallskip{\footnotesize " + latex_escape(n) + "}")
    out.append(r"\end{table}")
    return "\n".join(out) + "\n"


def render(tables, fmt):
    if fmt == "csv":
        return to_csv(tables)
    if fmt == "latex":
        return ("% needs \\usepackage{booktabs} and \\usepackage{graphicx} in the preamble\n\n" +
                "\n".join(to_latex(t) for t in tables))
    return "\n".join(to_markdown(t) for t in tables)
