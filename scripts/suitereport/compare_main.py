"""scripts/compare: the regression gate. Two reports (or folders) in, per-benchmark deltas out.

A benchmark is backend:variant/images:N/threads:T, always all four parts: its name does not depend on
what else is in the file. Its passes are compared with gate.decide (a Mann-Whitney U test on the
samples, see gate.py), each alone, or with --family all together (Holm: gate.decide_family; the
`p (slower)` column then shows the adjusted p). Exit codes:
  0  no benchmark slower beyond threshold and noise ("noisy" ones are listed, not failures)
  1  at least one SLOWER, or a run of NEW failed validation or has no forward time
  2  bad input: a missing file, not JSON, a wrong schema_version, no runs, no benchmark in common
     (a gate that compared nothing does not say OK), BASE and NEW from different platforms (without
     --across-platforms), every benchmark in common refused for a busy machine
Not judged, shown: vendor peers ("peer, not gated"), and benchmarks left without a run of a quiet
machine on a side ("refused: busy machine", unless --include-busy); see gate.busy_reason.
"""

import csv
import re
import sys

from . import cli, gate, load, tables
from .analysis import backend_ranks, fmt_ms


def parse_threshold(text):
    m = re.fullmatch(r"\s*\+?(\d+(?:\.\d*)?|\.\d+)\s*(%?)\s*", text or "")
    if not m:
        raise load.ReportError(f"--threshold '{text}': expected a percentage such as 10% or 2.5%")
    return float(m.group(1)) / 100.0


def benchmark_name(run):
    """The identity of a benchmark: the same run has the same name whatever else the report holds."""
    return f"{run.backend}:{run.variant}/images:{run.images}/threads:{run.threads}"


def benchmarks(runs, side):
    """{name: [runs]}: every run of each benchmark on one side (gate.decide_runs picks what to test)."""
    by_name = {}
    for r in runs:
        by_name.setdefault(benchmark_name(r), []).append(r)
    for name, found in by_name.items():
        if 1 < len(found) < gate.MIN_RUNS:
            print(f"note: {side}: {len(found)} runs of {name} (fewer than {gate.MIN_RUNS} to test the runs "
                  "against each other); the passes of the newest are compared", file=sys.stderr)
    return by_name


