"""Comparison statistics against SciPy's own implementations (the oracle)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as scipy_stats

from opik_semantic_metrics.compare import stats
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
        # Not numbers: a TypeError from the comparison before, not a named error.
        ({"alpha": "0.05"}, "`alpha` between 0 and 1, got '0.05'"),
        ({"alpha": None}, "`alpha` between 0 and 1, got None"),
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


def test_scores_printed_to_six_decimals_and_1e6_apart_are_ties():
    # 0.700001 - 0.7 is 1.0000000000287557e-06 in float64 and 0.250001 - 0.25 is
    # 9.999999999732445e-07: without room for rounding, one was a tie and the other not,
    # and A "significantly" beat B by differences that are all 1e-6.
    a = [0.700001, 0.500001, 0.900001, 0.250001, 0.123457]
    b = [0.7, 0.5, 0.9, 0.25, 0.123456]
    comparison = compare_systems(a, b)
    assert comparison.winner is None and not comparison.significant
    assert comparison.t_test.p_value == 1.0
    assert comparison.bootstrap.ties == comparison.bootstrap.resamples
    # The means too: half the items 2e-6 apart give a mean difference of 1e-6, a tie.
    half = compare_systems([0.500002, 0.3] * 50, [0.5, 0.3] * 50)
    assert half.winner is None


def _exact_bootstrap_counts(signs: np.ndarray, resamples: int, seed: int) -> tuple[int, ...]:
    """Wins of A, wins of B and ties, in integers, for differences +d and -d of one size."""
    indices = np.random.default_rng(seed).integers(0, signs.size, size=(resamples, signs.size))
    totals = signs[indices].sum(axis=1)
    return int((totals > 0).sum()), int((totals < 0).sum()), int((totals == 0).sum())


@pytest.mark.parametrize("tie_tolerance", [1e-6, 0.0])
def test_resamples_of_opposite_differences_that_cancel_are_ties(tie_tolerance):
    # +0.1 and -0.1 in float64 are 0.10000000000000003 and -0.09999999999999998 here:
    # a resample with as many of each averaged to a little above 0, a win for A.
    a = [0.4] * 14 + [0.6] * 6
    b = [0.3] * 14 + [0.7] * 6
    result = paired_bootstrap(a, b, resamples=10_000, seed=0, tie_tolerance=tie_tolerance)
    signs = np.array([1] * 14 + [-1] * 6)
    wins_a, wins_b, ties = _exact_bootstrap_counts(signs, 10_000, seed=0)
    assert ties > 0
    assert (result.wins_a, result.wins_b, result.ties) == (wins_a, wins_b, ties)
    assert result.p_value == pytest.approx(2 * (10_000 - wins_a + 1) / 10_001)


def test_resamples_are_drawn_in_blocks_as_in_one_go(monkeypatch):
    # A (resamples, items) index array for a million items is 16 GB; drawn in blocks, the
    # generator gives the same numbers.
    from opik_semantic_metrics.compare import stats

    monkeypatch.setattr(stats, "_RESAMPLE_BLOCK", 7 * SYSTEM_A.size + 3)
    blocked = stats.bootstrap_interval(SYSTEM_A, resamples=100, seed=2)
    indices = np.random.default_rng(2).integers(0, SYSTEM_A.size, size=(100, SYSTEM_A.size))
    low, high = np.quantile(SYSTEM_A[indices].mean(axis=1), [0.025, 0.975])
    assert (blocked.low, blocked.high) == (low, high)


def test_the_bootstrap_p_value_is_never_zero_and_undefined_for_one_item():
    sweep = paired_bootstrap([0.9, 0.8, 0.7, 0.9], [0.5, 0.4, 0.6, 0.5], resamples=999)
    assert sweep.wins_a == 999 and sweep.p_value == 2 / 1000
    single = paired_bootstrap([0.9], [0.1])
    assert single.wins_a == single.resamples and np.isnan(single.p_value)


def test_one_large_score_does_not_make_the_other_differences_equal():
    # The rounding allowed for 1e12 (about 1e-4) once made every difference "equal",
    # giving t = inf; each difference is now allowed only its own scores' rounding.
    a, b = [1e12, 0.2005, 0.3], [1e12 - 0.1, 0.1, 0.2]
    ours = paired_t_test(a, b, tie_tolerance=0.0)
    oracle = scipy_stats.ttest_rel(a, b)
    assert ours.statistic == pytest.approx(oracle.statistic, rel=1e-9)
    assert ours.p_value == pytest.approx(oracle.pvalue, rel=1e-9)


def test_the_same_scores_in_another_order_tie_however_close_to_zero_their_mean():
    # COMET-like scores of both signs averaging near 0 (-4.2e-4): reversed, they sum to a
    # mean 4.4e-18 away, more than a few units in the last place of the mean but well
    # within those of the scores added. The two systems wrote the same scores: a tie.
    scores = np.random.default_rng(10).uniform(-1.0, 1.0, 1000)
    reversed_scores = scores[::-1]
    assert scores.mean() != reversed_scores.mean()
    comparison = compare_systems(scores, reversed_scores, tie_tolerance=0.0, resamples=10)
    assert comparison.winner is None and not comparison.significant


def test_the_module_docstring_gives_the_value_of_each_default():
    # The reference site shows a default by its constant's name (``alpha: float = ALPHA``);
    # the module docstring, at the top of that page, is where a reader finds the number.
    for setting in ("alpha", "confidence", "resamples", "seed"):
        constant = setting.upper()
        value = getattr(stats, constant)
        assert f"``{setting}`` {value!r} (:data:`{constant}`)" in " ".join(stats.__doc__.split())
