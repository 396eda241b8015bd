"""Statistics over trials, whose unit of replication is the process (one trial = one fresh process).

A configuration's value is the median over its trials of each trial's own median (``median``). Its 95 %
confidence interval is distribution-free, from order statistics (``median_ci``): for n trials, the
interval [x_(k), x_(n+1-k)] of the sorted values with the largest k whose coverage, 1 - 2 P(B <= k - 1)
for B ~ Binomial(n, 1/2), is still at least 95 %; below 6 trials no k reaches it and there is no interval
("n too small"). The spread between processes is the coefficient of variation of the trials' medians
(``cv``, flagged at ``CV_FLAG``). A ratio of two configurations' medians (a speedup, a memory ratio) gets
a percentile-bootstrap interval (``ratio_ci``): whole trials are resampled with replacement in each arm,
``RESAMPLES`` times with the fixed seed ``SEED``, and the 2.5th and 97.5th percentiles of the resampled
ratios are its ends; it also needs 6 trials in each arm. Everything here is deterministic.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import comb

import numpy as np

CONFIDENCE = 0.95
MIN_TRIALS = 6          # the fewest trials whose order statistics reach 95 % coverage of the median
CV_FLAG = 0.10          # between-trial CV at or above which a configuration is flagged as unstable
RESAMPLES = 10_000
SEED = 0


def median(values: Sequence[float]) -> float:
    """The median of ``values`` (the mean of the middle two for an even count)."""
    if len(values) == 0:
        raise ValueError("median of no values")
    return float(np.median(np.asarray(values, dtype=float)))


def median_ci_ranks(n: int, confidence: float = CONFIDENCE) -> tuple[int, int] | None:
    """The 1-based ranks (k, n + 1 - k) of the order statistics bounding the median's interval, or None
    when n is too small for any pair to reach ``confidence``."""
    alpha = 1.0 - confidence
    k, tail = 0, 0.0  # tail = P(B <= k - 1)
    while k < n // 2 and tail + comb(n, k) / 2**n <= alpha / 2:
        tail += comb(n, k) / 2**n
        k += 1
    return None if k == 0 else (k, n + 1 - k)


def median_ci_coverage(n: int, confidence: float = CONFIDENCE) -> float | None:
    """The exact coverage of ``median_ci``'s interval for n trials (at least ``confidence``), or None."""
    ranks = median_ci_ranks(n, confidence)
    if ranks is None:
        return None
    return 1.0 - 2.0 * sum(comb(n, i) for i in range(ranks[0])) / 2**n


def median_ci(values: Sequence[float], confidence: float = CONFIDENCE) -> tuple[float, float] | None:
    """The distribution-free interval of the median of ``values`` (module doc); None below ``MIN_TRIALS``."""
    ranks = median_ci_ranks(len(values), confidence)
    if ranks is None:
        return None
    ordered = sorted(float(v) for v in values)
    return ordered[ranks[0] - 1], ordered[ranks[1] - 1]


def cv(values: Sequence[float]) -> float | None:
    """Sample standard deviation (n - 1) over the mean; None for fewer than two values or a zero mean."""
    if len(values) < 2:
        return None
    array = np.asarray(values, dtype=float)
    mean = float(array.mean())
    return None if mean == 0 else float(array.std(ddof=1)) / mean


def ratio_ci(numerator: Sequence[float], denominator: Sequence[float], confidence: float = CONFIDENCE,
             resamples: int = RESAMPLES, seed: int = SEED) -> tuple[float, float] | None:
    """Percentile-bootstrap interval of median(numerator) / median(denominator), resampling whole trials
    in each arm independently; None unless both arms have ``MIN_TRIALS`` trials."""
    if len(numerator) < MIN_TRIALS or len(denominator) < MIN_TRIALS:
        return None
    rng = np.random.default_rng(seed)
    top, bottom = np.asarray(numerator, dtype=float), np.asarray(denominator, dtype=float)
    tops = np.median(top[rng.integers(0, len(top), size=(resamples, len(top)))], axis=1)
    bottoms = np.median(bottom[rng.integers(0, len(bottom), size=(resamples, len(bottom)))], axis=1)
    alpha = 1.0 - confidence
    low, high = np.quantile(tops / bottoms, [alpha / 2, 1 - alpha / 2])
    return float(low), float(high)