def main(argv):
    p = cli.Parser(prog="compare", description=(
        "Compares the forward median of each benchmark (backend:variant/images:N) of two reports or "
        "folders of reports. Exit 0: none slower than the threshold; 1: some slower, or a NEW run "
        "failed validation; 2: bad input."))
    p.add_argument("base", metavar="BASE", help="report file or folder: the reference (e.g. main's)")
    p.add_argument("new", metavar="NEW", help="report file or folder: the candidate")
    cli.add_step_options(p, "fail when NEW's forward median is more than this much above BASE's (default: 10%%)")
    p.add_argument("--format", choices=("md", "csv"), default="md", help="output format (default: md)")
    p.add_argument("--across-platforms", action="store_true",
                   help="compare even when BASE and NEW ran on different platforms (CPU model and cores, "
                        "or GPU): the deltas are then the hardware's as much as the code's")
    p.add_argument("--family", action="store_true",
                   help="test the benchmarks together (Holm's adjustment of their p-values), so that many "
                        "benchmarks are not as many chances of a step by chance; it needs more samples "
                        "(8 v 8 runs pass up to 128 benchmarks, 5 v 5 at most 2)")
    p.add_argument("--include-busy", action="store_true",
                   help="gate runs whose report recorded a busy machine too (default: left out, and a "
                        "benchmark left without runs on a side is refused, not judged)")
    args = p.parse_args(argv)
    threshold = parse_threshold(args.threshold)
    if not 0 < args.alpha < 1:
        raise load.ReportError(f"--alpha {args.alpha:g}: expected a probability between 0 and 1")
    base_reports = load.load_reports([args.base])
    new_reports = load.load_reports([args.new])
    peer_runs = {id(r) for rep in base_reports + new_reports for r in rep.runs if gate.is_peer_run(r, rep.meta)}
    base_runs, new_runs = load.all_runs(base_reports), load.all_runs(new_reports)
    ranks = backend_ranks(base_runs + new_runs)
    base = benchmarks(base_runs, "BASE")
    new = benchmarks(new_runs, "NEW")
    # A NEW run the suite wrote without a forward time failed: it fails the gate (load left it out).
    untimed = {e.name: str(e) for rep in new_reports for e in rep.untimed}
    hosts = ({r.machine.host for rs in base.values() for r in rs}, {r.machine.host for rs in new.values() for r in rs})
    if hosts[0] != hosts[1]:
        print(f"note: BASE and NEW come from different hosts ({', '.join(sorted(hosts[0]))} vs "
              f"{', '.join(sorted(hosts[1]))}): the deltas include the machines' difference", file=sys.stderr)
    common = [n for n in base if n in new]
    if not common:
        raise load.ReportError(f"{args.base} and {args.new} have no benchmark in common")
    _check_platforms(base, new, common, args.across_platforms)
    busy = {} if args.include_busy else _leave_out_busy(base, new)

    rows, slower, invalid, noisy, refused, peers, decided = [], [], [], [], [], [], []
    for name in sorted(set(base) | set(new) | set(untimed), key=lambda nm: _sort_key(nm, ranks)):
        bs, ns = base.get(name), new.get(name)
        peer = any(id(r) in peer_runs for r in (bs or []) + (ns or []))
        if name in untimed and not peer:
            invalid.append(name)
            one = gate.newest(bs).forward_ms if bs else None
            rows.append((name, one, None, None, None, None, "–", "FAILED (no forward time)"))
            continue
        if bs is None or ns is None:
            one = gate.newest(bs or ns).forward_ms
            rows.append((name, bs and one, ns and one, None, None, None, "–",
                         "only in NEW" if bs is None else "only in BASE"))
            continue
        if name in busy:
            refused.append(name)
            b_ms, n_ms = (gate.newest(rs).forward_ms for rs in (bs, ns))
            rows.append((name, b_ms, n_ms, n_ms / b_ms - 1.0, None, None, "–",
                         f"refused: busy machine ({busy[name]})"))
            continue
        d = gate.decide_runs(bs, ns, threshold, args.alpha)
        b_ms, n_ms = (gate.median([r.forward_ms for r in rs]) if d.basis.endswith("runs") else
                      gate.newest(rs).forward_ms for rs in (bs, ns))
        decided.append((len(rows), name, b_ms, n_ms, d, peer, ns))
        rows.append(None)  # its row once every benchmark is decided (--family decides them together)
    gated_decisions = [d for *_, d, peer, _ in decided if not peer]
    family = gate.decide_family(gated_decisions, args.alpha) if args.family else 1
    blind = [d for d in gated_decisions
             if args.family and d.p_slower is not None and family * gate.least_p(*d.sizes) >= args.alpha]
    if blind:
        print(f"note: --family over {family} benchmarks: at {blind[0].basis} no step can pass (p at least "
              f"{gate.least_p(*blind[0].sizes):.2g} each); take more runs a side (8 v 8 pass up to 128)",
              file=sys.stderr)
    for i, name, b_ms, n_ms, d, peer, ns in decided:
        status = d.status
        if peer:
            peers.append(name)
            status = f"{status} (peer, not gated)"
        elif any(r.validation and not r.passed for r in ns):
            status = "INVALID (validation failed)"
            invalid.append(name)
        elif d.fails:
            slower.append(name)
        elif status == "noisy":
            noisy.append(name)
        rows[i] = (name, b_ms, n_ms, d.ratio - 1.0, d.ci, d.p_slower, d.basis, status)
    judged = [n for n in common if n not in refused]
    if not judged:
        raise load.ReportError(f"every benchmark in common was refused: busy machine ({'; '.join(busy.values())}); "
                               "nothing compared (--include-busy to gate them anyway)")

    if args.format == "csv":
        # csv.writer: a status such as "ok (peer, not gated)" or a variant name may hold a comma
        w = csv.writer(sys.stdout, lineterminator="\n")
        w.writerow(["benchmark", "base_forward_ms", "new_forward_ms", "delta", "ratio_ci_low", "ratio_ci_high",
                    "p_slower", "tested", "status"])
        for name, bm, nm, dl, ci, p_slow, basis, st in rows:
            w.writerow([tables.csv_text(name), _raw(bm), _raw(nm), _raw(dl), _raw(ci and ci[0]), _raw(ci and ci[1]),
                        _raw(p_slow), basis, st])
    else:
        print("| benchmark | base ms | new ms | delta (medians) | 95 % interval | p (slower) | tested | status |")
        print("|---|---:|---:|---:|---:|---:|---|---|")
        for name, bm, nm, dl, ci, p_slow, basis, st in rows:
            interval = f"{_pct(ci[0] - 1)} … {_pct(ci[1] - 1)}" if ci else "–"
            name = tables.md_cell(name)
            print(f"| {name} | {fmt_ms(bm)} | {fmt_ms(nm)} | {_pct(dl)} | {interval} | {_p(p_slow)} | {basis} | {st} |")
        print()
    gated = [n for n in judged if n not in peers]
    verdict = (f"{len(slower)} of {len(gated)} benchmark(s) slower than +{100 * threshold:g} % beyond noise "
               f"(Mann-Whitney U, p < {args.alpha:g}" + (f", Holm over {family} benchmarks" if args.family else "")
               + ")" + (f": {', '.join(slower)}" if slower else ""))
    if noisy:
        verdict += f"; {len(noisy)} noisy (beyond the threshold but not significant): {', '.join(noisy)}"
    if invalid:
        verdict += f"; {len(invalid)} failed (validation, or no forward time) in NEW: {', '.join(invalid)}"
    if refused:
        verdict += (f"; {len(refused)} refused, busy machine (--include-busy to gate them): "
                    + ", ".join(f"{n} ({busy[n]})" for n in refused))
    if peers:
        verdict += f"; {len(peers)} peer(s), shown, not gated: {', '.join(peers)}"
    only = len(base) - len(common), len(new) - len(common)
    if any(only):
        verdict += f"; not compared: {only[0]} only in BASE, {only[1]} only in NEW"
    print(("FAIL: " if slower or invalid else "OK: ") + verdict, file=sys.stderr if args.format == "csv" else
          sys.stdout)
    return cli.EXIT_REGRESSION if slower or invalid else cli.EXIT_OK


