"""The regression gate's decision for one benchmark: is NEW slower than BASE, beyond the noise?

One median per side cannot tell a regression from a noisy machine, so the gate compares samples with
a one-sided Mann-Whitney U test (the test Google Benchmark's compare.py prints), which assumes nothing
about their distribution. Which samples: the noise of this suite is mostly BETWEEN processes (one run
of the suite lands 25 % slower than the next, its passes tight around that), so
  with MIN_RUNS or more reports of the benchmark on both sides: the per-report medians (basis "runs";
      the CI recipe takes 8 runs a side), the ratio is the median of NEW's over the median of BASE's;
  otherwise the timed passes of the newest report of each side (basis "passes": blind to the
      between-process noise, so a difference can be real for the process and still not the code's).
Status:
  SLOWER  the ratio NEW/BASE is above 1 + threshold AND the test says NEW is slower, p < alpha:
          a failure
  noisy   the ratio is beyond the threshold but the samples overlap too much for the test
          (p >= alpha): listed, not a failure
  faster  the same two conditions the other way round
  ok      the ratio is within the threshold
history's one-boot test takes the benchmarks that two commits ran in one boot as one family
(decide_family): each status is decided on Holm-adjusted p-values, so that m benchmarks do not give
m chances of a step by chance. `compare` tests each benchmark alone (as compare.py does), or, with
--family, as one family too (scripts/ab-bench.sh does).
With fewer than MIN_SAMPLES samples on a side there is nothing to test: the medians decide alone and
the status says so. The bootstrap interval of the median ratio is printed to show the spread; its work
and memory are bounded whatever the sample count (`suite --repeat 100000` is legal, and a 2000 x N
array of resamples took 4.8 GB and 15 s for one benchmark).

What the gate does not judge (compare_main.py): runs of a busy machine (busy_reason: the report's
machine_load) and vendor peers (is_peer_run: PyTorch is timed for comparison, not developed here).
"""

from dataclasses import dataclass
from statistics import median  # noqa: F401 (also used by the tests)

import numpy as np
from scipy.stats import mannwhitneyu, norm

MIN_SAMPLES = 5
MIN_RUNS = 5
DEFAULT_ALPHA = 0.01
BOOTSTRAP_ROUNDS = 2000
# Up to this many samples a side are resampled as drawn (in chunks of CHUNK_ELEMENTS, 16 MiB); beyond,
# the median of n draws is taken as the order statistic at a Beta-distributed level (what resampling
# n draws and taking their median amounts to), O(rounds) memory after one sort.
RESAMPLE_MAX = 10_000
CHUNK_ELEMENTS = 1 << 21
PEER_BACKENDS = ("pytorch",)  # timed beside our backends for comparison; never a regression verdict


@dataclass
class Decision:
    status: str  # ok | faster | SLOWER | noisy | SLOWER (medians only) | faster (medians only)
    ratio: float  # median(NEW) / median(BASE)
    p_slower: float = None  # one-sided Mann-Whitney U p-value: NEW slower than BASE
    p_faster: float = None
    ci: tuple = None  # bootstrap 95 % interval of the median ratio
    basis: str = "medians"  # what was tested: "N v M runs", "N v M passes" or "medians"
    sizes: tuple = None  # (N, M): the samples a side behind the p-values

    @property
    def fails(self):
        return self.status.startswith("SLOWER")


