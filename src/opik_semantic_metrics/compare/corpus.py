"""Experiment-level scoring of Opik results: system scores and paired comparisons.

- :func:`system_score_function` makes a function for ``opik.evaluate(...,
  experiment_scoring_functions=[...])``: the mean of a metric's item scores (the system
  score COMET reports) with a bootstrap confidence interval.
- :func:`compare_results` tells which of two systems scored on the same items is better and
  whether the difference is significant, with a paired t-test and paired bootstrap
  resampling, as unbabel-comet's ``comet-compare`` does (the statistics are
  :mod:`opik_semantic_metrics.compare.stats`).

Both read Opik's results: an ``EvaluationResult`` (from ``opik.evaluate``), an
``EvaluationResultOnDictItems`` (from ``opik.evaluate_on_dict_items``), their
``test_results`` list, or, for :func:`compare_results`, plain lists of scores. Items are matched
by dataset item id; an item scored in several trials counts with the mean of its
successful trials. An item whose score failed in every trial is never averaged in as
zero: the system score counts and names it, and :func:`compare_results` refuses to compare
without it. Opik results are read by
:func:`~opik_semantic_metrics.compare.experiments.collect_scores`, as experiments are, so
both see the same items in the same order.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from opik.evaluation.metrics import score_result

from opik_semantic_metrics.compare.comparable import (
    COMPARED_SETTINGS,
    RecordedSettings,
    comparison_warnings,
)
from opik_semantic_metrics.compare.experiments import collect_scores, item_order
from opik_semantic_metrics.compare.stats import (
    ALPHA,
    CONFIDENCE,
    RESAMPLES,
    SEED,
    TIE_TOLERANCE,
    Comparison,
    bootstrap_interval,
    compare_systems,
)
from opik_semantic_metrics.inputs import as_real_number, check_between_0_and_1, check_positive_int


@dataclass(frozen=True)
class ItemScores:
    """One metric's scores per dataset item.

    Attributes:
        metric_name: The metric read.
        scores: Item id to score (mean over the item's successful trials), in item order:
            ids sorted with their digit runs read as numbers ("item_2" before "item_10";
            :func:`~opik_semantic_metrics.compare.experiments.item_order`), so that
            results do not depend on the order Opik's threads finished in.
        failed: Ids of the items with no successful score for the metric, in item order.
    """

    metric_name: str
    scores: dict[str, float]
    failed: tuple[str, ...]


def _materialised(results: Any) -> Any:
    """``results`` read once: an Opik result as it is, anything else as a list (an
    iterator would be empty the second time it is read)."""
    return results if hasattr(results, "test_results") else list(results)


def _test_results(results: Any) -> list[Any] | None:
    """The test results of an Opik result or list of them; ``None`` for plain scores."""
    if hasattr(results, "test_results"):
        return list(results.test_results)
    items = list(results)
    if items and all(hasattr(item, "score_results") for item in items):
        return items
    return None


def _recorded(results: Any, metric_name: str, key: str) -> set[object]:
    """What the successful ``metric_name`` scores record under ``metadata[key]``: their
    weight type (``dtype``), model, layer or hash."""
    test_results = _test_results(results)
    if test_results is None:
        return set()
    return {
        str(score.metadata[key])
        for test in test_results
        for score in test.score_results
        if score.name == metric_name and not score.scoring_failed and key in (score.metadata or {})
    }


def collect_item_scores(results: Any, metric_name: str | None = None) -> ItemScores:
    """One metric's per-item scores from Opik results, or from a plain list of scores.

    Args:
        results: An Opik evaluation result, its ``test_results``, or a list of numbers
            (item ids are then the positions).
        metric_name: The score to read; ``None`` when the results hold only one.

    Raises:
        ValueError: ``metric_name`` is needed (several scores) or absent from the results,
            or a list holds something other than numbers.

    Example:
        >>> collect_item_scores([0.5, 0.25]).scores
        {'0': 0.5, '1': 0.25}
    """
    results = _materialised(results)
    test_results = _test_results(results)
    if test_results is None:
        scores = {}
        for index, value in enumerate(results):
            # Numbers by the package's rule, 0-d tensors included (bert_score's scores).
            number = as_real_number(value)
            if number is None:
                raise ValueError(
                    "Expected Opik results or a list of numbers, got "
                    f"{type(value).__name__} at position {index}."
                )
            scores[str(index)] = number
        return ItemScores(metric_name or "score", scores, ())
    # The experiment's name shows only in the error for repeated items, which "mean" spares.
    collected = collect_scores(test_results, "results", trials="mean")
    names = sorted(collected.metrics)
    if metric_name is None:
        if len(names) != 1:
            raise ValueError(f"Expected `metric_name`: the results hold scores {names}.")
        [metric_name] = names
    elif not _names_a_score(metric_name, collected.scores, collected.failed):
        raise ValueError(f"No score named {metric_name!r} in the results: found {names}.")
    scores = dict(collected.scores.get(metric_name, {}))
    # Every item without a successful score, whether its score failed or is missing.
    failed = tuple(item for item in collected.items if item not in scores)
    return ItemScores(metric_name, scores, failed)


def _names_a_score(
    metric_name: str, scored: Mapping[str, object], failed: Mapping[str, object]
) -> bool:
    """Whether ``metric_name`` is a score in these results, or one of a metric that failed
    on every item.

    A metric of several scores (``bertscore_f1``, ...) fails under its own name
    (``bertscore``): where it failed on every item, only that name is there, and
    ``bertscore_f1`` is a score of it. Where it scored some items, ``bertscore`` is no
    score: reading it would report every item as failed.
    """
    if metric_name in scored:
        return True
    if metric_name in failed:
        return not any(name.startswith(f"{metric_name}_") for name in scored)
    return any(metric_name.startswith(f"{name}_") and name not in scored for name in failed)


def system_score_function(
    metric_name: str,
    *,
    confidence: float = CONFIDENCE,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> Callable[[list[Any]], list[score_result.ScoreResult]]:
    """An experiment scoring function: the mean of ``metric_name`` over the items.

    The score is named ``<metric_name>_system``; its metadata hold the item count, the
    bootstrap interval and the failed items, which are named, not averaged in. With no
    item scored, the function raises ``ValueError``: Opik then logs it and shows no
    system score, where a failed result's 0.0 was printed in its summary as a score.

    Example:
        >>> system_score_function("comet").__name__
        'comet_system_score'
    """

    # Checked now: Opik logs what this function raises at the end of the run as a
    # warning, so a bad setting would cost the system score of a whole experiment.
    check_between_0_and_1(confidence, "confidence")
    resamples = check_positive_int(resamples, "resamples")

    def system_score(test_results: list[Any]) -> list[score_result.ScoreResult]:
        collected = collect_item_scores(test_results, metric_name)
        name = f"{metric_name}_system"
        failed = list(collected.failed)
        if not collected.scores:
            raise ValueError(
                f"No item has a {metric_name} score ({len(failed)} failed, e.g. "
                f"{failed[:3]}): there is no {name} score."
            )
        interval = bootstrap_interval(
            list(collected.scores.values()),
            confidence=confidence,
            resamples=resamples,
            seed=seed,
        )
        reason = (
            f"Mean {metric_name} of {interval.count} items: {interval.mean:.4f}, "
            f"{confidence:.0%} bootstrap interval [{interval.low:.4f}, {interval.high:.4f}]"
        )
        if failed:
            reason += f"; {len(failed)} items failed and are not averaged in"
        return [
            score_result.ScoreResult(
                name=name,
                value=interval.mean,
                reason=reason + ".",
                metadata={
                    "count": interval.count,
                    "low": interval.low,
                    "high": interval.high,
                    "confidence": confidence,
                    "failed": len(failed),
                    "failed_items": failed,
                },
            )
        ]

    system_score.__name__ = f"{metric_name}_system_score"
    return system_score


def compare_results(
    results_a: Any,
    results_b: Any,
    *,
    metric_name: str | None = None,
    name_a: str = "A",
    name_b: str = "B",
    alpha: float = ALPHA,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    tie_tolerance: float = TIE_TOLERANCE,
) -> Comparison:
    """Which of two systems scored on the same items wins, and is it significant?

    Args:
        results_a, results_b: Opik evaluation results (or their ``test_results``) of the
            two systems on the same dataset, or two lists of scores in the same item order.
        metric_name: The score to compare; ``None`` when the results hold only one.
        name_a, name_b: The systems' names in the verdict.
        alpha: Significance level of the paired t-test.
        resamples: Paired bootstrap resamples.
        seed: Seed of the resampling.
        tie_tolerance: Per-item differences, and a difference of the means, no larger
            than this are ties (the default, 1e-6, is how closely our metrics agree on one
            text across batchings); ``0.0`` compares exactly but for the scores' rounding.

    Returns:
        The :class:`~opik_semantic_metrics.compare.stats.Comparison`: means, winner,
        significance, t-test and bootstrap.

    Raises:
        ValueError: Items scored in one system only, items whose score failed, scores
            computed in different weight types (``metadata["dtype"]``: float32 and the fast
            mode; :func:`~opik_semantic_metrics.compare.comparable.comparison_warnings`),
            or a metric name that is needed or absent.

    Example:
        >>> verdict = compare_results([0.81, 0.74, 0.9, 0.66], [0.7, 0.61, 0.8, 0.6], name_a="new")
        >>> verdict.winner, verdict.significant
        ('new', True)
    """
    collected = []
    recorded = []
    for name, given in ((name_a, results_a), (name_b, results_b)):
        results = _materialised(given)
        items = collect_item_scores(results, metric_name)
        if items.failed:
            raise ValueError(
                f"{len(items.failed)} items of {name} have no {items.metric_name} score "
                f"(failed), e.g. {list(items.failed[:3])}: a paired comparison needs every item."
            )
        collected.append(items.scores)
        recorded.append(
            RecordedSettings.of(
                name,
                dtypes=_recorded(results, items.metric_name, "dtype"),
                settings={
                    key: _recorded(results, items.metric_name, key) for key in COMPARED_SETTINGS
                },
            )
        )
    for message in comparison_warnings(*recorded):
        # One model named two ways is possible: a warning, not a refusal.
        warnings.warn(message, UserWarning, stacklevel=2)
    scores_a, scores_b = collected
    if scores_a.keys() != scores_b.keys():
        only = sorted(scores_a.keys() ^ scores_b.keys(), key=item_order)
        raise ValueError(
            f"Expected both systems to be scored on the same items; {len(only)} items are "
            f"in one only, e.g. {only[:3]}."
        )
    return compare_systems(
        list(scores_a.values()),
        [scores_b[item] for item in scores_a],
        name_a=name_a,
        name_b=name_b,
        alpha=alpha,
        resamples=resamples,
        seed=seed,
        tie_tolerance=tie_tolerance,
    )


#: The name :func:`compare_results` had before the package and the ``compare`` command
#: shared it; kept so that code calling it by that name keeps working.
compare = compare_results