def _check_platforms(base, new, common, across):
    """BASE and NEW must have run each benchmark in common on the same platform (identity.py: the CPU
    model and cores, or the GPU): a faster or slower machine is no regression of the code."""
    differ = [n for n in common if {r.platform.id for r in base[n]} != {r.platform.id for r in new[n]}]
    if not differ:
        return

    def labels(side):
        return " + ".join(sorted({r.platform.label for n in differ for r in side[n]}))

    what = f"BASE ran on {labels(base)}, NEW on {labels(new)}"
    if not across:
        raise load.ReportError(f"{what} ({len(differ)} benchmark(s), e.g. {differ[0]}): no regression verdict "
                               "across platforms (--across-platforms to compare anyway)")
    print(f"note: {what}: compared across platforms, the deltas include the hardware's difference",
          file=sys.stderr)


def _leave_out_busy(base, new):
    """Drops the runs whose report recorded a busy machine (gate.busy_reason) from both sides, with a
    note; returns {benchmark: why} of those left without a run on a side (refused, not judged)."""
    refused = {}
    for side, by_name in (("BASE", base), ("NEW", new)):
        for name, runs in by_name.items():
            whys = [gate.busy_reason(r) for r in runs]
            kept = [r for r, why in zip(runs, whys) if not why]
            dropped = [why for why in whys if why]
            if not dropped:
                continue
            if kept:
                print(f"note: {side}: {len(dropped)} of {len(runs)} runs of {name} left out: busy machine "
                      f"({dropped[0]})", file=sys.stderr)
                by_name[name] = kept
            else:
                refused.setdefault(name, f"{side}: {dropped[0]}")
    return refused


def _sort_key(name, ranks):
    m = re.match(r"(([^:]*):[^/]*)/images:(\d+)/threads:(\d+)", name)
    if not m:
        return (len(ranks) + 1, name, 0, 0)
    return (ranks.get(m.group(2), len(ranks)), m.group(1), int(m.group(3)), int(m.group(4)))


def _pct(d):
    return "–" if d is None else f"{100 * d:+.1f} %"


def _p(p):
    return "–" if p is None else f"{p:.2g}"


def _raw(v):
    return "" if v is None else repr(float(v))
