"""scripts/make-results-readme --readme: the measured figures of the top-level README.md, as blocks
generated from committed reports between marker lines:

    <!-- begin generated: NAME (scripts/make-results-readme --readme; do not edit) -->
    ...
    <!-- end generated: NAME -->

BLOCKS below is the one place that says which reports feed which block (paths and globs under the
results folder, as `scripts/report` would be given them) and which table each block is, with the blocks of
one backend's own comparisons in its manifest ("readme_blocks", as a Block's fields); the block itself
repeats its sources in its first line, so that a reader sees where the figures come from.
Text outside the blocks is kept byte for byte. Every block of BLOCKS must be in the file once, and
every marker must be well formed and known: anything else is one error line and nothing is written.
"""

import json
import re
from dataclasses import dataclass
from pathlib import Path

from . import analysis, load, manifests, portability, safe_io, scaling, tables

MARKER_TOOL = "scripts/make-results-readme --readme; do not edit"


@dataclass(frozen=True)
class Block:
    reports: tuple  # paths or globs under the results folder (sorted matches; a folder is scanned)
    table: str  # "matrix": tables.matrix_table of one machine; "portability", "scaling": scripts/report --<it>
    versus: tuple = ()  # matrix: the speedup columns (a vendor peer's backend, a backend:variant, or VENDORS)


# In a Block's versus: the vendor libraries (manifests' "vendor") that have runs in the block's reports.
VENDORS = "vendors"

BLOCKS = {
    # Each verdict platform's own table, from the verdict's runs (one session a platform, every model of the
    # platform and its peer): the figures the verdict ranks, every variant shown.
    "cpu-epyc-2core": Block(("cpu/epyc-2core/verdict/cpu-suite-*.json", "cpu/epyc-2core/verdict/pytorch-cpu.json"),
                            "matrix", ("pytorch",)),
    "cpu-xeon-2core": Block(("cpu/xeon-2core/verdict/cpu-suite-*.json", "cpu/xeon-2core/verdict/pytorch-cpu.json"),
                            "matrix", ("pytorch",)),
    "cpu-xeon-16core": Block(("cpu/xeon-16core/cpu-suite-*.json", "cpu/xeon-16core/pytorch-cpu.json"), "matrix",
                             ("pytorch",)),
    "gpu-h200": Block(("h200/verdict/gpu-suite.json", "h200/verdict/pytorch-cuda.json"), "matrix",
                      (VENDORS, "pytorch")),
    "gpu-h100": Block(("h100/verdict/gpu-suite.json", "h100/verdict/pytorch-cuda.json"), "matrix",
                      (VENDORS, "pytorch")),
    # The fastest variant on a million images (a run of its own, beside the H200 verdict of its commit).
    "gpu-h200-images": Block(("h200/winograd-mma/million/million.json",), "matrix"),
    # Thread scaling of the Winograd variants on the 16-core Xeon.
    "xeon-16core-threads": Block(("cpu/xeon-16core/threads-*.json",), "matrix"),
    # MPI ranks of the MPI-built Winograd variant on the 16-core Xeon, and 1 rank x 16 threads.
    "xeon-16core-mpi": Block(("cpu/xeon-16core/mpi",), "scaling"),
    # The verdict over five platforms (README: "The portability verdict").
    "verdict": Block(("cpu/epyc-2core/verdict", "cpu/xeon-2core/verdict", "cpu/xeon-16core", "h100/verdict",
                      "h200/verdict"), "portability"),
}

# The backends' own blocks (manifest "readme_blocks": {"name": {"reports": [...], "table": "matrix",
# "versus": [...]}}), e.g. one backend measured beside others in a binary of its own.
BLOCKS.update({name: Block(tuple(b.get("reports", ())), b.get("table", "matrix"), tuple(b.get("versus", ())))
               for m in manifests.manifests().values() for name, b in (m.get("readme_blocks") or {}).items()})

_NAME = r"[a-z0-9][a-z0-9-]*"
BEGIN = re.compile(rf"<!-- begin generated: ({_NAME}) \({re.escape(MARKER_TOOL)}\) -->")
END = re.compile(rf"<!-- end generated: ({_NAME}) -->")
_LOOSE = re.compile(r"<!--.*\b(begin|end)\s+generated\b", re.IGNORECASE)  # meant as a marker


def begin_marker(name):
    return f"<!-- begin generated: {name} ({MARKER_TOOL}) -->"


def end_marker(name):
    return f"<!-- end generated: {name} -->"


def parse(text, where):
    """The file as [text, (name, old content), text, ...]: strings outside the blocks (marker lines
    included, with their line ends) and a tuple per block. Raises ReportError on a malformed, unknown,
    repeated, unclosed or missing marker."""
    parts, outside, inside, name, start = [], [], [], None, 0
    seen = set()
    # Lines end at \n only (splitlines would also break at \f or U+2028, and miscount the lines).
    for no, line in enumerate(re.findall(r"[^\n]*\n|[^\n]+\Z", text), 1):
        bare = line.rstrip("\r\n")
        begin, end = BEGIN.fullmatch(bare), END.fullmatch(bare)
        if not (begin or end):
            if _LOOSE.search(bare):
                raise load.ReportError(f"{where}:{no}: malformed marker {bare.strip()!r} (expected "
                                       f"'{begin_marker('NAME')}' or '{end_marker('NAME')}')")
            (inside if name else outside).append(line)
            continue
        if begin:
            if name:
                raise load.ReportError(f"{where}:{no}: block '{begin.group(1)}' begins inside block '{name}' "
                                       f"(line {start}), which has no end marker before it")
            name, start = begin.group(1), no
            if name not in BLOCKS:
                raise load.ReportError(f"{where}:{no}: unknown block '{name}' (known: {', '.join(BLOCKS)})")
            if name in seen:
                raise load.ReportError(f"{where}:{no}: block '{name}' is in the file twice")
            seen.add(name)
            outside.append(line)
            parts.append("".join(outside))
            outside, inside = [], []
        else:
            if end.group(1) != name:
                what = f"inside block '{name}' (line {start})" if name else "without its begin marker"
                raise load.ReportError(f"{where}:{no}: end marker of block '{end.group(1)}' {what}")
            parts.append((name, "".join(inside)))
            outside, name = [line], None
    if name:
        raise load.ReportError(f"{where}:{start}: block '{name}' has no end marker")
    missing = [b for b in BLOCKS if b not in seen]
    if missing:
        raise load.ReportError(f"{where}: no marker of block(s) {', '.join(missing)} (a block is "
                               f"'{begin_marker('NAME')}' ... '{end_marker('NAME')}' on lines of their own)")
    parts.append("".join(outside))
    return parts


