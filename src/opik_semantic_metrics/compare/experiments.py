"""Run Opik experiments and compare them item by item.

Comparing two systems needs, per metric, the scores of the same items in the same
order; Opik gives one ``TestResult`` per dataset item (and trial) holding that item's
``ScoreResult``s. This module turns test results into per-item scores keyed by an item
field, in natural item order, "item_2" before "item_10" (:func:`collect_scores`, which
:mod:`~opik_semantic_metrics.compare.corpus` reads Opik results with too), summarises
experiments with bootstrap intervals and pairwise significance (:func:`summarize`, using
:mod:`~opik_semantic_metrics.compare.stats`), and runs experiments on an Opik server when
one is configured and on Opik's local engine otherwise (:class:`ExperimentRunner`).

A score whose computation failed (``scoring_failed``) is never silently dropped: it is
listed in :attr:`ExperimentScores.failed`, and :class:`MetricSummary` counts the items
left out of a comparison because some experiment has no score for them.
"""

from __future__ import annotations

import itertools
import math
import re
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from opik_semantic_metrics.compare.stats import (
    ALPHA,
    CONFIDENCE,
    RESAMPLES,
    SEED,
    Comparison,
    Interval,
    bootstrap_interval,
    compare_systems,
)
from opik_semantic_metrics.inputs import is_finite_number

# Opik is imported where it runs: the summaries and the command line's `compare-results`
# read scores without it, and importing it takes seconds.
if TYPE_CHECKING:
    from opik.config import OpikConfig
    from opik.evaluation.metrics.base_metric import BaseMetric
    from opik.evaluation.test_result import TestResult

Task = Callable[[dict[str, Any]], dict[str, Any]]
#: What :func:`collect_scores` does with an item scored in several results (trials):
#: ``"reject"`` raises, ``"mean"`` averages its successful scores.
Trials = Literal["reject", "mean"]


@dataclass(frozen=True)
class ExperimentScores:
    """Per-item scores of one experiment.

    Attributes:
        name: The experiment's (system's) name.
        items: Keys of every item the experiment ran on, in natural order (see
            :func:`item_order`).
        scores: Metric name (``ScoreResult.name``) -> item key -> score, in item order.
        failed: Name of a failed ``ScoreResult`` (Opik names it after the metric) ->
            keys of the items with no successful score of that name, in item order.
    """

    name: str
    items: tuple[str, ...]
    scores: Mapping[str, Mapping[str, float]]
    failed: Mapping[str, tuple[str, ...]]

    @property
    def metrics(self) -> tuple[str, ...]:
        """Names of the metrics with at least one score or failure, in first-seen order."""
        return tuple(dict.fromkeys([*self.scores, *self.failed]))


@dataclass(frozen=True)
class MetricSummary:
    """Several experiments compared on one metric, over the items all of them scored.

    Attributes:
        metric: The metric's name.
        intervals: Experiment name -> mean and bootstrap interval, in experiment order.
        comparisons: Every pair of experiments (earlier one as A), paired tests included.
        items: Number of items compared.
        excluded: Items some experiment ran on but not every experiment scored (a failed
            score, or an item missing from a run).
    """

    metric: str
    intervals: Mapping[str, Interval]
    comparisons: tuple[Comparison, ...]
    items: int
    excluded: int

    @property
    def ranking(self) -> tuple[str, ...]:
        """Experiment names from the highest mean to the lowest (tied ones in experiment
        order; see :attr:`ranks`)."""
        return tuple(sorted(self.intervals, key=lambda name: -self.intervals[name].mean))

    @property
    def ranks(self) -> dict[str, int]:
        """Experiment name -> rank, 1 for the best; an experiment whose comparison with
        the first of the experiments holding the rank above it is a tie (no winner) shares
        that rank, and the next rank skips as many ("1, 1, 3").

        Ties do not chain: with A's mean 1.8e-6 above C's and B's half-way, A ties B and
        B ties C, but A beats C, so the ranks are 1, 1, 3, not 1, 1, 1. (Means lie in
        order, so an experiment that ties the first of a rank ties every one between.)
        """
        ranking = self.ranking
        ranks = {ranking[0]: 1}
        first_of_rank = ranking[0]
        for position, name in enumerate(ranking[1:], start=2):
            if self.comparison(first_of_rank, name).winner is None:
                ranks[name] = ranks[first_of_rank]
            else:
                ranks[name], first_of_rank = position, name
        return ranks

    def comparison(self, first: str, second: str) -> Comparison:
        """The comparison of two experiments, whichever of them was A."""
        for comparison in self.comparisons:
            if {comparison.name_a, comparison.name_b} == {first, second}:
                return comparison
        raise KeyError(f"No comparison of {first!r} with {second!r} on {self.metric!r}.")


