"""Statistics over trials, against cases computed by hand."""

import numpy as np
import pytest

from zerognn.records import stats


def test_the_median_is_the_middle_value_or_the_mean_of_the_middle_two():
    assert stats.median([3.0, 1.0, 2.0]) == 2.0 and stats.median([4.0, 1.0, 2.0, 3.0]) == 2.5
    with pytest.raises(ValueError):
        stats.median([])


@pytest.mark.parametrize("n, ranks, coverage", [
    # P(B <= 0) = 1/64 <= 0.025 < P(B <= 1) = 7/64: the extremes, covering 1 - 2/64
    (6, (1, 6), 1 - 2 / 64),
    (7, (1, 7), 1 - 2 / 128),
    # P(B <= 0) = 1/256, P(B <= 1) = 9/256 > 0.025
    (8, (1, 8), 1 - 2 / 256),
    # P(B <= 1) = 11/1024 <= 0.025 < P(B <= 2) = 56/1024
    (10, (2, 9), 1 - 22 / 1024),
    # P(B <= 2) = 79/4096 = 0.0193 <= 0.025 < P(B <= 3) = 299/4096
    (12, (3, 10), 1 - 158 / 4096),
])
def test_the_median_interval_takes_the_order_statistics_hand_computed_from_the_binomial(n, ranks, coverage):
    assert stats.median_ci_ranks(n) == ranks
    assert stats.median_ci_coverage(n) == pytest.approx(coverage)
    values = [float(10 * i) for i in range(n, 0, -1)]  # any order: sorted first
    assert stats.median_ci(values) == (10.0 * ranks[0], 10.0 * ranks[1])


@pytest.mark.parametrize("n", [1, 2, 5])
def test_below_six_trials_there_is_no_interval(n):
    # n = 5: even the extremes cover only 1 - 2/32 = 93.75 %
    assert stats.median_ci_ranks(n) is None and stats.median_ci([1.0] * n) is None
    assert stats.median_ci_coverage(n) is None


def test_the_coefficient_of_variation_uses_the_sample_deviation():
    # mean 4, deviations -2, 0, 2: sample variance 8 / 2 = 4, sd 2
    assert stats.cv([2.0, 4.0, 6.0]) == pytest.approx(0.5)
    assert stats.cv([5.0]) is None and stats.cv([0.0, 0.0]) is None


def test_the_ratio_interval_brackets_the_ratio_and_is_reproducible():
    base = [4.0, 4.4, 3.4, 5.3, 4.9, 3.8, 4.1, 4.6, 3.9, 5.0]
    fast = [1.066, 1.067, 1.068, 1.069, 1.067, 1.066, 1.068, 1.067, 1.069, 1.066]
    low, high = stats.ratio_ci(base, fast)
    point = stats.median(base) / stats.median(fast)
    assert low < point < high
    # a bootstrap median of 10 trials lies between the 2nd and 9th order statistics almost always
    assert sorted(base)[0] / max(fast) <= low and high <= sorted(base)[-1] / min(fast)
    assert stats.ratio_ci(base, fast) == (low, high)  # the fixed seed


def test_the_ratio_interval_of_constant_arms_is_the_ratio_and_needs_six_trials_in_each_arm():
    assert stats.ratio_ci([6.0] * 6, [2.0] * 6) == (3.0, 3.0)
    assert stats.ratio_ci([6.0] * 5, [2.0] * 6) is None and stats.ratio_ci([6.0] * 6, [2.0] * 5) is None


def test_the_ratio_interval_is_the_percentiles_of_resampled_medians_computed_independently():
    rng = np.random.default_rng(7)
    top, bottom = rng.lognormal(1.0, 0.2, 8), rng.lognormal(0.0, 0.01, 9)
    generator = np.random.default_rng(stats.SEED)  # the same draws, in the same order, by hand
    top_index = generator.integers(0, 8, size=(stats.RESAMPLES, 8))
    bottom_index = generator.integers(0, 9, size=(stats.RESAMPLES, 9))
    ratios = sorted(np.median(top[i]) / np.median(bottom[j]) for i, j in zip(top_index, bottom_index))
    low, high = np.quantile(ratios, [0.025, 0.975])
    assert stats.ratio_ci(top, bottom) == pytest.approx((low, high), rel=1e-12)