def bootstrap_medians(samples, rounds, rng):
    """The medians of `rounds` resamples (with replacement, same size) of samples, in bounded memory."""
    x = np.asarray(samples, dtype=float)
    n = len(x)
    if n <= RESAMPLE_MAX:
        out = np.empty(rounds)
        step = max(1, CHUNK_ELEMENTS // n)  # up to ~1000 samples: one draw, the same numbers as ever
        for start in range(0, rounds, step):
            k = min(step, rounds - start)
            out[start:start + k] = np.median(rng.choice(x, size=(k, n)), axis=1)
        return out
    # The median of n draws from the sorted samples is the one at the median of n uniform levels,
    # which is Beta((n+1)/2, (n+1)/2)-distributed: one level per round instead of n draws.
    xs = np.sort(x)
    m = (n + 1) / 2
    levels = rng.beta(m, m, size=rounds)
    return xs[np.minimum((levels * n).astype(np.int64), n - 1)]


def median_ratio_interval(base, new, rounds=BOOTSTRAP_ROUNDS, seed=1):
    """95 % bootstrap interval of median(NEW)/median(BASE); a fixed seed: same input, same output."""
    rng = np.random.default_rng(seed)
    b = bootstrap_medians(base, rounds, rng)
    n = bootstrap_medians(new, rounds, rng)
    ratios = n / b
    lo, hi = np.percentile(ratios, [2.5, 97.5])
    return float(lo), float(hi)


def mann_whitney_large(new, base):
    """(p NEW greater, p NEW less): scipy's asymptotic Mann-Whitney U (tie and continuity corrected,
    which is what scipy uses at these sizes) from one sort instead of two rankings and two tie counts:
    seconds instead of tens of seconds at 10^6 samples a side."""
    n1, n2 = len(new), len(base)
    values = np.concatenate([np.asarray(new, dtype=float), np.asarray(base, dtype=float)])
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    del values
    bounds = np.flatnonzero(np.diff(ordered)) + 1
    del ordered
    starts = np.concatenate(([0], bounds))
    ends = np.concatenate((bounds, [n1 + n2]))
    ties = (ends - starts).astype(float)
    mean_rank = (starts + ends + 1) / 2.0  # ranks starts+1 .. ends share their mean
    r1 = float(np.repeat(mean_rank, (ends - starts))[order < n1].sum())
    u1 = r1 - n1 * (n1 + 1) / 2.0
    u2 = n1 * n2 - u1
    n = n1 + n2
    tie_term = float((ties ** 3 - ties).sum())
    sd = np.sqrt(n1 * n2 / 12.0 * ((n + 1) - tie_term / (n * (n - 1))))
    if sd == 0:  # every sample the same value
        return 1.0, 1.0
    mu = n1 * n2 / 2.0
    return float(norm.sf((u1 - mu - 0.5) / sd)), float(norm.sf((u2 - mu - 0.5) / sd))


def decide(base_samples, new_samples, base_median, new_median, threshold, alpha=DEFAULT_ALPHA):
    """The status of one benchmark; samples may be empty (then only the medians are used)."""
    if len(base_samples) >= MIN_SAMPLES and len(new_samples) >= MIN_SAMPLES:
        if max(len(base_samples), len(new_samples)) <= RESAMPLE_MAX:
            ratio = median(new_samples) / median(base_samples)
            p_slower = float(mannwhitneyu(new_samples, base_samples, alternative="greater").pvalue)
            p_faster = float(mannwhitneyu(new_samples, base_samples, alternative="less").pvalue)
        else:
            ratio = float(np.median(new_samples) / np.median(base_samples))
            p_slower, p_faster = mann_whitney_large(new_samples, base_samples)
        ci = median_ratio_interval(base_samples, new_samples)
        if ratio > 1 + threshold:
            status = "SLOWER" if p_slower < alpha else "noisy"
        elif ratio < 1 / (1 + threshold):
            status = "faster" if p_faster < alpha else "noisy"
        else:
            status = "ok"
        sizes = (len(base_samples), len(new_samples))
        return Decision(status, ratio, p_slower, p_faster, ci, f"{sizes[0]} v {sizes[1]} passes", sizes)
    ratio = new_median / base_median
    if ratio > 1 + threshold:
        status = "SLOWER (medians only)"
    elif ratio < 1 / (1 + threshold):
        status = "faster (medians only)"
    else:
        status = "ok (medians only)"
    return Decision(status, ratio)


def holm(pvalues):
    """The p-values of m tests taken together (Holm's step-down adjustment, in their order): a benchmark
    counts as slower only where its adjusted p is below alpha, so that the chance that any of m unchanged
    benchmarks shows a step stays below alpha. Tested alone at alpha = 0.01, each of 4 benchmarks is a
    chance: up to 4 % of the commits that change code they run would fail CI without being slower. It asks
    more of each test: 5 v 5 runs (p at least 1/252) can confirm a step among at most 2 benchmarks, 8 v 8
    runs (p at least 1/12870) among up to 128."""
    order = sorted(range(len(pvalues)), key=lambda i: pvalues[i])
    m = len(pvalues)
    out = [1.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * pvalues[i]))
        out[i] = running
    return out


