"""scripts/history: benchmark results over commits, where they stepped, and why.

  history add REPORT|FOLDER... [--store PATH] [--label NAME]   put suite reports into the store
  history add --git-versions PATH...                          ... every version of them git's history holds
  history backfill RANGE|COMMIT... [--every N]                 build and run past commits, store them
  history bisect BENCHMARK GOOD BAD                           find the commit where a benchmark stepped
  history html --out FILE                                     the dashboard (summary + charts), one file
  history steps [--commit REV]                                the steps as text, one line each (CI logs)
  history plot --out DIR                                      the same charts as PNG files
Exit codes: 0 ok; 2 bad input (a bad report, a bad store line, a missing store, a refused path).
"""

import argparse
import hashlib
import shlex
import sys
import tempfile
from pathlib import Path

from . import cli, history, load, safe_io
from .compare_main import parse_threshold

DEFAULT_STORE = load.DEFAULT_RESULTS / "history" / "store.jsonl"
MAX_NAME = 100  # characters of a chart's file name before its hash (file systems stop at 255 bytes)


def _report_files(paths):
    """The report files named or found in folders; every one a regular file of a sane size (a FIFO or
    device among them is refused before anything is read: it would hang or fill memory)."""
    files = []
    for p in map(Path, paths):
        if p.is_dir():
            found = load.find_report_files(p)
            for f in found:
                try:
                    safe_io.check_input(f, "report")
                except safe_io.UnsafePath as e:
                    raise load.ReportError(str(e)) from None
            # in a folder, JSON that is no suite report (fma_peak.json) is skipped, noted
            files += [f for f in found if load.read_report(f, strict=False) is not None]
        else:
            try:
                safe_io.check_input(p, "report")
            except safe_io.UnsafePath as e:
                raise load.ReportError(str(e)) from None
            files.append(p)
    return files


def _git_version_entries(paths, tmp, machine, label):
    """The store entries of every version git's history holds of the reports at `paths` (files or folders
    of the repository the current folder is in), each with its source as commit:path. A version is written
    under tmp at its repository path (so that its folder under results/ names its machine) and read like any
    report; one that is no suite report, or no longer one these tools read, is skipped with a note."""
    from . import git_order
    top = git_order._git(".", "rev-parse", "--show-toplevel").strip()
    if not top:
        raise load.ReportError("--git-versions: the current folder is in no git repository")
    entries = []
    for path in paths:
        commits = git_order._git(".", "log", "--format=%H", "--", path).split()
        if not commits:
            raise load.ReportError(f"{path}: git's history holds no version of it (--git-versions)")
        for c in commits:
            for name in git_order._git(".", "ls-tree", "-r", "--full-name", "--name-only", c, "--", path).splitlines():
                if not name.endswith(".json"):
                    continue
                where = f"{c[:10]}:{name}"
                f = tmp / c / name
                f.parent.mkdir(parents=True, exist_ok=True)
                f.write_bytes(git_order._git(top, "show", f"{c}:{name}", text=False))  # b"": named below
                try:
                    e = history.entry_of(f, machine, label)
                except load.ReportError as err:
                    print(f"note: skipping {where}: {str(err).replace(load.shown(f), '').lstrip(': ')}",
                          file=sys.stderr)
                    continue
                e["source"] = where
                entries.append(e)
    return entries


def cmd_add(args):
    if args.git_versions:
        with tempfile.TemporaryDirectory(prefix="history-versions-") as tmp:
            entries = _git_version_entries(args.reports, Path(tmp), args.machine, args.label or "")
    else:
        files = _report_files(args.reports)
        entries = [history.entry_of(f, args.machine, args.label or "") for f in files]
    if not entries:
        raise load.ReportError(f"{', '.join(args.reports)}: no suite reports found")
    if args.boot_id is not None:
        give_boot(entries, args.boot_id)
    for e, fresh in history.add(args.store, entries):
        what = "added" if fresh else "already in the store"
        print(f"{what}: {e['source']} (commit {e['git_commit'][:10]}, {len(e['runs'])} runs)")
    return cli.EXIT_OK


def give_boot(entries, boot):
    """The boot the reports ran in, where their suite was too old to record it (--boot-id): as a backfill
    gives its runs this boot's. A report that recorded another boot is refused, none is changed."""
    if not history.identity.BOOT_ID_RE.match(boot):
        raise load.ReportError(f"--boot-id {boot!r}: not a boot id (/proc/sys/kernel/random/boot_id)")
    for e in entries:
        if e.get("boot_id", boot) != boot:
            raise load.ReportError(f"{e['source']}: ran in boot {e['boot_id']}, not in --boot-id's {boot}")
    for e in entries:
        e["boot_id"] = boot


