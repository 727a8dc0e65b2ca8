"""Fitting the layered score's weights, penalties and output curve to pairs people have
scored.

Given the levels of each labelled pair (rows of
:data:`~opik_semantic_metrics.semantic.combine.LEVEL_COLUMNS`: the three levels of
:mod:`~opik_semantic_metrics.semantic.levels` and the two flip checks of
:mod:`~opik_semantic_metrics.semantic.flips`) and its human score,
:func:`fit_combination` chooses

1. the weights, on a grid over the simplex in steps of :data:`WEIGHT_STEP`, together with
   the two flip penalties, on the grid :data:`PENALTIES`, as those whose raw score ranks
   the pairs most like the human scores (Spearman's correlation; the first of equals in
   grid order). A check that no labelled pair trips keeps the penalty it had: the pairs
   say nothing about it. One weight triple is fitted, for texts of every length (the
   default's weights move with the texts' sentence count; a calibration's do not:
   calibrate on pairs like those to be scored);
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
    >>> levels = np.hstack([rng.uniform(0, 1, size=(200, 3)), np.zeros((200, 2))])
    >>> levels = np.hstack([levels, np.ones((200, 1))])  # one-sentence texts
    >>> levels[:50, 3] = 1.0  # a negation flip in the first 50 pairs
    >>> human = levels[:, :3] @ np.array([0.1, 0.1, 0.8]) - 0.2 * levels[:, 3]
    >>> combination = fit_combination(levels, human, Combination.create(snap=None))
    >>> tuple(round(weight, 2) for weight in combination.weights)
    (0.1, 0.1, 0.8)
    >>> combination.negation_penalty, combination.number_penalty
    (0.2, 0.2)
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

import numpy as np
from numpy.typing import NDArray
from scipy.stats import rankdata

from opik_semantic_metrics.inputs import finite_numbers
from opik_semantic_metrics.semantic.combine import Combination

#: Step of the weight grid: 231 weight triples.
WEIGHT_STEP: Final = 0.05
#: Flip penalties tried (each of the two checks).
PENALTIES: Final = (0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3)
#: Floors tried for the curve.
FLOORS: Final = tuple(round(0.05 * step, 2) for step in range(13))
#: Softnesses tried for the curve (all smooth: a hard floor ties pairs).
SOFTNESSES: Final = (0.01, 0.02, 0.05, 0.1, 0.15, 0.2)
#: Folds of the cross-validation.
DEFAULT_FOLDS: Final = 5
#: The fewest labelled pairs a calibration accepts: a few per fold and weight.
MIN_PAIRS: Final = 30

Array = NDArray[np.float64]


def check_human_scores(human_scores: object, count: int) -> NDArray[np.float64]:
    """Human scores, one finite real number per pair.

    Raises:
        ValueError: Not a list (or array) of as many finite numbers as there are pairs.
    """
    if isinstance(human_scores, str | bytes) or not isinstance(human_scores, Iterable):
        raise ValueError(
            f"Expected `human_scores` to be a list of numbers, got {type(human_scores).__name__}."
        )
    values = list(human_scores)
    if len(values) != count:
        raise ValueError(
            f"Expected one human score per pair: {count} pairs but {len(values)} human scores."
        )
    scores = finite_numbers(values, "human_scores", "human score")
    if scores.ndim != 1:
        raise ValueError(f"Expected one number a pair in `human_scores`, got shape {scores.shape}.")
    return scores


@dataclass(frozen=True)
class CalibrationReport:
    """What a calibration fitted and how it ranks pairs it was not fitted on.

    Attributes:
        combination: Weights, penalties and curve fitted on every pair.
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
    """The combination's final score of each row of ``levels`` (see
    :data:`~opik_semantic_metrics.semantic.combine.LEVEL_COLUMNS`)."""
    return combination.final_array(combination.raw_array(levels))


def best_weights(
    levels: Array, human: Array, like: Combination, step: float = WEIGHT_STEP
) -> tuple[tuple[float, float, float], float, float]:
    """The grid's weights and penalties whose raw score ranks ``levels`` most like
    ``human``: ``(weights, negation_penalty, number_penalty)``.

    A check no row trips keeps ``like``'s penalty.
    """
    grid = weight_grid(step)
    weighted = levels[:, :3] @ grid.T
    choices = [
        PENALTIES if levels[:, column].any() else (current,)
        for column, current in ((3, like.negation_penalty), (4, like.number_penalty))
    ]
    best: tuple[float, tuple[float, float, float], float, float] | None = None
    for negation in choices[0]:
        for numbers in choices[1]:
            penalised = weighted - (negation * levels[:, 3] + numbers * levels[:, 4])[:, None]
            correlations = spearman(penalised, human)
            at = int(np.argmax(correlations))
            if best is None or correlations[at] > best[0]:
                word, sentence, paragraph = (float(weight) for weight in grid[at])
                best = (float(correlations[at]), (word, sentence, paragraph), negation, numbers)
    assert best is not None
    return best[1], best[2], best[3]


def fit_curve(
    chosen: Combination,
    levels: Array,
    human: Array,
    unrelated: Array | None = None,
    unrelated_median: float = 1.0,
) -> Combination:
    """The floor and softness whose scores lie nearest ``human`` rescaled to ``[0, 1]``.

    Args:
        chosen: The weights, penalties and snap to keep.
        levels: ``(pairs, 5)`` levels (see
            :data:`~opik_semantic_metrics.semantic.combine.LEVEL_COLUMNS`).
        human: The pairs' human scores (any scale: rescaled by their range).
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
            combination = dataclasses.replace(chosen, floor=floor, softness=softness)
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
    like: Combination,
    unrelated: Array | None = None,
    unrelated_median: float = 1.0,
) -> Combination:
    """The weights and penalties (:func:`best_weights`), then the curve
    (:func:`fit_curve`); ``like`` gives the snap, and the penalty of a check no pair
    trips."""
    weights, negation, numbers = best_weights(levels, human, like)
    chosen = Combination.create(
        weights, like.floor, like.snap, like.softness, negation_penalty=negation,
        number_penalty=numbers, long_weights=None, aligned_flips=like.aligned_flips,
    )  # fmt: skip
    return fit_curve(chosen, levels, human, unrelated, unrelated_median)


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
        combination = fit_combination(levels[train], human[train], against)
        for scores, into in (
            (final_scores(combination, levels[held_out]), fitted),
            (final_scores(against, levels[held_out]), default),
        ):
            into.append(100 * float(spearman(scores, human[held_out])[0]))
    return tuple(fitted), tuple(default)