_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.IGNORECASE)


def item_order(key: str) -> tuple[list[str | tuple[int, str]], str]:
    """Sort key of an item key that orders its digit runs as numbers: "item_2" before
    "item_10", so that results do not depend on the order Opik's threads finished in.

    A digit run compares by its length without leading zeros, then its digits: the
    order of the numbers, without converting a run too long for ``int()``. The key itself
    breaks ties ("item_01" and "item_1"), so the order is total. A UUID sorts as text:
    Opik's dataset item ids are UUIDv7, whose text order is the order they were made in,
    and their hex digit runs read as numbers would scramble it.

    Example:
        >>> sorted(["item_10", "item_2", "item_1"], key=item_order)
        ['item_1', 'item_2', 'item_10']
    """
    if _UUID.fullmatch(key):
        return [key], key
    parts: list[str | tuple[int, str]] = []
    for index, part in enumerate(re.split(r"(\d+)", key)):
        digits = part.lstrip("0")
        # re.split puts the digit runs it splits on at the odd positions.
        parts.append((len(digits), digits) if index % 2 else part)
    return parts, key


def collect_scores(
    test_results: Sequence[TestResult],
    name: str,
    *,
    key_field: str | None = None,
    trials: Trials = "reject",
) -> ExperimentScores:
    """Per-item scores of one experiment's Opik test results.

    Args:
        test_results: ``EvaluationResult.test_results`` (from ``opik.evaluate`` or
            ``opik.evaluate_on_dict_items``), in any order.
        name: The experiment's name.
        key_field: Dataset item field that identifies an item across experiments (such as
            a document id); ``None`` uses Opik's dataset item id.
        trials: An item with several results (``opik.evaluate(..., trial_count=n)``, or
            a ``key_field`` shared by items): ``"reject"`` (a ValueError: a key that does
            not identify items would mix them) or ``"mean"`` (the mean of the item's
            successful scores of each metric, as a system score counts trials).

    Returns:
        The experiment's scores. An item is failed for a metric when it has a failed
        result, or a score that is not a finite number, and no successful score of that
        name.

    Raises:
        ValueError: An item lacks ``key_field``, two results share a key and ``trials``
            is ``"reject"``, a dataset item has two scores of one name in one trial
            (two metrics of one name, or two runs joined), or ``trials`` is neither.

    Example:
        >>> import opik
        >>> from opik.evaluation.metrics import Equals
        >>> result = opik.evaluate_on_dict_items(
        ...     items=[{"qid": "q1", "reference": "4"}, {"qid": "q2", "reference": "6"}],
        ...     task=lambda item: {"output": "4"},
        ...     scoring_metrics=[Equals(track=False)],
        ... )
        >>> collected = collect_scores(result.test_results, "always-4", key_field="qid")
        >>> dict(collected.scores["equals_metric"])
        {'q1': 1.0, 'q2': 0.0}
    """
    if trials not in ("reject", "mean"):
        raise ValueError(f"Expected `trials` to be 'reject' or 'mean', got {trials!r}.")
    # Metric name -> item key -> its successful scores; metric name -> keys it failed on.
    successes: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    failures: dict[str, set[str]] = defaultdict(set)
    seen: set[str] = set()
    # (dataset item id, trial, score name): each is one score, or two would be averaged.
    scored: set[tuple[str, object, str]] = set()
    for test in test_results:
        key = _item_key(test, key_field)
        if key in seen and trials == "reject":
            raise ValueError(
                f"Item {key!r} appears twice in experiment {name!r}: pass a `key_field` that "
                "identifies items, and one trial per item (or trials='mean' to average them)."
            )
        seen.add(key)
        for result in test.score_results:
            score = (str(test.test_case.dataset_item_id), test.trial_id, result.name)
            if score in scored:
                raise ValueError(
                    f"Item {score[0]!r} has two {result.name!r} scores in trial {score[1]} of "
                    f"experiment {name!r}: two metrics of one name (give each its own "
                    "`name`), or two runs' results joined (evaluate_on_dict_items names the "
                    "items of every run temp_item_0, temp_item_1...)."
                )
            scored.add(score)
            # NaN, inf or None (a third-party metric's) is no score to average: failed too.
            # A bool score reads as 1 or 0, as Opik averages it: the one exception to the
            # package's rule for numbers (opik_semantic_metrics.inputs).
            value = int(result.value) if isinstance(result.value, bool) else result.value
            if result.scoring_failed or not is_finite_number(value):
                failures[result.name].add(key)
            else:
                successes[result.name][key].append(float(value))
    ordered = sorted(seen, key=item_order)
    failed = {
        metric: tuple(
            key for key in ordered if key in keys and key not in successes.get(metric, {})
        )
        for metric, keys in failures.items()
    }
    return ExperimentScores(
        name=name,
        items=tuple(ordered),
        scores={
            metric: {
                key: math.fsum(by_key[key]) / len(by_key[key]) for key in ordered if key in by_key
            }
            for metric, by_key in successes.items()
        },
        # A metric whose failed trials all have a successful one beside them failed nowhere.
        failed={metric: keys for metric, keys in failed.items() if keys},
    )