def least_p(n, m):
    """The smallest one-sided p that decide's test gives n v m samples (a Decision's sizes): every sample of
    one side beyond the other's, 1 / C(n + m, n) where scipy computes it exactly, a little more where it
    approximates."""
    return float(mannwhitneyu(np.arange(n) + m, np.arange(m), alternative="greater").pvalue)


def decide_family(decisions, alpha=DEFAULT_ALPHA):
    """Decisions of benchmarks tested together (two commits' runs in one boot, compare --family): their p-values
    become Holm's (holm) over those that have one, and a SLOWER or faster status whose adjusted p is not
    below alpha becomes "noisy" (the p-values kept are then the adjusted ones). Returns how many were tested
    together."""
    tested = [d for d in decisions if d.p_slower is not None]
    for attr in ("p_slower", "p_faster"):
        for d, p in zip(tested, holm([getattr(d, attr) for d in tested])):
            setattr(d, attr, p)
    for d in tested:
        if (d.status == "SLOWER" and d.p_slower >= alpha) or (d.status == "faster" and d.p_faster >= alpha):
            d.status = "noisy"
    return len(tested)


def decide_runs(base_runs, new_runs, threshold, alpha=DEFAULT_ALPHA):
    """base_runs/new_runs: load.Run lists of one benchmark (several reports a side). With MIN_RUNS or
    more a side, the per-report medians are tested; else the passes of each side's newest run."""
    if len(base_runs) >= MIN_RUNS and len(new_runs) >= MIN_RUNS:
        b = [r.forward_ms for r in base_runs]
        n = [r.forward_ms for r in new_runs]
        d = decide(b, n, median(b), median(n), threshold, alpha)
        d.basis = f"{len(b)} v {len(n)} runs"
        return d
    b, n = newest(base_runs), newest(new_runs)
    return decide(b.samples, n.samples, b.forward_ms, n.forward_ms, threshold, alpha)


def newest(runs):
    return max(enumerate(runs), key=lambda ir: (ir[1].date, ir[0]))[1]


def busy_reason(run):
    """Why the run's report says its machine was busy, or "" (also where it has no machine_load).

    The rule (scripts/README.md): busy when, at the start or the end of the run, another process was
    runnable on at least half the logical cores (at least 1; the threshold at which the suite itself
    warns "the machine is busy"), or the 1-minute load average was above the logical core count (more
    work than cores, the suite's own threads included)."""
    ml = run.machine_load or {}
    cores = run.machine.logical_cores if run.machine else 0
    others = max(ml.get("other_runnable_start", 0.0), ml.get("other_runnable_end", 0.0))
    limit = max(1, cores // 2)
    on = f" on {cores} cores" if cores else ""
    if others >= limit:
        return f"{others:g} other runnable process(es){on}"
    load = max(ml.get("load_avg_1min_start", 0.0), ml.get("load_avg_1min_end", 0.0))
    if cores and load > cores:
        return f"load average {load:.2f}{on}"
    return ""


def is_peer_run(run, meta=None):
    """A vendor peer (PyTorch), or any run of a report whose meta says a peer wrote it
    (scripts/peer_pytorch.py writes suite_version "peer_pytorch"; meta.peer: true for another)."""
    if run.backend in PEER_BACKENDS:
        return True
    meta = meta or {}
    version = meta.get("suite_version")
    return meta.get("peer") is True or (isinstance(version, str) and version.startswith("peer"))
