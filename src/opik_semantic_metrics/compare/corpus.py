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
by dataset item id, never by the order of the results (Opik lists them in the order its
threads finished); ``evaluate_on_dict_items`` names its items by their position in the list
it was given (``temp_item_0``, ...), so there they are matched by content instead (see
:func:`pair_items`); an item scored in several trials counts with the mean of its
successful trials. An item whose score failed in every trial is never averaged in as
zero: the system score counts and names it, and :func:`compare_results` refuses to compare
without it. Opik results are read by
:func:`~opik_semantic_metrics.compare.experiments.collect_scores`, as experiments are, so
both see the same items in the same order.
"""

from __future__ import annotations

import json
import re
import warnings
from collections import Counter
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


#: The ids ``opik.evaluate_on_dict_items`` gives its items: their positions in its list.
_POSITIONAL_ID = re.compile(r"temp_item_\d+")


def _content_value(value: object) -> str:
    """One text per item field value, equal for equal values whatever their key order."""
    return json.dumps(value, sort_keys=True, default=repr)


def _contents(test_results: list[Any]) -> dict[str, Mapping[str, Any]]:
    """Dataset item id -> the item's fields (one entry per item, whatever its trials),
    without ``id``: Opik puts the dataset item id there, which is no content."""
    return {
        str(test.test_case.dataset_item_id): {
            name: value
            for name, value in (test.test_case.dataset_item_content or {}).items()
            if name != "id"
        }
        for test in test_results
    }


def pair_items(
    results_a: list[Any], results_b: list[Any], *, key_field: str | None = None
) -> tuple[dict[str, str], dict[str, str]]:
    """The key that pairs each item of two runs: dataset item id -> pairing key, per run.

    - With ``key_field``, an item's value of that field (your own item id): every item
      must have it, and no two items of a run may share a value.
    - Otherwise an item's dataset item id, which identifies it on an Opik server. Where
      both runs come from ``opik.evaluate_on_dict_items``, whose ids (``temp_item_0``,
      ...) are only positions in the list it was given, items are paired by content: by
      the fields every item of both runs has and whose values are the same, as a whole,
      in both runs (the dataset's fields; a field holding the system's output differs
      and is left out). Two runs over the same items given in another order pair right.

    Args:
        results_a, results_b: The two runs' Opik test results.
        key_field: The item field that identifies an item, or ``None``.

    Returns:
        For each run, dataset item id -> pairing key.

    Raises:
        ValueError: An item without ``key_field``, a key shared by two items of a run
            (such items cannot be told apart), positional ids with no field common to
            both runs, or keys of one run that the other lacks.
    """
    contents = (_contents(results_a), _contents(results_b))
    if key_field is not None:
        keys = tuple(
            {item: _keyed(fields, key_field, item) for item, fields in run.items()}
            for run in contents
        )
        how = f"the item field {key_field!r}"
    elif all(_POSITIONAL_ID.fullmatch(item) for run in contents for item in run):
        fields = _dataset_fields(*contents)
        if not fields:
            raise ValueError(
                "Cannot pair the items of the two runs: evaluate_on_dict_items names items "
                "by their position (temp_item_0, ...), and no item field has the same "
                "values in both runs to pair them by. Give each item an id field of your own "
                "and pass it as `key_field`."
            )
        keys = tuple(
            {
                item: _content_value({name: values[name] for name in fields})
                for item, values in run.items()
            }
            for run in contents
        )
        how = f"their fields {list(fields)}"
    else:
        return ({item: item for item in contents[0]}, {item: item for item in contents[1]})
    for run, name in zip(keys, ("A", "B"), strict=True):
        shared = [key for key, count in Counter(run.values()).items() if count > 1]
        if shared:
            raise ValueError(
                f"Cannot pair the items of the two runs by {how}: in run {name}, "
                f"{sum(Counter(run.values())[key] for key in shared)} items share a value, "
                f"e.g. {shared[0]}. Give each item an id field of your own and pass it as "
                "`key_field`."
            )
    return keys[0], keys[1]


def _keyed(fields: Mapping[str, Any], key_field: str, item: str) -> str:
    if key_field not in fields:
        raise ValueError(
            f"Expected every dataset item to have the field {key_field!r} (`key_field`); "
            f"item {item} has {sorted(fields)}."
        )
    return _content_value(fields[key_field])


def _dataset_fields(*runs: Mapping[str, Mapping[str, Any]]) -> tuple[str, ...]:
    """The fields every item of every run has, with the same values (counted) in each run."""
    items = [fields for run in runs for fields in run.values()]
    if not items:
        return ()
    common = sorted(set.intersection(*(set(fields) for fields in items)))
    return tuple(
        name
        for name in common
        if len(
            {
                frozenset(Counter(_content_value(f[name]) for f in run.values()).items())
                for run in runs
            }
        )
        == 1
    )


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
    key_field: str | None = None,
) -> Comparison:
    """Which of two systems scored on the same items wins, and is it significant?

    Items are paired by dataset item id, or by content where ``evaluate_on_dict_items``
    gave the ids (:func:`pair_items`), never by the order of the results: Opik lists them
    in the order its threads finished, which differs from run to run.

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
        key_field: An item field that identifies each item in both runs (your own item
            id), to pair Opik results by; ``None`` pairs by dataset item id or content.

    Returns:
        The :class:`~opik_semantic_metrics.compare.stats.Comparison`: means, winner,
        significance, t-test and bootstrap.

    Raises:
        ValueError: Items that cannot be paired (:func:`pair_items`), items scored in one
            system only, items whose score failed, scores
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
    materialised = [_materialised(results_a), _materialised(results_b)]
    tests = [_test_results(results) for results in materialised]
    if key_field is not None and None in tests:
        raise ValueError("`key_field` pairs Opik results; plain lists of scores pair by position.")
    for name, results in zip((name_a, name_b), materialised, strict=True):
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
    if tests[0] is not None and tests[1] is not None:
        keys_a, keys_b = pair_items(tests[0], tests[1], key_field=key_field)
        # In run A's item order: where ids pair, the order it had before pairing by key.
        scores_a = {keys_a[item]: score for item, score in scores_a.items()}
        scores_b = {keys_b[item]: score for item, score in scores_b.items()}
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
