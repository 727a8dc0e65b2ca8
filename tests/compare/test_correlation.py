"""System- and summary-level correlation, with pandas' own coefficients as the oracle."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as scipy_stats

from opik_semantic_metrics.compare.correlation import summary_level, system_level


def _reference_pandas_corr(x: np.ndarray, y: np.ndarray) -> tuple[float, float, float]:
    frame = pd.DataFrame({"x": x, "y": y})
    return tuple(
        float(frame.corr(method=m).loc["x", "y"]) for m in ("pearson", "spearman", "kendall")
    )


@pytest.fixture(scope="module")
def grids() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    human = rng.uniform(size=(40, 5))
    metric = human + rng.normal(scale=0.3, size=human.shape)
    return metric, human


def test_system_level_is_the_correlation_of_system_means(grids):
    metric, human = grids
    result = system_level(metric, human)
    expected = _reference_pandas_corr(metric.mean(axis=0), human.mean(axis=0))
    assert (result.pearson, result.spearman, result.kendall) == pytest.approx(expected, abs=1e-12)
    assert (result.count, result.skipped) == (5, 0)


def test_summary_level_averages_per_document_correlations(grids):
    metric, human = grids
    result = summary_level(metric, human)
    rows = zip(metric, human, strict=True)
    per_document = np.array([_reference_pandas_corr(m, h) for m, h in rows])
    assert (result.pearson, result.spearman, result.kendall) == pytest.approx(
        per_document.mean(axis=0).tolist(), abs=1e-12
    )
    assert (result.count, result.skipped) == (40, 0)


def test_a_perfect_ranking_gives_one_and_a_reversed_one_minus_one():
    human = [[0.5, 0.4, 0.3], [0.6, 0.2, 0.1]]
    assert system_level([[3, 2, 1], [9, 5, 4]], human).kendall == pytest.approx(1.0)
    assert summary_level([[1, 2, 3], [4, 5, 9]], human).spearman == pytest.approx(-1.0)


def test_summary_level_skips_and_counts_constant_documents():
    metric = [[0.9, 0.5, 0.1], [0.3, 0.3, 0.3], [0.1, 0.2, 0.3]]
    human = [[0.6, 0.4, 0.2], [0.6, 0.4, 0.2], [0.5, 0.5, 0.5]]
    result = summary_level(metric, human)
    assert (result.count, result.skipped) == (1, 2)
    assert result.pearson == pytest.approx(1.0)


def test_metric_scores_within_the_tie_tolerance_tie_as_the_human_scores_do():
    # Systems 1 and 2 wrote the same summary: people gave it one score, the metric two
    # scores 3e-7 apart (batching noise). Kept apart, the noise ranked one above the other.
    metric = [[0.7, 0.7000003, 0.5], [0.61, 0.6100002, 0.6100001]]
    human = [[0.5, 0.5, 0.3], [0.4, 0.2, 0.3]]
    result = summary_level(metric, human)
    # The second document's scores are all one: left out, as a constant document.
    assert (result.count, result.skipped) == (1, 1)
    assert result.kendall == pytest.approx(1.0) and result.spearman == pytest.approx(1.0)
    exact = summary_level(metric, human, tie_tolerance=0.0)
    assert (exact.count, exact.skipped) == (2, 0)
    assert exact.kendall < 1.0
    # Ties do not chain, and a group is anchored at its highest score, as ranks are:
    # 0.7000008 ties 0.7000016 above it, and 0.7 is a group of its own.
    chained = summary_level([[0.7, 0.7000008, 0.7000016]], [[0.1, 0.3, 0.3]])
    assert chained.kendall == pytest.approx(1.0)
    with pytest.raises(ValueError, match="`tie_tolerance` to be a finite number >= 0"):
        system_level(metric, human, tie_tolerance=-1.0)


def test_systems_with_the_same_mean_human_score_rank_level_whatever_the_document_order():
    # Systems 0 and 1 average 0.2 from people: 0.1, 0.2 and 0.3 sum to 0.20000000000000004
    # (or 0.19999999999999998, in another order) against 0.2 three times. That rounding
    # ranked system 0 above or below system 1 by the order of the documents.
    metric = np.array([[0.9, 0.5, 0.1], [0.7, 0.6, 0.2], [0.8, 0.4, 0.3]])
    human = np.array([[0.1, 0.2, 0.9], [0.2, 0.2, 0.9], [0.3, 0.2, 0.9]])
    oracle = scipy_stats.spearmanr(metric.mean(axis=0), [0.2, 0.2, 0.9]).statistic
    for order in ([0, 1, 2], [2, 1, 0], [1, 0, 2]):
        result = system_level(metric[order], human[order])
        assert result.spearman == pytest.approx(oracle)
        assert result.kendall == pytest.approx(
            scipy_stats.kendalltau(metric.mean(axis=0), [0.2, 0.2, 0.9]).statistic
        )
    # All three average 0.2: no correlation, not one made of rounding.
    with pytest.raises(ValueError, match="undefined"):
        system_level(metric, [[0.1, 0.2, 0.6], [0.2, 0.2, 0.0], [0.3, 0.2, 0.0]])


@pytest.mark.parametrize(
    ("metric", "human", "message"),
    [
        ([[0.1, 0.2]], [[0.1, 0.2, 0.3]], "same grid"),
        ([0.1, 0.2], [0.1, 0.2], "grid"),
        ([[0.1], [0.2]], [[0.1], [0.2]], "two or more systems"),
        ([[0.1, float("nan")]], [[0.1, 0.2]], "finite"),
        # Not NaN coefficients: a mean of 1e308 and 1e308 overflows.
        ([[1e308, 0.5], [1e308, 0.2]], [[0.3, 0.2], [0.2, 0.1]], "magnitude up to 1e\\+150"),
        ([[0.3, 0.3], [0.3, 0.3]], [[0.1, 0.2], [0.2, 0.1]], "undefined"),
    ],
)
def test_malformed_or_undefined_input_raises_value_error(metric, human, message):
    with pytest.raises(ValueError, match=message):
        summary_level(metric, human)
    with pytest.raises(ValueError, match=message):
        system_level(metric, human)
