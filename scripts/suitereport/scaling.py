"""scripts/report --scaling: runs of the suite under mpirun, ranks against aggregate images/s.

One series per backend:variant, image count, --mpi-mode, threads per rank and machine; speedup and efficiency
against the variant's 1-rank run with the fewest threads. Runs of one rank with several threads (1 rank x 16
threads) are a series of their own, drawn at their core count beside the ranks.
"""

from . import load, tables


def _series_key(r):
    return (r.machine.label if r.machine else "", r.name, r.images, r.mpi["mode"], r.threads)


def series(runs):
    """{key: [run, ...] by ranks}, the fastest run where a rank count was run twice."""
    best = {}
    for r in runs:
        if not r.mpi:
            continue
        k = _series_key(r) + (r.mpi["ranks"],)
        if k not in best or r.mpi["aggregate_images_per_s"] > best[k].mpi["aggregate_images_per_s"]:
            best[k] = r
    out = {}
    for k, r in best.items():
        out.setdefault(k[:-1], []).append(r)
    return {k: sorted(v, key=lambda r: r.mpi["ranks"]) for k, v in sorted(out.items(), key=lambda kv: str(kv[0]))}


def _baseline(runs_of_variant):
    """The 1-rank run with the fewest threads: what each run's speedup and efficiency are against."""
    ones = [r for r in runs_of_variant if r.mpi["ranks"] == 1]
    return min(ones, key=lambda r: r.threads) if ones else None


def scaling_tables(runs):
    """One table a machine: each series' runs by ranks; speedup against the 1-rank run with the fewest
    threads of the same variant, image count and mode; efficiency = speedup / (cores used / its cores)."""
    s = series(runs)
    if not s:
        raise load.ReportError("no run under mpirun in these reports (a run's 'mpi' figures): nothing to scale")
    cols = [tables.Column("backend:variant"), tables.Column("mode"), tables.Column("images", "int"),
            tables.Column("ranks", "int"), tables.Column("threads/rank", "int"),
            tables.Column("images/s (all ranks)", "rate", "images_per_s_all_ranks"),
            tables.Column("speedup vs 1 rank", "speedup", "speedup_vs_1_rank"),
            tables.Column("efficiency", "pct"), tables.Column("load imbalance", "speedup", "load_imbalance"),
            tables.Column("validation")]
    notes = ["images/s (all ranks): every rank's images over the slowest rank's forward time (median of the "
             "passes, each started after a barrier)",
             "speedup vs 1 rank: against the 1-rank run with the fewest threads of the same variant, images and "
             "mode; efficiency: that speedup / the cores used (ranks x threads) relative to its (– without one)",
             "load imbalance: slowest rank's median forward time / the ranks' mean"]
    out = {}
    for (machine, name, images, mode, threads), rs in s.items():
        t = out.setdefault(machine, tables.Table(f"Scaling under MPI — {machine}", cols, notes=notes, machine=machine))
        base = _baseline([r for k, v in s.items() if k[:4] == (machine, name, images, mode) for r in v])
        for r in rs:
            rate, ranks = r.mpi["aggregate_images_per_s"], r.mpi["ranks"]
            speedup = rate / base.mpi["aggregate_images_per_s"] if base and base.mpi["aggregate_images_per_s"] else None
            cores = ranks * threads / base.threads if base else None
            t.rows.append([name, mode, images, ranks, threads, rate, speedup,
                           speedup / cores if speedup is not None else None, r.mpi["load_imbalance"],
                           "passed" if r.passed else "FAILED"])
    return list(out.values())


def scaling_chart(runs, path):
    """Cores used (ranks x threads per rank) against images/s of all ranks, log-log, with ideal scaling from
    each series' 1-rank run."""
    from . import charts  # matplotlib only where a chart is asked for
    plt = charts.plt
    fig, ax = plt.subplots(figsize=(8.5, 5))
    xs = []
    for (machine, name, images, mode, threads), rs in series(runs).items():
        x = [r.mpi["ranks"] * threads for r in rs]
        y = [r.mpi["aggregate_images_per_s"] for r in rs]
        xs += x
        label = f"{name}, {mode}, {threads} thread{'s' if threads > 1 else ''}/rank, {images} images"
        line, = ax.plot(x, y, marker="o", label=label if len(rs) > 1 else f"{name}, 1 rank x {threads} threads")
        if rs[0].mpi["ranks"] == 1 and len(rs) > 1:
            ax.plot(x, [y[0] * r.mpi["ranks"] for r in rs], linestyle=":", color=line.get_color(), alpha=0.6)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks(sorted(set(xs)))
    ax.xaxis.set_major_formatter(charts.FuncFormatter(charts.plain_number))
    charts._log_axis(ax.yaxis)
    ax.set_xlabel("cores used (ranks x threads per rank, log scale)")
    ax.set_ylabel("images/s of all ranks (log scale)")
    ax.set_title("Scaling under MPI (dotted: ideal from 1 rank)", fontsize=11)
    ax.grid(which="major", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", frameon=False)
    return charts.save(fig, path)

