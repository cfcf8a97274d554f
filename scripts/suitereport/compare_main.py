"""scripts/compare: the regression gate. Two reports (or folders) in, per-benchmark deltas out.

Benchmarks are named as in `suite --format gbench`: backend:variant/images:N, with /threads:T added
where a name occurs with several thread counts. The metric is the forward median. Exit codes:
  0  no benchmark slower than the threshold
  1  at least one slower than the threshold, or a run of NEW failed validation
  2  bad input: a missing file, not JSON, a wrong schema_version, no runs, no benchmark in common
"""

import re
import sys

from . import cli, load
from .analysis import backend_order, fmt_ms


def parse_threshold(text):
    m = re.fullmatch(r"\s*\+?(\d+(?:\.\d*)?|\.\d+)\s*(%?)\s*", text or "")
    if not m:
        raise load.ReportError(f"--threshold '{text}': expected a percentage such as 10% or 2.5%")
    return float(m.group(1)) / 100.0


def benchmarks(runs, side):
    """{name: run}; of several runs with one name (several reports), the newest; a note says so."""
    by_key = {}
    for i, r in enumerate(runs):
        k = (r.backend, r.variant, r.images, r.threads)
        by_key.setdefault(k, []).append((r.date, i, r))
    threads_of = {}
    for (b, v, n, t) in by_key:
        threads_of.setdefault((b, v, n), set()).add(t)
    out = {}
    for (b, v, n, t), found in by_key.items():
        name = f"{b}:{v}/images:{n}" + (f"/threads:{t}" if len(threads_of[(b, v, n)]) > 1 else "")
        if len(found) > 1:
            print(f"note: {side}: {len(found)} runs of {name}; the newest is compared", file=sys.stderr)
        out[name] = max(found, key=lambda x: (x[0], x[1]))[2]
    return out


def main(argv):
    p = cli.Parser(prog="compare", description=(
        "Compares the forward median of each benchmark (backend:variant/images:N) of two reports or "
        "folders of reports. Exit 0: none slower than the threshold; 1: some slower, or a NEW run "
        "failed validation; 2: bad input."))
    p.add_argument("base", metavar="BASE", help="report file or folder: the reference (e.g. main's)")
    p.add_argument("new", metavar="NEW", help="report file or folder: the candidate")
    p.add_argument("--threshold", default="10%", metavar="PCT",
                   help="fail when NEW's forward median is more than this much above BASE's (default: 10%%)")
    p.add_argument("--format", choices=("md", "csv"), default="md", help="output format (default: md)")
    args = p.parse_args(argv)
    threshold = parse_threshold(args.threshold)
    base = benchmarks(load.all_runs(load.load_reports([args.base])), "BASE")
    new = benchmarks(load.all_runs(load.load_reports([args.new])), "NEW")
    hosts = ({r.machine.host for r in base.values()}, {r.machine.host for r in new.values()})
    if hosts[0] != hosts[1]:
        print(f"note: BASE and NEW come from different hosts ({', '.join(sorted(hosts[0]))} vs "
              f"{', '.join(sorted(hosts[1]))}): the deltas include the machines' difference", file=sys.stderr)
    common = [n for n in base if n in new]
    if not common:
        raise load.ReportError(f"{args.base} and {args.new} have no benchmark in common")

    rows, slower, invalid = [], [], []
    for name in sorted(set(base) | set(new), key=_sort_key):
        b, n = base.get(name), new.get(name)
        if b is None or n is None:
            rows.append((name, b and b.forward_ms, n and n.forward_ms, None, "only in NEW" if b is None else
                         "only in BASE"))
            continue
        delta = n.forward_ms / b.forward_ms - 1.0
        if n.validation and not n.passed:
            status = "INVALID (validation failed)"
            invalid.append(name)
        elif delta > threshold:
            status = "SLOWER"
            slower.append(name)
        elif delta < -threshold:
            status = "faster"
        else:
            status = "ok"
        rows.append((name, b.forward_ms, n.forward_ms, delta, status))

    if args.format == "csv":
        print("benchmark,base_forward_ms,new_forward_ms,delta,status")
        for name, bm, nm, d, st in rows:
            print(",".join([name, _raw(bm), _raw(nm), _raw(d), st]))
    else:
        print("| benchmark | base ms | new ms | delta | status |")
        print("|---|---:|---:|---:|---|")
        for name, bm, nm, d, st in rows:
            print(f"| {name} | {fmt_ms(bm)} | {fmt_ms(nm)} | {_pct(d)} | {st} |")
        print()
    verdict = (f"{len(slower)} of {len(common)} benchmark(s) slower than +{100 * threshold:g} %"
               + (f": {', '.join(slower)}" if slower else ""))
    if invalid:
        verdict += f"; {len(invalid)} failed validation: {', '.join(invalid)}"
    print(("FAIL: " if slower or invalid else "OK: ") + verdict, file=sys.stderr if args.format == "csv" else
          sys.stdout)
    return cli.EXIT_REGRESSION if slower or invalid else cli.EXIT_OK


def _sort_key(name):
    m = re.match(r"(([^:]*):.*)/images:(\d+)(.*)", name)
    return (backend_order(m.group(2)), m.group(1), int(m.group(3)), m.group(4)) if m else (99, name, 0, "")


def _pct(d):
    return "–" if d is None else f"{100 * d:+.1f} %"


def _raw(v):
    return "" if v is None else repr(float(v))
