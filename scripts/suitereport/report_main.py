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
        raise load.ReportError(f"no data for --table {args.table}")
    sys.stdout.write(tables.render(out, args.format))
    return cli.EXIT_OK