def analyse(args):
    entries = history.read_store(args.store)
    if not entries:
        raise load.ReportError(f"{load.shown(args.store)}: the store is empty")
    a = history.analyse(entries, Path(args.store).name, args.threshold, args.alpha, args.include_busy, args.repo)
    from . import palette
    palette.register_series(a.series)
    return a


def file_name(name, taken):
    """A file name for a chart of `name`: readable, at most MAX_NAME characters, and unique: where two
    names would give one file (`a b` and `a-b`), or the name was cut, a hash of the whole name is added."""
    from .history_charts import slug
    base = slug(name) or "chart"
    short = base[:MAX_NAME]
    if short != base or short in taken or short.lower() in {t.lower() for t in taken}:
        short = f"{short}-{hashlib.sha256(name.encode()).hexdigest()[:10]}"
    taken.add(short)
    return short


def cmd_plot(args):
    a = analyse(args)
    from . import history_charts
    out = Path(args.out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise load.ReportError(f"{out}: cannot create the folder: {e.strerror}") from None
    taken = set()
    groups = history_charts.groups(a.series)
    # Names are decided in one sorted pass, so the same store gives the same files.
    for key in sorted(groups):
        platform_label, backend, images = key
        name = file_name(f"{platform_label}-{backend}-images-{images}", taken)
        path = history_charts.group_chart(key, groups[key], a.order, out / f"{name}.png")
        print(f"wrote {load.shown(path)}")
    for machine in sorted({s.machine for s in a.series}):
        name = file_name(f"overview-{machine}", taken)
        path = history_charts.overview_chart(machine, a.series, a.order, out / f"{name}.png")
        if path:
            print(f"wrote {load.shown(path)}")
    return cli.EXIT_OK


def step_line(st, kind):
    """One step as a line of text: what moved, how much, where, between which commits, and its evidence."""
    within = "" if st.boot_ratio is None else f", within that boot {100 * (st.boot_ratio - 1):+.1f} %"
    how = ([st.boot_basis] if st.boot_basis.endswith("runs") else []) + \
        ([f"Holm over {st.boot_family} benchmarks"] if st.boot_family > 1 else [])
    within += f" ({', '.join(how)})" if how else ""
    within += f", built {st.boot_build}" if st.boot_build else ""
    controls = "" if st.drift is None else f", {len(st.controls)} controls {100 * (st.drift - 1):+.1f} %"
    controls += f", undone at {st.undone[:10]}" if st.undone else ""
    return (f"{kind:8} {100 * (st.ratio - 1):+7.1f} %  {st.series.title}  on {st.series.machine}  "
            f"{st.point.base[:10]}..{st.point.commit[:10]}  evidence: {st.evidence or '-'}{within}{controls}")


def cmd_steps(args):
    a = analyse(args)
    at = None
    if args.commit:
        from . import backfill
        at = backfill.resolve(args.repo or history.identity.REPO_ROOT, args.commit)
    rows = ([(st, st.direction) for st in a.steps] + [(st, "machine") for st in a.no_code_change]
            + [(st, "undone") for st in a.undone])
    rows = [(st, kind) for st, kind in rows if at is None or st.point.commit == at]
    for st, kind in rows:
        print(step_line(st, kind))
    if not rows:
        print("no step" + (f" at {at[:10]}" if at else "") + f" beyond {100 * a.threshold:g} % and the noise")
    confirmed = [st for st, kind in rows if kind == "slower" and st.evidence == "one boot"
                 and st.boot_basis.endswith("runs")]
    if args.fail and confirmed:
        print(f"history: {len(confirmed)} benchmark(s) slower" + (f" at {at[:10]}" if at else "") +
              f", confirmed in one boot by {history.gate.MIN_RUNS} or more runs a side", file=sys.stderr)
        return cli.EXIT_REGRESSION
    return cli.EXIT_OK


def cmd_html(args):
    a = analyse(args)
    from . import dashboard
    text = dashboard.render(a)
    out = Path(args.out)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        safe_io.write_text(out, text)
    except (safe_io.UnsafePath, OSError) as e:
        raise load.ReportError(str(e) if isinstance(e, safe_io.UnsafePath) else f"{out}: {e.strerror}") from None
    slower = [s for s in a.steps if s.direction == "slower"]
    unconfirmed = sum(s.evidence == "unconfirmed" for s in slower)
    print(f"wrote {load.shown(out)} ({len(a.series)} series over {len(a.order)} commits, "
          f"{len(slower)} regressions ({unconfirmed} unconfirmed: measured in different boots), "
          f"{len(a.no_code_change)} the machine's, {len(a.undone)} undone by a later commit)")
    if args.screenshot:
        from . import browser
        shot = Path(args.screenshot).resolve()
        try:
            r = browser.run(out.resolve().as_uri(), "--hide-scrollbars", f"--window-size={args.window}",
                            f"--screenshot={shot}")
        except (FileNotFoundError, OSError) as e:
            raise load.ReportError(f"--screenshot: {e}") from None
        if r.returncode != 0 or not shot.is_file():
            raise load.ReportError(f"--screenshot: chromium failed (exit {r.returncode})")
        print(f"wrote {load.shown(shot)} (chromium screenshot)")
    return cli.EXIT_OK


def _lock_workdir(workdir):
    """One backfill or bisect per work folder at a time: two would check out commits under each other."""
    import fcntl
    import os
    Path(workdir).mkdir(parents=True, exist_ok=True)
    fd = os.open(Path(workdir) / ".lock", os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        raise load.ReportError(f"{workdir}: another history backfill or bisect is using it (pick another "
                               "--workdir)") from None
    return fd  # held until the command ends (_release)


def _release(args):
    import os
    if getattr(args, "_lock", None) is not None:
        os.close(args._lock)
        args._lock = None


def _probe(args, backends=None):
    from . import backfill
    args._lock = _lock_workdir(args.workdir)
    repo = Path(args.repo or backfill.REPO_ROOT)
    probe = backfill.Probe(repo=repo, workdir=Path(args.workdir), build=args.build_cmd or "", run=args.run_cmd or "",
                           images=args.images, threads=args.threads, repeat=args.repeat,
                           quiet_wait_s=args.quiet_wait, log=backfill.log_to_stderr)
    if backends:
        probe.backends = tuple(backends)
    return probe


def holding_workdir(command):
    """A command that locks the work folder (_probe) and lets it go however it ends."""
    def run(args):
        try:
            return command(args)
        finally:
            _release(args)
    return run


@holding_workdir
def cmd_backfill(args):
    from . import backfill
    probe = _probe(args, [b for b in args.backends.split(",") if b])
    if args.runs < 1:
        raise load.ReportError(f"--runs {args.runs}: at least 1")
    probe.runs = args.runs
    commits = backfill.commits_of(probe.repo, args.commits, args.every, args.first_parent)
    if not commits:
        raise load.ReportError(f"{' '.join(args.commits)}: no commits")
    print(f"backfill: {len(commits)} commits into {load.shown(args.store)}, worktrees under "
          f"{load.shown(probe.workdir)}", flush=True)
    try:
        counts = backfill.backfill(probe, commits, args.store, args.label or "", log=lambda m: print(m, flush=True),
                                   resume=not args.again, interleave=not args.one_after_another)
    finally:
        if args.remove_worktree:
            backfill.remove_worktrees(probe.repo, probe.workdir)
    print("backfill: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())))
    return cli.EXIT_OK


@holding_workdir
def cmd_bisect(args):
    from . import bisect
    probe = _probe(args)
    found = bisect.bisect(probe, args.benchmark, args.good, args.bad, args.threshold, args.alpha,
                          log=lambda m: print(m, flush=True))
    print(f"first {'slower' if found.ratio > 1 else 'faster'} commit: {found.commit} {found.subject}")
    print(f"step: {found.ratio:.3f}x ({100 * (found.ratio - 1):+.1f} %) against {found.good[:10]}, "
          f"{found.probes} commits built and run")
    if found.untestable:
        print(f"could not be measured (the step may lie there): {' '.join(c[:10] for c in found.untestable)}")
    return cli.EXIT_OK


HELP_ORDER = ("Commits are drawn in git's topological order of this repository (git log --topo-order), not "
              "by report date; a series is one benchmark on one platform (the CPU model and its cores, or "
              "the GPU), never a host name")


def main(argv):
    p = cli.Parser(prog="history", formatter_class=argparse.RawDescriptionHelpFormatter, description=(
        "Benchmark results over commits: a store of suite reports (results/history/store.jsonl, JSON lines, "
        "append-only), where a benchmark got slower or faster beyond its noise, on which commits, and a "
        "dashboard people read.\n\n"
        "A step is a change of a benchmark's median beyond --threshold that a one-sided Mann-Whitney U test "
        "on the timed passes finds significant (p < --alpha) against the last earlier quiet point of the "
        "same benchmark on the same platform. Reports made on a busy machine (the suite records the "
        "runnable processes around each run) are drawn but are never a base or a verdict unless "
        "--include-busy; peers (PyTorch) are drawn and never get a verdict.\n\n" + HELP_ORDER + "."))
    sub = p.add_subparsers(dest="command", required=True, parser_class=cli.Parser)

    a = sub.add_parser("add", help="put suite reports (files, or folders searched for them) into the store",
                       description="Validates each report (load.read_report, an ISO date, finite positive "
                       "times) and appends one line per report not yet in the store (by content hash), under "
                       "a lock and all or nothing.")
    a.add_argument("reports", nargs="+", metavar="REPORT|FOLDER")
    a.add_argument("--label", metavar="NAME",
                   help="a name added to the platform, only to tell apart two machines of the same hardware "
                        "(CI runners, say: `--label ci`); by default the hardware alone names the machine")
    a.add_argument("--machine", metavar="NAME",
                   help="where the report was kept, shown in the store line (default: its folder under "
                        "results/, else its host); not part of the series' identity")
    a.add_argument("--git-versions", action="store_true",
                   help="the paths are reports or folders of this repository: add every version of them that "
                        "git's history holds (each commit that changed one), each stored with commit:path as its "
                        "source; versions no longer readable as suite reports are skipped with a note")
    a.add_argument("--boot-id", metavar="ID",
                   help="the machine boot the reports ran in, for reports of a suite too old to record it (the "
                        "script that ran them read /proc/sys/kernel/random/boot_id), so that they compare like for "
                        "like with that boot's other reports; a report that recorded another boot is refused")
    a.set_defaults(func=cmd_add)

    probe_help = {
        "--workdir": "the git worktree (WORKDIR/src) and build tree (WORKDIR/build) used, re-used from run to "
                     "run (default: build/history-backfill)",
        "--build-cmd": "shell command that builds the commit checked out in {src} (placeholders: {src} {build} "
                       "{commit}); default: CMake with the CPU backends only, target suite, ccache where "
                       "installed",
        "--run-cmd": "shell command that runs the benchmarks and writes a suite report to {out} (placeholders: "
                     "{src} {build} {out} {backends} {images} {threads} {repeat}); default: the built suite",
    }

    def probe_options(s, backends_default=True):
        s.add_argument("--repo", metavar="DIR", help="the repository (default: the one these scripts are in)")
        s.add_argument("--workdir", default=str(load.REPO_ROOT / "build" / "history-backfill"), metavar="DIR",
                       help=probe_help["--workdir"])
        s.add_argument("--build-cmd", metavar="CMD", help=probe_help["--build-cmd"])
        s.add_argument("--run-cmd", metavar="CMD", help=probe_help["--run-cmd"])
        s.add_argument("--images", default="1200", metavar="N", help="image count of the runs (default: 1200)")
        s.add_argument("--threads", type=int, default=2, metavar="T", help="threads of the runs (default: 2)")
        s.add_argument("--repeat", type=int, default=10, metavar="N",
                       help="timed passes per run (default: 10; the step test needs 5 a side)")
        s.add_argument("--quiet-wait", type=float, default=60.0, metavar="S",
                       help="wait up to S seconds for no other runnable process before each run "
                            "(default: 60); a run made on a busy machine anyway is recorded as such")

    from .backfill import DEFAULT_SET
    b = sub.add_parser("backfill", formatter_class=argparse.RawDescriptionHelpFormatter,
                       help="build and run past commits in a separate worktree and store their reports",
                       description="Fills the store with the history: each commit is checked out in a git "
                       "worktree under build/ (never your checkout), built incrementally (one re-used build "
                       "tree, ccache), and runs the benchmark set on the variants that exist at that commit "
                       "(`suite --list`). A commit that does not build, run or validate is stored as such. "
                       "Commits already in the store for this machine are skipped, so an interrupted "
                       "backfill resumes where it stopped.\n\nexamples:\n"
                       "  scripts/history backfill HEAD~40..HEAD\n"
                       "  scripts/history backfill $(git rev-list --max-parents=0 HEAD)..HEAD --every 4\n"
                       "  scripts/history backfill 395da1d 62bff42 --backends MODEL:VARIANT")
    b.add_argument("commits", nargs="+", metavar="RANGE|COMMIT",
                   help="A..B (the commits after A up to B, as git reads it) or single commits")
    b.add_argument("--every", type=int, default=1, metavar="N",
                   help="every N-th commit of the list, counted from the newest (default: every one)")
    b.add_argument("--first-parent", action="store_true",
                   help="follow only the first parent of merges (one point per merged branch)")
    b.add_argument("--backends", default=",".join(DEFAULT_SET), metavar="LIST",
                   help=f"the benchmark set, as suite --backend takes it (default: {','.join(DEFAULT_SET)})")
    b.add_argument("--label", metavar="NAME", help="as for add")
    b.add_argument("--again", action="store_true", help="run commits the store already has, too")
    b.add_argument("--runs", type=int, default=1, metavar="N",
                   help="suite processes per commit, each stored (default: 1). Where both commits of a step "
                        "ran in one boot, from 5 runs a side on (the gate's MIN_RUNS) their per-run medians "
                        "decide rather than their passes: the suite's noise is mostly between processes")
    b.add_argument("--one-after-another", action="store_true",
                   help="with --runs, run a commit's runs together, the commits in turn, all in one worktree. "
                        "By default the commits are built each in a worktree of its own and their runs take turns "
                        "(A B, B A, A B, ...), so that a machine's drift weighs on every commit alike")
    b.add_argument("--remove-worktree", action="store_true", help="remove the worktrees at the end")
    probe_options(b)
    b.set_defaults(func=cmd_backfill)

    c = sub.add_parser("bisect", help="find the commit where one benchmark stepped, building only what is needed",
                       description="Binary search over git's topological order from GOOD to BAD: each probe "
                       "checks a commit out in the worktree, builds it and runs the one benchmark; a probe "
                       "nearer BAD's time than GOOD's is bad. Prints the first bad commit, its subject and "
                       "the size of the step. GOOD and BAD must differ beyond --threshold and the noise.")
    c.add_argument("benchmark", metavar="BENCHMARK",
                   help="backend:variant/images:N/threads:T, as the dashboard names it (GPU runs: no threads)")
    c.add_argument("good", metavar="GOOD", help="a commit before the step")
    c.add_argument("bad", metavar="BAD", help="a commit after it (GOOD must be its ancestor)")
    probe_options(c)
    c.set_defaults(func=cmd_bisect)

    for name, func, what in (("plot", cmd_plot, "the charts as PNG files: one per platform x backend x image "
                              "count, its variants as lines, and one overview per platform"),
                             ("html", cmd_html, "the dashboard: a summary (regressions with their commit "
                              "ranges, latest against previous per machine) above one chart per platform x "
                              "backend x image count, filters for machine and backend; one file, no network"),
                             ("steps", cmd_steps, "the steps as text, one line each: slower / faster / machine "
                              "(the machine's, not the code's), the change, benchmark, platform, the commits "
                              "compared and the evidence (one boot, controls, unconfirmed)")):
        short = {"plot": "draw the history as PNG charts (a chart per machine x backend x image count)",
                 "html": "write the dashboard: regressions with their commit ranges, then the charts",
                 "steps": "print the steps, one line each (all, or those at one commit)"}[name]
        s = sub.add_parser(name, help=short, description=what)
        if name == "plot":
            s.add_argument("--out", required=True, metavar="DIR", help="folder of the PNG files")
        elif name == "steps":
            s.add_argument("--commit", metavar="REV", help="only the steps measured at this commit")
            s.add_argument("--fail", action="store_true",
                           help="exit 1 where a benchmark got slower and both commits ran in one boot, "
                                "5 or more runs a side (backfill --runs): a regression confirmed like for like")
        else:
            s.add_argument("--out", required=True, metavar="FILE", help="the HTML file to write")
            s.add_argument("--screenshot", metavar="PNG",
                           help="also a PNG of the page as headless chromium renders it")
            s.add_argument("--window", default="1400,2400", metavar="W,H",
                           help="the screenshot's window size (default: 1400,2400)")
        s.add_argument("--include-busy", action="store_true",
                       help="let reports made on a busy machine be bases and verdicts of steps")
        s.add_argument("--repo", metavar="DIR",
                       help="the repository whose commit order is used (default: the one these scripts are in)")
        s.set_defaults(func=func)
    for s in (sub.choices["plot"], sub.choices["html"], sub.choices["steps"], c):
        cli.add_step_options(s, "a step is a change beyond this (default: 10%%) and beyond the noise")
    for s in sub.choices.values():
        s.add_argument("--store", default=str(DEFAULT_STORE), metavar="PATH",
                       help="the store, JSON lines (default: results/history/store.jsonl)")
    args = p.parse_args(argv)
    if hasattr(args, "threshold"):
        args.threshold = parse_threshold(args.threshold)
    for key in ("every", "repeat", "threads"):
        if getattr(args, key, 1) < 1:
            p.error(f"--{key} must be at least 1")
    return args.func(args)


def quote(cmd):
    return shlex.quote(cmd)
