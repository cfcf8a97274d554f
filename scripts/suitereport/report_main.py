"""scripts/report: tables of suite reports in Markdown, CSV or LaTeX."""

import sys

from . import analysis, cli, load, tables


def main(argv):
    p = cli.Parser(prog="report", description=(
        "Tables from suite reports: per backend:variant and image count the forward time, images/s, "
        "speedups over serial:naive, cuDNN and PyTorch (same machine, same image count), accuracy and "
        "validation; the per-layer breakdown; the phases of device runs."))
    cli.add_report_paths(p)
    p.add_argument("--format", choices=("md", "csv", "latex"), default="md", help="output format (default: md)")
    p.add_argument("--table", choices=tables.TABLES + ("all",), default="all",
                   help="which tables (default: all)")
    p.add_argument("--images", type=int, action="append", metavar="N",
                   help="only runs of this image count (repeatable)")
    args = p.parse_args(argv)
    runs = load.all_runs(load.load_reports(args.paths))
    if args.images:
        runs = [r for r in runs if r.images in args.images]
        if not runs:
            raise load.ReportError(f"no run with --images {', '.join(map(str, args.images))}")
    groups = analysis.group_runs(runs)
    which = tables.TABLES if args.table == "all" else (args.table,)
    out = tables.build_tables(groups, which)
    if not out:
        raise load.ReportError(f"no data for --table {args.table}" + _why_no_portability(groups, which))
    sys.stdout.write(tables.render(out, args.format))
    return cli.EXIT_OK


def _why_no_portability(groups, which):
    """Why the portability table is empty: it needs two platforms with validated runs at a common image
    count ("no data" alone left the user to guess)."""
    if "portability" not in which:
        return ""
    from . import portability
    plats = portability.platforms(groups)
    usable = ", ".join(p.name for p in plats) or "none"
    if len(plats) < 2:
        unusable = [g.machine.label for g in groups if g.machine.set_name not in {p.name for p in plats}
                    and g.machine.host not in {p.name for p in plats}]
        return (f": it needs validated runs on two platforms or more, found {len(plats)} ({usable})"
                + (f"; without a validated run: {', '.join(unusable)}" if unusable else ""))
    counts = "; ".join(f"{p.name}: {', '.join(map(str, sorted({r.images for r in p.runs})))}" for p in plats)
    return f": the platforms have no image count in common ({counts})"
