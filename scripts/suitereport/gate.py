"""The regression gate's decision for one benchmark: is NEW slower than BASE, beyond the noise?

One median per side cannot tell a regression from a noisy machine, so the gate compares the timed
forward passes themselves (runs[].forward_ms.samples) with a one-sided Mann-Whitney U test (the
test Google Benchmark's compare.py prints), which makes no assumption about their distribution:
  SLOWER  the median ratio NEW/BASE is above 1 + threshold AND the test says NEW's passes are
          slower than BASE's with p < alpha: a failure
  noisy   the median ratio is above 1 + threshold but the passes overlap too much for the test
          (p >= alpha): listed, not a failure
  faster  the same two conditions the other way round
  ok      the median ratio is within the threshold
With fewer than MIN_SAMPLES passes on a side there is nothing to test: the medians decide alone and
the status says so. The bootstrap interval of the median ratio is printed to show the spread.
"""

from dataclasses import dataclass
from statistics import median  # noqa: F401 (also used by the tests)

import numpy as np
from scipy.stats import mannwhitneyu

MIN_SAMPLES = 5
DEFAULT_ALPHA = 0.01
BOOTSTRAP_ROUNDS = 2000


@dataclass
class Decision:
    status: str  # ok | faster | SLOWER | noisy | SLOWER (medians only) | faster (medians only)
    ratio: float  # median(NEW) / median(BASE)
    p_slower: float = None  # one-sided Mann-Whitney U p-value: NEW slower than BASE
    p_faster: float = None
    ci: tuple = None  # bootstrap 95 % interval of the median ratio

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
        return Decision(status, ratio, p_slower, p_faster, ci)
    ratio = new_median / base_median
    if ratio > 1 + threshold:
        status = "SLOWER (medians only)"
    elif ratio < 1 / (1 + threshold):
        status = "faster (medians only)"
    else:
        status = "ok (medians only)"
    return Decision(status, ratio)
