"""scripts/plot: PNG charts of suite reports, one set per machine group."""

from . import analysis, cli, load, safe_io


def main(argv):
    p = cli.report_parser("plot", (
        "PNG charts from suite reports, per machine (report set and host): forward time per backend "
        "(log scale), per-layer stacked shares, speedup over {baseline}, and scaling with image count "
        "and threads where the data has several."))
    p.add_argument("--out", default=str(load.DEFAULT_RESULTS / "charts"), metavar="DIR",
                   help="folder for the PNG files (default: results/charts/)")
    p.add_argument("--images", type=int, metavar="N",
                   help="image count of the one-count charts (default: the count most runs share)")
    args = p.parse_args(argv)
    runs = load.all_runs(load.load_reports(args.paths))
    groups = analysis.group_runs(runs)
    from . import charts, palette  # matplotlib: only once the input is known to be good
    palette.register(runs)
    out = safe_io.make_dir(args.out, "--out folder")  # '', a file, a dangling link: one line, exit 2
    written = 0
    for g, slug in zip(groups, charts.slugs(groups)):
        if args.images and args.images not in g.image_counts():
            print(f"{g.machine.label}: no run with {args.images} images, skipped")
            continue
        for kind, path in charts.draw_group(g, out, slug, args.images):
            print(f"wrote {path}  ({kind}, {g.machine.label})")
            written += 1
    for kind, path in charts.draw_portability(groups, out):
        print(f"wrote {path}  ({kind}, all platforms)")
        written += 1
    if not written:
        raise load.ReportError("no chart drawn: no data for one")
    return cli.EXIT_OK
