"""Agreement of a metric with human judgments: system-level and summary-level.

The two levels of Bhandari et al. (2020), "Re-evaluating Evaluation in Text
Summarization" (EMNLP), section 3, for a metric and a human score given on the same
(document, system) grid, ``grid[d][s]`` being system ``s``'s score on document ``d``
(:data:`ScoreGrid`):

- system level: the correlation, over systems, of each system's mean metric score with
  its mean human score (does the metric rank systems as people do?);
- summary level: for each document, the correlation, over systems, of the metric and the
  human scores of that document's summaries, averaged over documents (does it rank the
  summaries of one input as people do?). Documents where either score is the same for
  every system have no defined correlation and are left out, and counted.

Each level reports Pearson's r, Spearman's rho and Kendall's tau-b (scipy's defaults).

Metric scores no further apart than ``tie_tolerance`` (default 1e-6, as in
:mod:`~opik_semantic_metrics.compare.stats`) are made equal first: two systems that
wrote the same summary get scores that differ only by batching noise, and left apart,
that noise would rank one above the other where people gave them one score. Human
scores are taken as they are, but for the rounding of their means: two systems whose
human scores average to the same number rank level, whatever order the documents come in.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeAlias

import numpy as np
from scipy import stats as scipy_stats

from opik_semantic_metrics.compare.stats import (
    TIE_TOLERANCE,
    checked_scores,
    read_paired,
    rounding_error,
)
from opik_semantic_metrics.inputs import check_non_negative_number

#: Scores on a (documents, systems) grid: a sequence of rows or a two-dimensional array.
ScoreGrid: TypeAlias = Sequence[Sequence[float]] | np.ndarray


@dataclass(frozen=True)
class Correlation:
    """Three correlation coefficients of the same pairs of values.

    Attributes:
        pearson, spearman, kendall: Pearson's r, Spearman's rho, Kendall's tau-b.
        count: How many values each coefficient is computed on (systems at system
            level, documents averaged over at summary level).
        skipped: Documents left out at summary level (constant scores); 0 at system level.
    """

    pearson: float
    spearman: float
    kendall: float
    count: int
    skipped: int = 0


def _grid(scores: object, name: str) -> np.ndarray:
    values = checked_scores(scores, name)
    if values.ndim != 2 or values.shape[0] == 0 or values.shape[1] < 2:
        raise ValueError(
            f"Expected `{name}` as a (documents, systems) grid with two or more systems, "
            f"got shape {values.shape}."
        )
    return values


def _grids(metric: ScoreGrid, human: ScoreGrid) -> tuple[np.ndarray, np.ndarray]:
    return read_paired(metric, human, ("metric", "human"), _grid, "on the same grid")


def _tied(values: np.ndarray, tie_tolerance: float, sizes: np.ndarray | None = None) -> np.ndarray:
    """Each row's values within ``tie_tolerance`` (and rounding) of the highest of a
    group set to it: 0.7, 0.7000003, 0.5 -> 0.7000003, 0.7000003, 0.5. As in
    :attr:`~opik_semantic_metrics.compare.experiments.MetricSummary.ranks`, a group is
    anchored at its highest value and ties do not chain: 0.7000016, 0.7000008 and 0.7
    give 0.7000016, 0.7000016, 0.7.

    ``sizes`` (``values``' own sizes if not given) set the rounding allowed each value:
    for a mean, the mean size of the numbers it averages, which a sum rounds by."""
    check_non_negative_number(tie_tolerance, "tie_tolerance")
    tied = values.copy()
    sizes = np.abs(values) if sizes is None else sizes
    for row, row_sizes in zip(tied, sizes, strict=True):
        highest_first = np.argsort(-row, kind="stable")
        top = row[highest_first[0]]
        top_size = row_sizes[highest_first[0]]
        for index in highest_first[1:]:
            if top - row[index] <= tie_tolerance + rounding_error(top_size, row_sizes[index]):
                row[index] = top
            else:
                top, top_size = row[index], row_sizes[index]
    return tied


def _system_means(grid: np.ndarray, tie_tolerance: float) -> np.ndarray:
    """Each system's mean over the documents, the means ``tie_tolerance`` or rounding
    apart made equal."""
    means = grid.mean(axis=0)[np.newaxis]
    sizes = np.abs(grid).mean(axis=0)[np.newaxis]
    return _tied(means, tie_tolerance, sizes)[0]


def _coefficients(x: np.ndarray, y: np.ndarray) -> tuple[float, float, float]:
    with warnings.catch_warnings():
        # Tiny samples (3 systems) make scipy warn that its p-values are inexact; only
        # the coefficients are used here.
        warnings.simplefilter("ignore")
        return (
            float(scipy_stats.pearsonr(x, y).statistic),
            float(scipy_stats.spearmanr(x, y).statistic),
            float(scipy_stats.kendalltau(x, y).statistic),
        )


def system_level(
    metric: ScoreGrid, human: ScoreGrid, *, tie_tolerance: float = TIE_TOLERANCE
) -> Correlation:
    """Correlation of the systems' mean metric scores with their mean human scores.

    Args:
        metric, human: The metric's and the human scores on the same grid (see the
            module docstring).
        tie_tolerance: Metric means no further apart are equal; ``0.0`` keeps all but
            those apart only by rounding.

    Returns:
        The three coefficients over the systems (``count`` = number of systems).

    Raises:
        ValueError: Mismatched or malformed grids, or constant system means.

    Example:
        >>> result = system_level([[0.9, 0.5, 0.1], [0.7, 0.6, 0.2]],
        ...                       [[0.6, 0.4, 0.3], [0.5, 0.4, 0.4]])
        >>> round(result.pearson, 3), result.spearman, result.kendall, result.count
        (0.916, 1.0, 1.0, 3)
    """
    metric_grid, human_grid = _grids(metric, human)
    metric_means = _system_means(metric_grid, tie_tolerance)
    # 0.1, 0.2 and 0.3 average to 0.20000000000000004, 0.2 three times to 0.2: rounding,
    # which would rank the one system above the other by the order of the documents.
    human_means = _system_means(human_grid, 0.0)
    if np.ptp(metric_means) == 0 or np.ptp(human_means) == 0:
        raise ValueError("System-level correlation is undefined: a score is the same for all.")
    pearson, spearman, kendall = _coefficients(metric_means, human_means)
    return Correlation(pearson, spearman, kendall, count=metric_grid.shape[1])


def summary_level(
    metric: ScoreGrid, human: ScoreGrid, *, tie_tolerance: float = TIE_TOLERANCE
) -> Correlation:
    """Per-document correlation over systems, averaged over documents.

    Args:
        metric, human: The metric's and the human scores on the same grid (see the
            module docstring).
        tie_tolerance: A document's metric scores no further apart are equal; ``0.0``
            keeps all but those apart only by rounding.

    Returns:
        The averaged coefficients; ``count`` documents averaged, ``skipped`` documents
        left out because a score was constant over their systems.

    Raises:
        ValueError: Mismatched or malformed grids, or no document with a defined
            correlation.

    Example:
        >>> result = summary_level([[0.9, 0.5, 0.1], [0.2, 0.6, 0.7], [0.3, 0.3, 0.3]],
        ...                        [[0.6, 0.4, 0.3], [0.5, 0.4, 0.1], [0.2, 0.5, 0.1]])
        >>> round(result.pearson, 3), result.spearman, result.count, result.skipped
        (0.082, 0.0, 2, 1)
    """
    metric_grid, human_grid = _grids(metric, human)
    metric_grid = _tied(metric_grid, tie_tolerance)
    defined = (np.ptp(metric_grid, axis=1) > 0) & (np.ptp(human_grid, axis=1) > 0)
    if not defined.any():
        raise ValueError("Summary-level correlation is undefined: every document is constant.")
    rows = zip(metric_grid[defined], human_grid[defined], strict=True)
    per_document = np.array([_coefficients(m, h) for m, h in rows])
    pearson, spearman, kendall = per_document.mean(axis=0).tolist()
    return Correlation(
        pearson,
        spearman,
        kendall,
        count=int(defined.sum()),
        skipped=int((~defined).sum()),
    )
