"""Statistics for comparing systems on the same items: intervals and paired tests.

Every function takes per-item scores (one float per item, items aligned between the
two systems being compared) and knows nothing of Opik or of any metric.

- :func:`bootstrap_interval`: percentile bootstrap confidence interval of a mean
  (Efron and Tibshirani, 1993).
- :func:`paired_bootstrap`: paired bootstrap resampling (Koehn, 2004, "Statistical
  Significance Tests for Machine Translation Evaluation"): resample the items with
  replacement, recompute both systems' means on each resample, count who wins.
- :func:`paired_t_test`: Student's t-test on the per-item differences (two-sided).
- :func:`compare_systems`: both tests together, with the verdict ``comet-compare``
  gives: the winner is the system with the higher mean, and the difference is
  significant when the paired t-test's p-value is below ``alpha``.

The paired functions count an item whose two scores differ by at most ``tie_tolerance``
(default :data:`TIE_TOLERANCE`, 1e-6) as a tie. This package's metrics give the same text
the same score only within 1e-6 whatever the batching (a micro-batch pads its texts to
its longest one, and the matrix products round differently), so a smaller difference
says nothing about the systems; left in, it made two runs of one system differ
"significantly". Pass ``tie_tolerance=0.0`` to compare scores exactly but for this:
either way the bound is widened by the rounding of the numbers compared (a few units in
their last place), so that scores written to six decimals and 1e-6 apart are ties whichever way
their binary forms round (0.700001 - 0.7 is 1.0000000000287557e-06 in float64).

The other defaults, the same for every function of :mod:`~opik_semantic_metrics.compare`
that takes the setting: ``alpha`` 0.05 (:data:`ALPHA`), ``confidence`` 0.95
(:data:`CONFIDENCE`), ``resamples`` 1000 (:data:`RESAMPLES`) and ``seed`` 0 (:data:`SEED`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeAlias

import numpy as np

from opik_semantic_metrics.inputs import (
    check_between_0_and_1,
    check_non_negative_number,
    check_positive_int,
    finite_numbers,
)

#: One system's per-item scores: a sequence of numbers or a one-dimensional array.
Scores: TypeAlias = Sequence[float] | np.ndarray

#: Per-item score differences no larger than this are ties (see the module docstring).
TIE_TOLERANCE = 1e-6
# The defaults of every function in compare/ that takes these settings: one place, so that
# a comparison of Opik results and one of score lists, or a summary, are computed alike.
#: Significance level of the paired t-test unless one is given.
ALPHA = 0.05
#: Coverage of a bootstrap interval unless one is given.
CONFIDENCE = 0.95
#: Bootstrap resamples unless a number is given.
RESAMPLES = 1000
#: Seed of the bootstrap resampling unless one is given.
SEED = 0


@dataclass(frozen=True)
class Interval:
    """A mean and its bootstrap confidence interval.

    Attributes:
        mean: Mean of the scores.
        low, high: Bounds of the interval.
        confidence: Coverage of the interval, e.g. 0.95.
        count: Number of scores.
    """

    mean: float
    low: float
    high: float
    confidence: float
    count: int


@dataclass(frozen=True)
class BootstrapResult:
    """Outcome of paired bootstrap resampling of two systems.

    Attributes:
        wins_a, wins_b, ties: Resamples in which system A's mean was higher, B's was
            higher, or the two were equal.
        resamples: Number of resamples.
        p_value: Two-sided bootstrap p-value of "no difference": twice the share of
            resamples in which the side that wins more resamples does not win, counted
            as ``(k + 1) / (resamples + 1)`` so that a finite number of resamples never
            claims p = 0 (Phipson and Smyth, 2010, "Permutation p-values should never
            be zero"); capped at 1. NaN for a single item, which has no resamples but
            itself. With few items it is optimistic: when A wins every item, every
            resample favours A however few items there are (2 items: p = 0.002 with
            1,000 resamples, where the t-test gives 0.46); trust the t-test there.
    """

    wins_a: int
    wins_b: int
    ties: int
    resamples: int
    p_value: float


@dataclass(frozen=True)
class TTestResult:
    """Paired two-sided t-test of the per-item differences A - B.

    Attributes:
        statistic: The t statistic (positive when A scores higher); infinite when every
            difference is the same non-zero number (no variance: A wins or loses every
            item by the same margin), NaN for a single item (no degrees of freedom).
        p_value: Two-sided p-value; 1.0 when all differences are 0, 0.0 when the
            statistic is infinite, NaN for a single item.
    """

    statistic: float
    p_value: float


@dataclass(frozen=True)
class Comparison:
    """Two systems compared on the same items.

    Attributes:
        name_a, name_b: The systems' names.
        mean_a, mean_b: Their mean scores.
        difference: ``mean_a - mean_b``.
        winner: The name of the system with the higher mean; ``None`` on a tie.
        significant: Whether the paired t-test's p-value is below ``alpha``.
        alpha: The significance level used.
        t_test: The paired t-test.
        bootstrap: The paired bootstrap resampling.
    """

    name_a: str
    name_b: str
    mean_a: float
    mean_b: float
    difference: float
    winner: str | None
    significant: bool
    alpha: float
    t_test: TTestResult
    bootstrap: BootstrapResult


#: The largest score magnitude compared. Means, differences and summed squares of larger
#: scores can overflow float64 (1e308 against -1e308 gave a mean of 0 and a p-value of 1);
#: up to this, squares of differences summed over 10 million items stay finite.
MAX_SCORE_MAGNITUDE = 1e150


def _as_array(scores: object, name: str) -> np.ndarray:
    values = checked_scores(scores, name)
    if values.ndim != 1 or values.size == 0:
        raise ValueError(
            f"Expected `{name}` to be a non-empty list of numbers, got shape {values.shape}."
        )
    return values


def checked_scores(scores: object, name: str) -> np.ndarray:
    """``scores`` as a float64 array of finite numbers
    (:func:`~opik_semantic_metrics.inputs.finite_numbers`: a bool is no score) of
    magnitude at most :data:`MAX_SCORE_MAGNITUDE`.

    Raises:
        ValueError: A score that is no number, not finite, or too large, naming ``name``.
    """
    values = finite_numbers(scores, name, "score")
    if values.size and np.abs(values).max() > MAX_SCORE_MAGNITUDE:
        flat = values.ravel()
        raise ValueError(
            f"Expected `{name}` to hold numbers of magnitude up to {MAX_SCORE_MAGNITUDE:g}, "
            f"got {flat[np.abs(flat).argmax()]:g}: larger ones overflow the statistics."
        )
    return values


def read_paired(
    first: object,
    second: object,
    names: tuple[str, str],
    read: Callable[[object, str], np.ndarray],
    alike: str,
) -> tuple[np.ndarray, np.ndarray]:
    """Two score arrays read by ``read`` (each given its argument's name), refused unless
    they have one shape; ``alike`` says what one shape means (``"on the same grid"``).

    Raises:
        ValueError: From ``read``, or shapes that differ.
    """
    a, b = read(first, names[0]), read(second, names[1])
    if a.shape != b.shape:
        raise ValueError(
            f"Expected `{names[0]}` and `{names[1]}` {alike}, got shapes {a.shape} and {b.shape}."
        )
    return a, b


def _paired_arrays(scores_a: Scores, scores_b: Scores) -> tuple[np.ndarray, np.ndarray]:
    return read_paired(
        scores_a, scores_b, ("scores_a", "scores_b"), _as_array, "to be scored on the same items"
    )


#: Units in the last place of a score that its rounding may move a difference or a mean
#: by: the scores' decimal forms round to binary, and a mean's summation rounds again.
_ROUNDING_ULPS = 16


def rounding_error(*magnitudes: np.ndarray | float) -> np.ndarray | float:
    """How far rounding may move a difference or mean of numbers this large (a few
    units in the last place of the largest)."""
    largest = magnitudes[0]
    for magnitude in magnitudes[1:]:
        largest = np.maximum(np.abs(largest), np.abs(magnitude))
    return _ROUNDING_ULPS * np.finfo(np.float64).eps * np.abs(largest)


def _differences(a: np.ndarray, b: np.ndarray, tie_tolerance: float) -> np.ndarray:
    """``a - b``, with the differences no larger than ``tie_tolerance`` set to 0."""
    check_non_negative_number(tie_tolerance, "tie_tolerance")
    differences = a - b
    ties = np.abs(differences) <= tie_tolerance + rounding_error(a, b)
    return np.where(ties, 0.0, differences)


#: Resampled values drawn at a time: the draws are the same as in one go (the generator
#: is sequential), without a (resamples, items) array of 16 GB for a million items.
_RESAMPLE_BLOCK = 1 << 20


def _resampled_means(values: np.ndarray, resamples: int, seed: int) -> np.ndarray:
    """The means of ``resamples`` samples of ``values`` drawn with replacement (seeded)."""
    rng = np.random.default_rng(seed)
    rows = max(1, _RESAMPLE_BLOCK // values.size)
    means = np.empty(resamples)
    for start in range(0, resamples, rows):
        stop = min(start + rows, resamples)
        indices = rng.integers(0, values.size, size=(stop - start, values.size))
        means[start:stop] = values[indices].mean(axis=1)
    return means


def bootstrap_interval(
    scores: Scores,
    *,
    confidence: float = CONFIDENCE,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> Interval:
    """Percentile bootstrap confidence interval of the mean of ``scores``.

    Example:
        >>> interval = bootstrap_interval([0.2, 0.4, 0.6, 0.8], resamples=200)
        >>> round(interval.mean, 2), interval.low <= interval.mean <= interval.high
        (0.5, True)
    """
    check_between_0_and_1(confidence, "confidence")
    resamples = check_positive_int(resamples, "resamples")
    values = _as_array(scores, "scores")
    means = _resampled_means(values, resamples, seed)
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(means, [tail, 1.0 - tail])
    return Interval(float(values.mean()), float(low), float(high), confidence, values.size)


def paired_bootstrap(
    scores_a: Scores,
    scores_b: Scores,
    *,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    tie_tolerance: float = TIE_TOLERANCE,
) -> BootstrapResult:
    """Paired bootstrap resampling: how often each system wins on resampled item sets.

    Items whose scores differ by at most ``tie_tolerance`` count as ties, and so does a
    resample whose mean difference is that small, as :func:`compare_systems` treats the
    means of all the items.

    Example:
        >>> result = paired_bootstrap([0.9, 0.8, 0.7, 0.9], [0.5, 0.4, 0.6, 0.5], resamples=100)
        >>> result.wins_a, result.wins_b, round(result.p_value, 4)
        (100, 0, 0.0198)
    """
    resamples = check_positive_int(resamples, "resamples")
    a, b = _paired_arrays(scores_a, scores_b)
    differences = _differences(a, b, tie_tolerance)
    means = _resampled_means(differences, resamples, seed)
    # +0.1 and -0.1 three times each average to 1e-17, not 0: rounding, not a win.
    tied = np.abs(means) <= tie_tolerance + rounding_error(np.abs(differences).max())
    wins_a = int((~tied & (means > 0)).sum())
    wins_b = int((~tied & (means < 0)).sum())
    ties = resamples - wins_a - wins_b
    if a.size < 2:
        return BootstrapResult(wins_a, wins_b, ties, resamples, math.nan)
    not_won = resamples - max(wins_a, wins_b)
    p_value = min(1.0, 2.0 * (not_won + 1) / (resamples + 1))
    return BootstrapResult(wins_a, wins_b, ties, resamples, p_value)


def paired_t_test(
    scores_a: Scores,
    scores_b: Scores,
    *,
    tie_tolerance: float = TIE_TOLERANCE,
) -> TTestResult:
    """Two-sided paired t-test of ``scores_a - scores_b``.

    Differences of at most ``tie_tolerance`` count as 0.

    Example:
        >>> result = paired_t_test([0.9, 0.8, 0.7, 0.9], [0.5, 0.4, 0.6, 0.5])
        >>> result.statistic > 0, result.p_value < 0.05
        (True, True)
    """
    a, b = _paired_arrays(scores_a, scores_b)
    differences = _differences(a, b, tie_tolerance)
    if np.all(differences == 0):
        return TTestResult(statistic=0.0, p_value=1.0)
    if a.size < 2:
        return TTestResult(statistic=math.nan, p_value=math.nan)
    # Equal differences, up to the rounding of each a - b (0.2 - 0.1 is not 0.3 - 0.2):
    # what is left is rounding noise, which would give a t of about 1e15. They are equal
    # when one value lies within every difference's own rounding bound (a bound from
    # the largest score of all would let one score of 1e12 flatten every other item).
    rounding = rounding_error(a, b)
    if np.max(differences - rounding) <= np.min(differences + rounding):
        # The limit as the variance goes to 0, and scipy's answer (computed here so as
        # not to pass on its precision-loss warning). A clean sweep is significant.
        return TTestResult(math.copysign(math.inf, differences.mean()), p_value=0.0)
    # ttest_rel(a, b) is this test of a - b; the differences here have the ties zeroed.
    from scipy import stats as scipy_stats  # seconds to import; only this test needs it

    statistic, p_value = scipy_stats.ttest_1samp(differences, 0.0)
    return TTestResult(float(statistic), float(p_value))


def compare_systems(
    scores_a: Scores,
    scores_b: Scores,
    *,
    name_a: str = "A",
    name_b: str = "B",
    alpha: float = ALPHA,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    tie_tolerance: float = TIE_TOLERANCE,
) -> Comparison:
    """Compare two systems scored on the same items: winner and significance.

    Two means no further apart than ``tie_tolerance`` are a tie (no winner), and items
    whose scores differ by at most that much count as ties in both tests.

    Example:
        >>> comparison = compare_systems(
        ...     [0.9, 0.8, 0.7, 0.9], [0.5, 0.4, 0.6, 0.5], name_a="bart", name_b="pgn"
        ... )
        >>> comparison.winner, comparison.significant
        ('bart', True)
    """
    check_between_0_and_1(alpha, "alpha")
    a, b = _paired_arrays(scores_a, scores_b)
    t_test = paired_t_test(a, b, tie_tolerance=tie_tolerance)
    bootstrap = paired_bootstrap(a, b, resamples=resamples, seed=seed, tie_tolerance=tie_tolerance)
    mean_a, mean_b = float(a.mean()), float(b.mean())
    # A sum rounds by a few units in the last place of the sizes it adds, not of its
    # result: scores of both signs averaging near 0 (COMET's) reordered give other means.
    if abs(mean_a - mean_b) <= tie_tolerance + rounding_error(np.abs(a).mean(), np.abs(b).mean()):
        winner = None
    else:
        winner = name_a if mean_a > mean_b else name_b
    significant = bool(winner is not None and t_test.p_value < alpha)
    return Comparison(
        name_a=name_a,
        name_b=name_b,
        mean_a=mean_a,
        mean_b=mean_b,
        difference=mean_a - mean_b,
        winner=winner,
        significant=significant,
        alpha=alpha,
        t_test=t_test,
        bootstrap=bootstrap,
    )
