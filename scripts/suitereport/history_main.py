"""scripts/history: the store of reports over commits and machines, its charts and its dashboard.

  history add REPORT|FOLDER... --store PATH [--machine NAME]   append (validated, idempotent, locked)
  history plot --store PATH --out DIR                          PNG per benchmark + overview per machine
  history html --store PATH --out FILE                         the one-file dashboard
Exit codes: 0 ok; 2 bad input (a bad report, a bad store line, a missing store).
"""

import os
from pathlib import Path

from . import cli, gate, history, load
from .compare_main import parse_threshold

DEFAULT_STORE = load.DEFAULT_RESULTS / "history" / "store.jsonl"


def cmd_add(args):
    entries = []
    for p in map(Path, args.reports):
        if p.is_dir():  # in a folder, JSON that is no suite report (fma_peak.json) is skipped, noted
            files = [f for f in load.find_report_files(p) if load.read_report(f, strict=False) is not None]
        else:
            files = [p]
        entries += [history.entry_of(f, args.machine) for f in files]
    if not entries:
        raise load.ReportError(f"{', '.join(args.reports)}: no suite reports found")
    for e, fresh in history.add(args.store, entries):
        what = "added" if fresh else "already in the store"
        print(f"{what}: {e['source']} ({e['machine']}, commit {e['git_commit'][:10]}, {len(e['runs'])} runs)")
    return cli.EXIT_OK


def _series(args):
    entries = history.read_store(args.store)
    if not entries:
        raise load.ReportError(f"{args.store}: the store is empty")
    from . import palette
    palette.register(_runs_for_palette(entries))
    commits = history.commit_order(entries)
    return history.series(entries, args.threshold, args.alpha), commits


class _PaletteRun:
    def __init__(self, source, backend, variant):
        self.source, self.backend, self.variant = source, backend, variant


def _runs_for_palette(entries):
    return [_PaletteRun(e["source"], r["backend"], r["variant"]) for e in entries for r in e["runs"]]


def cmd_plot(args):
    series_list, commits = _series(args)
    from . import history_charts
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    by_bench = {}
    for s in series_list:
        by_bench.setdefault(s.benchmark, []).append(s)
    for bench, ss in sorted(by_bench.items()):
        path = history_charts.benchmark_chart(bench, ss, commits, out / f"{history_charts.slug(bench)}.png")
        print(f"wrote {load.shown(path)}")
    for machine in sorted({s.machine for s in series_list}):
        path = history_charts.overview_chart(machine, series_list, commits,
                                             out / f"overview-{history_charts.slug(machine)}.png")
        if path:
            print(f"wrote {load.shown(path)}")
    return cli.EXIT_OK


def cmd_html(args):
    series_list, commits = _series(args)
    from . import dashboard
    text = dashboard.render(series_list, commits, Path(args.store).name, args.threshold)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, out)
    print(f"wrote {load.shown(out)} ({len(series_list)} series over {len(commits)} commits)")
    if args.screenshot:
        from . import browser
        shot = Path(args.screenshot).resolve()
        try:
            r = browser.run(out.resolve().as_uri(), "--hide-scrollbars", "--window-size=1300,1000",
                            f"--screenshot={shot}")
        except (FileNotFoundError, OSError) as e:
            raise load.ReportError(f"--screenshot: {e}") from None
        if r.returncode != 0 or not shot.is_file():
            raise load.ReportError(f"--screenshot: chromium failed (exit {r.returncode})")
        print(f"wrote {load.shown(shot)} (chromium screenshot)")
    return cli.EXIT_OK


def main(argv):
    p = cli.Parser(prog="history", description=(
        "A store of suite reports over commits and machines (JSON lines, append-only, idempotent, "
        "safe for concurrent appends), charts per benchmark over commits with the step changes marked, "
        "and a one-file HTML dashboard."))
    sub = p.add_subparsers(dest="command", required=True, parser_class=cli.Parser)
    a = sub.add_parser("add", help="append reports (files or folders) to the store")
    a.add_argument("reports", nargs="+", metavar="REPORT|FOLDER")
    a.add_argument("--machine", metavar="NAME",
                   help="the machine of these reports (default: their folder under results/, else the host)")
    a.set_defaults(func=cmd_add)
    for name, func, help_out in (("plot", cmd_plot, "folder of the PNG files"),
                                 ("html", cmd_html, "the HTML file to write")):
        s = sub.add_parser(name, help=f"{name} the history")
        s.add_argument("--out", required=True, metavar="DIR" if name == "plot" else "FILE", help=help_out)
        s.add_argument("--threshold", default="10%", metavar="PCT",
                       help="a step change is beyond this and beyond the noise (default: 10%%)")
        s.add_argument("--alpha", type=float, default=gate.DEFAULT_ALPHA, metavar="P",
                       help="significance level of the step test (default: %(default)s)")
        if name == "html":
            s.add_argument("--screenshot", metavar="PNG",
                           help="also a PNG of the page as headless chromium renders it")
        s.set_defaults(func=func)
    for s in sub.choices.values():
        s.add_argument("--store", default=str(DEFAULT_STORE), metavar="PATH",
                       help="the store, JSON lines (default: results/history/store.jsonl)")
    args = p.parse_args(argv)
    if hasattr(args, "threshold"):
        args.threshold = parse_threshold(args.threshold)
    return args.func(args)
