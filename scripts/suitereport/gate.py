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
With fewer than MIN_SAMPLES samples on a side there is nothing to test: the medians decide alone and
the status says so. The bootstrap interval of the median ratio is printed to show the spread.
"""

from dataclasses import dataclass
from statistics import median  # noqa: F401 (also used by the tests)

import numpy as np
from scipy.stats import mannwhitneyu

MIN_SAMPLES = 5
MIN_RUNS = 5
DEFAULT_ALPHA = 0.01
BOOTSTRAP_ROUNDS = 2000


@dataclass
class Decision:
    status: str  # ok | faster | SLOWER | noisy | SLOWER (medians only) | faster (medians only)
    ratio: float  # median(NEW) / median(BASE)
    p_slower: float = None  # one-sided Mann-Whitney U p-value: NEW slower than BASE
    p_faster: float = None
    ci: tuple = None  # bootstrap 95 % interval of the median ratio
    basis: str = "medians"  # what was tested: "N v M runs", "N v M passes" or "medians"

    @property
    def fails(self):
        return self.status.startswith("SLOWER")


def median_ratio_interval(base, new, rounds=BOOTSTRAP_ROUNDS, seed=1):
    """95 % bootstrap interval of median(NEW)/median(BASE); a fixed seed: same input, same output."""
    rng = np.random.default_rng(seed)
    b = rng.choice(np.asarray(base), size=(rounds, len(base))).astype(float)
    n = rng.choice(np.asarray(new), size=(rounds, len(new))).astype(float)
    ratios = np.median(n, axis=1) / np.median(b, axis=1)
    lo, hi = np.percentile(ratios, [2.5, 97.5])
    return float(lo), float(hi)


def decide(base_samples, new_samples, base_median, new_median, threshold, alpha=DEFAULT_ALPHA):
    """The status of one benchmark; samples may be empty (then only the medians are used)."""
    if len(base_samples) >= MIN_SAMPLES and len(new_samples) >= MIN_SAMPLES:
        ratio = median(new_samples) / median(base_samples)
        p_slower = float(mannwhitneyu(new_samples, base_samples, alternative="greater").pvalue)
        p_faster = float(mannwhitneyu(new_samples, base_samples, alternative="less").pvalue)
        ci = median_ratio_interval(base_samples, new_samples)
        if ratio > 1 + threshold:
            status = "SLOWER" if p_slower < alpha else "noisy"
        elif ratio < 1 / (1 + threshold):
            status = "faster" if p_faster < alpha else "noisy"
        else:
            status = "ok"
        return Decision(status, ratio, p_slower, p_faster, ci, f"{len(base_samples)} v {len(new_samples)} passes")
    ratio = new_median / base_median
    if ratio > 1 + threshold:
        status = "SLOWER (medians only)"
    elif ratio < 1 / (1 + threshold):
        status = "faster (medians only)"
    else:
        status = "ok (medians only)"
    return Decision(status, ratio)


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
