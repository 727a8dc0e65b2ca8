"""Comparison statistics against SciPy's own implementations (the oracle)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as scipy_stats

from opik_semantic_metrics.compare.stats import (
    bootstrap_interval,
    compare_systems,
    paired_bootstrap,
    paired_t_test,
)

RNG = np.random.default_rng(7)
SYSTEM_A = RNG.normal(0.60, 0.1, size=200)
SYSTEM_B = SYSTEM_A - 0.03 + RNG.normal(0.0, 0.05, size=200)


def test_t_test_equals_scipy_ttest_rel():
    ours = paired_t_test(SYSTEM_A, SYSTEM_B)
    oracle = scipy_stats.ttest_rel(SYSTEM_A, SYSTEM_B)
    assert ours.statistic == pytest.approx(oracle.statistic, rel=1e-12)
    assert ours.p_value == pytest.approx(oracle.pvalue, rel=1e-9)


def test_bootstrap_interval_equals_scipy_percentile_bootstrap():
    # Same resampling scheme as SciPy's percentile method; with many resamples the two
    # Monte-Carlo intervals agree to well under the interval's own width.
    ours = bootstrap_interval(SYSTEM_A, resamples=20_000, seed=1)
    oracle = scipy_stats.bootstrap(
        (SYSTEM_A,), np.mean, n_resamples=20_000, method="percentile", random_state=2
    ).confidence_interval
    width = oracle.high - oracle.low
    assert ours.low == pytest.approx(oracle.low, abs=0.02 * width)
    assert ours.high == pytest.approx(oracle.high, abs=0.02 * width)
    assert ours.mean == pytest.approx(SYSTEM_A.mean())
    assert ours.count == 200


def test_clear_difference_is_significant_and_named():
    comparison = compare_systems(SYSTEM_A, SYSTEM_B, name_a="bart", name_b="pgn", seed=3)
    assert comparison.winner == "bart"
    assert comparison.significant
    assert comparison.difference == pytest.approx(SYSTEM_A.mean() - SYSTEM_B.mean())
    assert comparison.bootstrap.wins_a > 0.99 * comparison.bootstrap.resamples
    assert comparison.bootstrap.p_value < 0.05


def test_noise_is_not_significant():
    noise_b = SYSTEM_A + RNG.normal(0.0, 0.1, size=200)
    noise_b += SYSTEM_A.mean() - noise_b.mean()  # same mean up to rounding
    comparison = compare_systems(SYSTEM_A, noise_b)
    assert not comparison.significant
    assert comparison.bootstrap.p_value > 0.2


def test_identical_systems_tie():
    comparison = compare_systems(SYSTEM_A, SYSTEM_A)
    assert comparison.winner is None
    assert not comparison.significant
    assert comparison.t_test.p_value == 1.0
    assert comparison.bootstrap.ties == comparison.bootstrap.resamples


@pytest.mark.filterwarnings("ignore:Precision loss:RuntimeWarning")  # scipy's, on no variance
@pytest.mark.parametrize(("a", "b"), [([1.0] * 20, [0.0] * 20), ([0.0] * 5, [1.0] * 5)])
def test_a_clean_sweep_by_one_margin_is_significant_as_in_scipy(a, b):
    # AnswerMatch's 0/1 scores make this real: A right on every item, B on none.
    comparison = compare_systems(a, b)
    oracle = scipy_stats.ttest_rel(a, b)
    assert (comparison.t_test.statistic, comparison.t_test.p_value) == (
        oracle.statistic,
        oracle.pvalue,
    )
    assert comparison.significant and comparison.winner == ("A" if a[0] > b[0] else "B")


@pytest.mark.filterwarnings("error")  # scipy's precision-loss warning would be one
def test_differences_equal_but_for_rounding_are_a_clean_sweep():
    # 0.1 - 0.2 and 0.2 - 0.3 differ in the last bits: scipy gives t = -7e15 and warns.
    t_test = paired_t_test([0.1, 0.2, 0.7], [0.2, 0.3, 0.8])
    assert (t_test.statistic, t_test.p_value) == (-np.inf, 0.0)


def test_differences_within_the_tie_tolerance_are_ties():
    # One system scored twice: the runs differ only by batching noise (below 1e-6), with
    # a slight drift that the exact test calls significant.
    noise = np.random.default_rng(3).uniform(-1e-7, 3e-7, size=SYSTEM_A.size)
    rerun = SYSTEM_A + noise
    assert scipy_stats.ttest_rel(SYSTEM_A, rerun).pvalue < 1e-6
    comparison = compare_systems(SYSTEM_A, rerun)
    assert comparison.winner is None and not comparison.significant
    assert (comparison.t_test.statistic, comparison.t_test.p_value) == (0.0, 1.0)
    assert comparison.bootstrap.ties == comparison.bootstrap.resamples
    exact = compare_systems(SYSTEM_A, rerun, tie_tolerance=0.0)
    assert exact.winner == "B" and exact.significant
    assert exact.t_test.p_value == pytest.approx(scipy_stats.ttest_rel(SYSTEM_A, rerun).pvalue)


def test_only_the_items_within_the_tie_tolerance_are_ties():
    a = [0.5, 0.6, 0.7, 0.8]
    b = [0.5 + 5e-7, 0.4, 0.65, 0.9]
    t_test = paired_t_test(a, b)
    oracle = scipy_stats.ttest_1samp([0.0, 0.2, 0.05, -0.1], 0.0)
    assert t_test.statistic == pytest.approx(oracle.statistic, rel=1e-12)
    assert t_test.p_value == pytest.approx(oracle.pvalue, rel=1e-12)


def test_a_single_item_has_no_t_test():
    t_test = paired_t_test([1.0], [0.0])
    assert np.isnan(t_test.statistic) and np.isnan(t_test.p_value)


def test_bootstrap_is_deterministic_for_a_seed():
    first = paired_bootstrap(SYSTEM_A, SYSTEM_B, seed=5)
    assert paired_bootstrap(SYSTEM_A, SYSTEM_B, seed=5) == first


@pytest.mark.parametrize(
    ("a", "b", "message"),
    [
        ([0.1, 0.2], [0.1], "same items"),
        ([], [], "non-empty"),
        ([0.1, float("nan")], [0.1, 0.2], "finite"),
        # Finite, but past what float64 statistics of them can hold: 1e308 against -1e308
        # once gave a mean of 0 and a p-value of 1.
        ([1e308, 1e308], [-1e308, -1e308], "magnitude up to 1e\\+150, got 1e\\+308"),
        ([0.5, 0.7], [0.1, -2e150], "got -2e\\+150"),
    ],
)
def test_bad_input_is_a_clear_error(a, b, message):
    with pytest.raises(ValueError, match=message):
        compare_systems(a, b)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"alpha": 2.0}, "`alpha` between 0 and 1"),
        ({"alpha": 0.0}, "`alpha` between 0 and 1"),
        ({"resamples": 0}, "`resamples` to be a positive integer"),
        ({"resamples": -5}, "`resamples` to be a positive integer"),
        ({"tie_tolerance": -1e-6}, "`tie_tolerance` to be a finite number >= 0"),
        ({"tie_tolerance": float("nan")}, "`tie_tolerance` to be a finite number >= 0"),
    ],
)
def test_bad_settings_are_a_clear_error(options, message):
    with pytest.raises(ValueError, match=message):
        compare_systems(SYSTEM_A, SYSTEM_B, **options)
    if "resamples" in options:
        with pytest.raises(ValueError, match=message):
            bootstrap_interval(SYSTEM_A, **options)


def test_bootstrap_p_value_is_twice_the_losing_share_worked_out_by_hand():
    """Two items, A ahead by 1 on one and behind by 0.5 on the other. A resample draws
    each of its two items from them with replacement: (1, 1) has mean 1, (-0.5, -0.5)
    mean -0.5, and the two mixed draws mean 0.25. So A wins 3/4 of resamples, B 1/4,
    and the two-sided p is 2 x 1/4 = 0.5."""
    result = paired_bootstrap([1.0, 0.0], [0.0, 0.5], resamples=20_000)
    assert result.wins_a / result.resamples == pytest.approx(0.75, abs=0.01)
    assert result.wins_b / result.resamples == pytest.approx(0.25, abs=0.01)
    assert result.ties == 0
    assert result.p_value == pytest.approx(0.5, abs=0.02)
    # A lead by 1 and a loss by 1: the mixed draws (half) tie, each side wins a quarter,
    # the winner fails to win in 3/4, and the p-value 1.5 is capped at 1.
    even = paired_bootstrap([1.0, 0.0], [0.0, 1.0], resamples=20_000)
    assert even.ties / even.resamples == pytest.approx(0.5, abs=0.01)
    assert even.p_value == 1.0
