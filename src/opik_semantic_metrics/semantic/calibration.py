"""Fitting the layered score's weights and output curve to pairs people have scored.

Given the three levels of each labelled pair (see
:mod:`~opik_semantic_metrics.semantic.levels`) and its human score,
:func:`fit_combination` chooses

1. the weights, on a grid over the simplex in steps of :data:`WEIGHT_STEP`, as those whose
   weighted sum ranks the pairs most like the human scores (Spearman's correlation; the
   first of equals in grid order);
2. the floor and softness of the curve (:mod:`~opik_semantic_metrics.semantic.combine`),
   on the grids :data:`FLOORS` and :data:`SOFTNESSES`, as those whose scores lie nearest
   the human scores rescaled to ``[0, 1]`` (least squares). Every curve on the grid is
   smooth, so the curve never changes the order the weights gave.

:func:`cross_validate` measures what that buys on pairs the fit did not see: it splits
the pairs into folds (seeded), fits on all folds but one, and compares the held-out
Spearman of the fitted combination with that of a given one (the engine's default).

Example:
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> levels = rng.uniform(0, 1, size=(200, 3))
    >>> human = levels @ np.array([0.1, 0.1, 0.8])
    >>> combination = fit_combination(levels, human, snap=None)
    >>> tuple(round(weight, 2) for weight in combination.weights)
    (0.1, 0.1, 0.8)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np
from numpy.typing import NDArray
from scipy.stats import rankdata

from opik_semantic_metrics.semantic.combine import Combination

#: Step of the weight grid: 231 weight triples.
WEIGHT_STEP: Final = 0.05
#: Floors tried for the curve.
FLOORS: Final = tuple(round(0.05 * step, 2) for step in range(13))
#: Softnesses tried for the curve (all smooth: a hard floor ties pairs).
SOFTNESSES: Final = (0.01, 0.02, 0.05, 0.1, 0.15, 0.2)
#: Folds of the cross-validation.
DEFAULT_FOLDS: Final = 5
#: The fewest labelled pairs a calibration accepts: a few per fold and weight.
MIN_PAIRS: Final = 30

Array = NDArray[np.float64]


@dataclass(frozen=True)
class CalibrationReport:
    """What a calibration fitted and how it ranks pairs it was not fitted on.

    Attributes:
        combination: Weights and curve fitted on every pair.
        pairs: Labelled pairs fitted on (those the layered score could score).
        held_out_spearman: Per fold, the Spearman x100 of the combination fitted on the
            other folds, on the fold's pairs.
        default_spearman: Per fold, the Spearman x100 of the combination calibrated
            against (the engine's own) on the same pairs.
    """

    combination: Combination
    pairs: int
    held_out_spearman: tuple[float, ...]
    default_spearman: tuple[float, ...]

    @property
    def mean_held_out_spearman(self) -> float:
        """Mean of :attr:`held_out_spearman`."""
        return math.fsum(self.held_out_spearman) / len(self.held_out_spearman)

    @property
    def mean_default_spearman(self) -> float:
        """Mean of :attr:`default_spearman`."""
        return math.fsum(self.default_spearman) / len(self.default_spearman)


def weight_grid(step: float = WEIGHT_STEP) -> Array:
    """Every weight triple on the simplex in steps of ``step``, ``(triples, 3)``."""
    count = round(1 / step)
    return np.array(
        [
            (word / count, sentence / count, (count - word - sentence) / count)
            for word in range(count + 1)
            for sentence in range(count + 1 - word)
        ]
    )


def spearman(scores: Array, human: Array) -> Array:
    """Spearman's correlation of each column of ``scores`` (or of a vector) with
    ``human``; 0 for a column without spread."""
    matrix = scores.reshape(len(scores), -1)
    ranks = rankdata(matrix, axis=0)
    ranks -= ranks.mean(axis=0)
    target = rankdata(human)
    target -= target.mean()
    spread = np.sqrt((ranks**2).sum(axis=0) * (target**2).sum())
    with np.errstate(invalid="ignore", divide="ignore"):
        values = np.where(spread > 0, ranks.T @ target / spread, 0.0)
    return np.asarray(values, dtype=np.float64)


def final_scores(combination: Combination, levels: Array) -> Array:
    """The combination's final score of each row of ``levels`` (word, sentence,
    paragraph)."""
    return combination.final_array(levels @ np.array(combination.weights))


def best_weights(levels: Array, human: Array, step: float = WEIGHT_STEP) -> tuple[float, ...]:
    """The grid's weight triple whose weighted sum ranks ``levels`` most like ``human``."""
    grid = weight_grid(step)
    correlations = spearman(levels @ grid.T, human)
    return tuple(float(weight) for weight in grid[int(np.argmax(correlations))])


def fit_curve(
    weights: Sequence[float],
    levels: Array,
    human: Array,
    snap: float | None,
    unrelated: Array | None = None,
    unrelated_median: float = 1.0,
) -> Combination:
    """The floor and softness whose scores lie nearest ``human`` rescaled to ``[0, 1]``.

    Args:
        weights: The weights to keep.
        levels: ``(pairs, 3)`` word, sentence and paragraph levels.
        human: The pairs' human scores (any scale: rescaled by their range).
        snap: The snap to keep.
        unrelated: Levels of pairs known to be unrelated; with it, only curves that
            score their median at most ``unrelated_median`` are considered.
        unrelated_median: See ``unrelated``.

    Raises:
        ValueError: No curve on the grid meets the condition on unrelated pairs.
    """
    target = (human - human.min()) / (human.max() - human.min())
    best: tuple[float, Combination] | None = None
    for floor in FLOORS:
        for softness in SOFTNESSES:
            combination = Combination.create(weights, floor, snap, softness)
            if (
                unrelated is not None
                and float(np.median(final_scores(combination, unrelated))) > unrelated_median
            ):
                continue
            error = float(np.mean((final_scores(combination, levels) - target) ** 2))
            if best is None or error < best[0]:
                best = (error, combination)
    if best is None:
        raise ValueError(
            f"No curve on the grid scores the median unrelated pair at most {unrelated_median}."
        )
    return best[1]


def fit_combination(
    levels: Array,
    human: Array,
    snap: float | None,
    unrelated: Array | None = None,
    unrelated_median: float = 1.0,
) -> Combination:
    """The weights (:func:`best_weights`), then the curve (:func:`fit_curve`)."""
    weights = best_weights(levels, human)
    return fit_curve(weights, levels, human, snap, unrelated, unrelated_median)


def cross_validate(
    levels: Array,
    human: Array,
    against: Combination,
    folds: int = DEFAULT_FOLDS,
    seed: int = 0,
) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """Held-out Spearman x100 per fold: the combination fitted on the other folds, and
    ``against``, on the same pairs."""
    order = np.random.default_rng(seed).permutation(len(human))
    fitted: list[float] = []
    default: list[float] = []
    for held_out in np.array_split(order, folds):
        train = np.setdiff1d(order, held_out)
        combination = fit_combination(levels[train], human[train], against.snap)
        for scores, into in (
            (final_scores(combination, levels[held_out]), fitted),
            (final_scores(against, levels[held_out]), default),
        ):
            into.append(100 * float(spearman(scores, human[held_out])[0]))
    return tuple(fitted), tuple(default)