def _report_paths(block, results_dir):
    paths = []
    for pattern in block.reports:
        found = sorted(results_dir.glob(pattern))
        if not found:
            raise load.ReportError(f"{load.shown(results_dir / pattern)}: no such report or folder")
        paths += found
    return paths


# results/verdict/: the verdict block's reports at every image count that two platforms and two models share.
VERDICT_DIR = "verdict"
VERDICT_FILE = re.compile(r"^(verdict-[0-9]+\.(md|json)|portability-[a-z]+-[a-z]+-[0-9]+\.png|portability\.html)$")


def verdict_outputs(results_dir, out_dir):
    """results/verdict/'s files, written into out_dir: verdict-N.md (what `scripts/report --portability` prints)
    and verdict-N.json (its --format json) at every such image count, and the charts and page of --out at the
    count most platforms share, the README block's. Their names; None where results_dir lacks the block's
    reports (a folder of other reports has no verdict to write)."""
    try:
        paths = _report_paths(BLOCKS["verdict"], Path(results_dir))
    except load.ReportError:  # no such report or folder
        return None
    from . import portability_view  # matplotlib
    runs = load.all_runs(load.load_reports(paths))
    names = []
    for v in portability.verdicts(runs):
        for ext, text in (("md", portability_view.markdown(v)),
                          ("json", json.dumps(portability.to_json(v), indent=1, allow_nan=False) + "\n")):
            safe_io.write_text(Path(out_dir) / f"verdict-{v.images}.{ext}", text)
            names.append(f"verdict-{v.images}.{ext}")
    names += [p.name for p in portability_view.write_outputs(portability.verdict(runs), Path(out_dir))]
    assert all(VERDICT_FILE.match(n) for n in names), names
    return names


def _sources(block, reports, results_dir):
    """The block's first line: the reports it was made from, their commits and dates."""
    shown = ", ".join(f"`{results_dir.name}/{p}`" for p in block.reports)
    commits = sorted({str(r.meta.get("git_commit", "") or "")[:7] or "unknown" for r in reports})
    dates = sorted(str(r.meta.get("date_utc", "") or "")[:10] for r in reports)
    dates = [d for d in dates if d]
    when = (dates[0] if dates[0] == dates[-1] else f"{dates[0]} to {dates[-1]}") if dates else "no date"
    count = f"{len(reports)} report" + ("s" if len(reports) != 1 else "")
    return (f"From {shown} ({count}; code of commit(s) {', '.join(commits)}; "
            f"measured {when}).")


def _versus(versus, group):
    """The speedup columns: VENDORS becomes the vendor libraries with runs in the group (suite order)."""
    present = {r.backend for r in group.runs}
    vendors = [n for n, m in manifests.manifests().items() if m.get("vendor") is True and n in present]
    return tuple(v for item in versus for v in (vendors if item == VENDORS else [item]))


def render(name, results_dir):
    """The text between the markers of block `name`, from the reports BLOCKS names."""
    block = BLOCKS[name]
    reports = load.load_reports(_report_paths(block, results_dir))
    runs = load.all_runs(reports)
    head = _sources(block, reports, results_dir)
    if block.table == "portability":
        from . import portability_view  # matplotlib: only for this block
        body = portability_view.markdown(portability.verdict(runs))
    elif block.table == "scaling":
        ts = scaling.scaling_tables(runs)
        if len(ts) != 1:  # the block shows no table headings: two machines' tables would read as one's
            raise load.ReportError(f"block '{name}': its reports come from {len(ts)} machines "
                                   f"({'; '.join(t.machine for t in ts)}), a table takes one")
        body = tables.to_markdown(ts[0], heading=None)
    else:
        groups = analysis.group_runs(runs)
        if len(groups) != 1:
            raise load.ReportError(f"block '{name}': its reports come from {len(groups)} machines "
                                   f"({'; '.join(g.machine.label for g in groups)}), a table takes one")
        versus = _versus(block.versus, groups[0])
        try:
            body = tables.to_markdown(tables.matrix_table(groups[0], versus), heading=None)
        except load.ReportError as e:
            raise load.ReportError(f"block '{name}': {e}") from None
    return f"{head}\n\n{body}"


def regenerate(text, where, results_dir):
    """(new text, names of the blocks that changed). Every block is made before anything is returned."""
    parts = parse(text, where)
    out, changed = [], []
    for part in parts:
        if isinstance(part, str):
            out.append(part)
            continue
        name, old = part
        new = render(name, results_dir)
        if new != old:
            changed.append(name)
        out.append(new)
    return "".join(out), changed