def _item_key(test: TestResult, key_field: str | None) -> str:
    if key_field is None:
        return str(test.test_case.dataset_item_id)
    content = test.test_case.dataset_item_content
    if key_field not in content:
        raise ValueError(
            f"Expected every dataset item to have the field {key_field!r}; item "
            f"{test.test_case.dataset_item_id} has {sorted(content)}."
        )
    return str(content[key_field])


def aligned_scores(
    experiments: Sequence[ExperimentScores], metric: str
) -> tuple[list[str], dict[str, list[float]]]:
    """Scores of ``metric`` on the items every experiment scored, in one item order.

    Returns:
        ``(keys, values)``: the shared item keys (in :func:`item_order`) and, per
        experiment name, its scores for those keys in that order.
    """
    per_experiment = [experiment.scores.get(metric, {}) for experiment in experiments]
    keys = sorted(set.intersection(*(set(scores) for scores in per_experiment)), key=item_order)
    return keys, {
        experiment.name: [scores[key] for key in keys]
        for experiment, scores in zip(experiments, per_experiment, strict=True)
    }


def summarize(
    experiments: Sequence[ExperimentScores],
    metrics: Sequence[str] | None = None,
    *,
    confidence: float = CONFIDENCE,
    alpha: float = ALPHA,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> list[MetricSummary]:
    """Means, bootstrap intervals and pairwise significance of experiments, per metric.

    Args:
        experiments: Experiments over the same dataset, with distinct names.
        metrics: Metric names to summarise; ``None`` takes every score name of the
            first experiment that has a score there (not the name a failed metric's
            results carry, such as ``bertscore`` beside ``bertscore_f1``).
        confidence: Coverage of the bootstrap intervals.
        alpha: Significance level of the pairwise tests.
        resamples: Bootstrap resamples (intervals and paired bootstrap).
        seed: Seed of the resampling.

    Returns:
        One summary per metric, in order.

    Raises:
        ValueError: Fewer than two experiments, duplicate names, or a metric no item was
            scored on by every experiment.
    """
    names = [experiment.name for experiment in experiments]
    if len(names) < 2 or len(set(names)) != len(names):
        raise ValueError(f"Expected two or more experiments with distinct names, got {names}.")
    summaries = []
    for metric in metrics if metrics is not None else experiments[0].scores:
        keys, values = aligned_scores(experiments, metric)
        if not keys:
            raise ValueError(f"No item has a {metric!r} score in every experiment.")
        ran = set().union(*(experiment.items for experiment in experiments))
        intervals = {
            name: bootstrap_interval(scores, confidence=confidence, resamples=resamples, seed=seed)
            for name, scores in values.items()
        }
        comparisons = tuple(
            compare_systems(
                values[name_a],
                values[name_b],
                name_a=name_a,
                name_b=name_b,
                alpha=alpha,
                resamples=resamples,
                seed=seed,
            )
            for name_a, name_b in itertools.combinations(names, 2)
        )
        summaries.append(
            MetricSummary(
                metric=metric,
                intervals=intervals,
                comparisons=comparisons,
                items=len(keys),
                excluded=len(ran) - len(keys),
            )
        )
    return summaries


def opik_server_configured(config: OpikConfig | None = None) -> bool:
    """Whether Opik has somewhere to log to and tracking is on.

    True when a server URL or an API key is set, by ``OPIK_URL_OVERRIDE`` /
    ``OPIK_API_KEY`` or in the configuration file ``opik configure`` writes
    (``~/.opik.config``, or ``OPIK_CONFIG_PATH``), unless ``OPIK_TRACK_DISABLE`` turns
    tracking off.
    """
    if config is None:
        from opik.config import OpikConfig

        config = OpikConfig()
    if config.track_disable:
        return False
    return "url_override" in config.model_fields_set or config.api_key is not None


class ExperimentRunner:
    """Runs experiments over one set of dataset items, on Opik's server or locally.

    With a server (see :func:`opik_server_configured`) the items go into the Opik
    dataset ``dataset_name`` once (Opik skips items it already holds) and each
    :meth:`run` is an ``opik.evaluate`` experiment with its name and configuration, to
    compare in the Opik UI. An experiment runs on these items only, not on others the
    dataset holds from earlier runs (fewer items, or items since changed). Without a
    server, each run goes through ``opik.evaluate_on_dict_items``: the same engine,
    threads and metrics, no server.

    Args:
        items: Dataset items (JSON-serialisable dicts). No field may be named ``id``:
            Opik takes that as its own item id (a UUID) and its local engine rejects it.
        dataset_name: The Opik dataset's name.
        key_field: Item field identifying an item across experiments.
        online: Force the server (True) or local (False) mode; ``None`` decides by the
            Opik configuration.
        task_threads: Threads running the task and the metrics.

    Example:
        >>> from opik.evaluation.metrics import Equals
        >>> runner = ExperimentRunner(
        ...     [{"qid": "q1", "reference": "4"}], "arith", key_field="qid", online=False
        ... )
        >>> scores = runner.run("always-4", lambda item: {"output": "4"}, [Equals(track=False)])
        >>> dict(scores.scores["equals_metric"])
        {'q1': 1.0}
    """

    def __init__(
        self,
        items: Sequence[dict[str, Any]],
        dataset_name: str,
        *,
        key_field: str,
        online: bool | None = None,
        task_threads: int = 16,
    ) -> None:
        self.items = list(items)
        with_id = next((i for i, item in enumerate(self.items) if "id" in item), None)
        if with_id is not None:
            raise ValueError(
                f"Item {with_id} has a field named 'id', which Opik reserves for its own item "
                "id: rename it (for example 'item_id') and pass that as `key_field`."
            )
        self.dataset_name = dataset_name
        self.key_field = key_field
        self.online = opik_server_configured() if online is None else online
        self.task_threads = task_threads
        #: Experiment name -> its page in the Opik UI (server mode only).
        self.experiment_urls: dict[str, str | None] = {}
        self._dataset: Any = None
        self._item_ids: list[str] = []
        if self.online:
            import opik

            self._dataset = opik.Opik().get_or_create_dataset(dataset_name)
            self._dataset.insert(self.items)
            self._item_ids = stored_item_ids(self._dataset.get_items(), self.items)

    def run(
        self,
        name: str,
        task: Task,
        metrics: Sequence[BaseMetric],
        config: Mapping[str, Any] | None = None,
    ) -> ExperimentScores:
        """Run one experiment and collect its per-item scores.

        Args:
            name: Experiment name.
            task: Called with each dataset item; returns the fields the metrics read.
            metrics: The scoring metrics.
            config: ``experiment_config`` logged with the experiment (server mode).

        Returns:
            The experiment's per-item scores.
        """
        import opik

        if self.online:
            result = opik.evaluate(
                dataset=self._dataset,
                task=task,
                scoring_metrics=list(metrics),
                experiment_name=name,
                experiment_config=dict(config or {}),
                task_threads=self.task_threads,
                dataset_item_ids=self._item_ids,
                verbose=0,
            )
            self.experiment_urls[name] = result.experiment_url
            test_results = result.test_results
        else:
            test_results = opik.evaluate_on_dict_items(
                items=self.items,
                task=task,
                scoring_metrics=list(metrics),
                scoring_threads=self.task_threads,
            ).test_results
        return collect_scores(test_results, name, key_field=self.key_field)


def stored_item_ids(
    stored: Sequence[Mapping[str, Any]], items: Sequence[dict[str, Any]]
) -> list[str]:
    """Opik's ids of ``items`` among a dataset's ``stored`` items (``Dataset.get_items()``:
    each item's fields and its ``id``), matched by content as Opik deduplicates them.

    Raises:
        ValueError: An item the dataset does not hold.
    """
    from opik.api_objects.dataset.dataset_item import DatasetItem

    ids_by_hash = {
        DatasetItem(**{k: v for k, v in item.items() if k != "id"}).content_hash(): item["id"]
        for item in stored
    }
    ids = []
    for index, item in enumerate(items):
        item_id = ids_by_hash.get(DatasetItem(**item).content_hash())
        if item_id is None:
            raise ValueError(f"The Opik dataset does not hold item {index} after inserting it.")
        ids.append(str(item_id))
    return list(dict.fromkeys(ids))  # items equal in content are one dataset item
