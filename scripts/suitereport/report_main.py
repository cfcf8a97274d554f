"""scripts/report: tables of suite reports in Markdown, CSV or LaTeX."""

import json
import sys
from pathlib import Path

from . import analysis, cli, load, portability, portability_view, scaling, tables


def main(argv):
    p = cli.report_parser("report", (
        "Tables from suite reports: per backend:variant and image count the forward time, images/s, "
        "speedups over {baseline}, the vendor peers and PyTorch (same machine, same image count), accuracy "
        "and validation; the per-layer breakdown; the phases of device runs."))
    p.add_argument("--format", choices=("md", "csv", "latex", "json"), default="md",
                   help="output format (default: md; json: with --portability only)")
    p.add_argument("--table", choices=tables.TABLES + ("all",), default="all",
                   help="which tables (default: all)")
    p.add_argument("--images", type=int, action="append", metavar="N",
                   help="only runs of this image count (repeatable)")
    p.add_argument("--portability", action="store_true",
                   help="the portability verdict: per platform (its hardware: CPU model and cores, or GPU) each "
                        "model's best validated full-resource run, application and architectural efficiency, "
                        "Pennycook's PP over all platforms, over the supported ones, the CPUs and the GPUs")
    p.add_argument("--platforms", metavar="ID,...",
                   help="with --portability: the platform set H (ids as the verdict prints them; default: all)")
    p.add_argument("--scaling", action="store_true",
                   help="runs under mpirun: ranks against images/s of all ranks, speedup and efficiency against "
                        "1 rank, load imbalance (with --out: scaling.png)")
    p.add_argument("--out", metavar="DIR", type=Path,
                   help="with --portability: also write the cascade and PP charts (PNG) and portability.html; "
                        "with --scaling: scaling.png")
    args = p.parse_args(argv)
    runs = load.all_runs(load.load_reports(args.paths))
    if args.portability and args.scaling:
        raise load.ReportError("--portability and --scaling are two reports: one at a time")
    if args.portability:
        return _portability(args, runs)
    if args.scaling:
        return _scaling(args, runs)
    if args.format == "json" or args.out or args.platforms:
        raise load.ReportError("--format json, --out and --platforms go with --portability")
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


def _portability(args, runs):
    if args.images and len(args.images) > 1:
        raise load.ReportError("--portability takes one --images count")
    if args.format in ("csv", "latex"):
        raise load.ReportError("--portability prints md or json")
    counts = portability.image_counts(runs)
    images = args.images[0] if args.images else (counts[0] if counts else None)
    if images not in counts:
        raise load.ReportError(f"no validated full-resource run with {images} images" if images else
                               "no validated full-resource run in these reports: no platform to judge")
    ids = None
    if args.platforms:
        ids = [i.strip() for i in args.platforms.split(",") if i.strip()]
        known = {r.platform.id for r in runs}
        unknown = [i for i in ids if i not in known]
        if unknown:
            raise load.ReportError(f"--platforms: unknown {', '.join(unknown)} (known: {', '.join(sorted(known))})")
    v = portability.verdict(runs, images, ids)
    if args.out:
        _make_out_dir(args.out)
        for path in portability_view.write_outputs(v, args.out):
            print(f"wrote {path}", file=sys.stderr)
    if args.format == "json":
        sys.stdout.write(json.dumps(portability.to_json(v), indent=1, allow_nan=False) + "\n")
    else:
        sys.stdout.write(portability_view.markdown(v))
    return cli.EXIT_OK


def _make_out_dir(out):
    from . import matplotlib_setup  # noqa: F401  (what draws the charts: without it, no folder is made)
    if out.exists() and not out.is_dir():
        raise load.ReportError(f"--out {out}: exists and is not a folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise load.ReportError(f"--out {out}: cannot create ({e.strerror})") from None


def _scaling(args, runs):
    if args.format == "json" or args.platforms or args.table != "all":
        raise load.ReportError("--scaling prints md, csv or latex; --platforms and --table do not apply")
    if args.images:
        runs = [r for r in runs if r.images in args.images]
    out = scaling.scaling_tables(runs)
    if args.out:
        _make_out_dir(args.out)
        print(f"wrote {scaling.scaling_chart(runs, args.out / 'scaling.png')}", file=sys.stderr)
    sys.stdout.write(tables.render(out, args.format))
    return cli.EXIT_OK


def _why_no_portability(groups, which):
    """Why the portability table is empty: it needs two platforms with validated full-resource runs at one
    image count ("no data" alone left the user to guess)."""
    if "portability" not in which:
        return ""
    runs = [r for g in groups for r in g.runs]
    counts = portability.image_counts(runs)
    if not counts:
        return ": no validated full-resource run (every core of a CPU, or a GPU) in these reports"
    best = portability.verdict(runs, counts[0])
    found = ", ".join(p.platform.label for p in best.platforms)
    return (f": it needs validated full-resource runs on two platforms or more at one image count; "
            f"at most {len(best.platforms)} ({found}) at {counts[0]} images")
