"""A scored dataset to an Opik experiment, without scoring any item again.

:func:`log_to_opik` sends the scores that :func:`~.scoring.score_dataset` wrote into a
dataset's columns, through Opik's public client: either a new experiment (dataset items,
one trace a row with its feedback scores, the experiment items linking them), or feedback
scores on the traces of an existing experiment's items, matched by dataset item id. Both
also log the experiment-level scores: the mean of each score with its bootstrap interval,
made by :func:`~opik_semantic_metrics.compare.corpus.system_score_function`, the function
``experiment_scoring_functions`` hands to ``opik.evaluate``, read from the same kind of
test results Opik's evaluation gives it.

The building of what is sent (:func:`feedback_scores`, :func:`experiment_scores`,
:func:`new_experiment_records`) is separate from the sending, so that it can be checked
without an Opik server.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from opik.evaluation.metrics import score_result
from opik.evaluation.test_case import TestCase
from opik.evaluation.test_result import TestResult

from opik_semantic_metrics.compare.corpus import system_score_function
from opik_semantic_metrics.compare.stats import CONFIDENCE, RESAMPLES, SEED
from opik_semantic_metrics.distributed.blueprint import MetricBlueprint, blueprint_of

logger = logging.getLogger(__name__)

Row = Mapping[str, Any]


@dataclass(frozen=True)
class ScoreColumns:
    """Where a metric's results are in a scored dataset.

    Attributes:
        metric_name: The metric's name (a failed row fails under it, as in Opik).
        score_names: One column per score.
        error_column: The column with each row's error message (``None`` where scored).
    """

    metric_name: str
    score_names: tuple[str, ...]
    error_column: str

    @classmethod
    def of(cls, metric: Any) -> ScoreColumns:
        """The columns of one of this package's metrics (or of its blueprint)."""
        blueprint = metric if isinstance(metric, MetricBlueprint) else blueprint_of(metric)
        return cls(blueprint.name, blueprint.score_names, blueprint.error_column)

    @property
    def all(self) -> tuple[str, ...]:
        """The score columns and the error column."""
        return (*self.score_names, self.error_column)


def score_results(row: Row, columns: ScoreColumns) -> list[score_result.ScoreResult]:
    """A row's scores as Opik gives a metric's results: one ScoreResult per score, or,
    for a failed row, one failed result under the metric's name with the error as reason."""
    error = row.get(columns.error_column)
    if error is not None:
        return [
            score_result.ScoreResult(
                name=columns.metric_name, value=0.0, reason=str(error), scoring_failed=True
            )
        ]
    return [
        score_result.ScoreResult(name=name, value=float(row[name])) for name in columns.score_names
    ]


def feedback_scores(
    rows: Iterable[tuple[str, Row]], columns: ScoreColumns, project_name: str | None = None
) -> list[dict[str, Any]]:
    """Opik's batch feedback scores (``BatchFeedbackScoreDict``) of ``(trace id, row)``
    pairs: one a score of each scored row. A failed row has no score to send (Opik keeps
    no failed feedback scores); it is counted by :func:`experiment_scores`."""
    scores: list[dict[str, Any]] = []
    for trace_id, row in rows:
        for result in score_results(row, columns):
            if result.scoring_failed:
                continue
            score: dict[str, Any] = {"id": trace_id, "name": result.name, "value": result.value}
            if project_name is not None:
                score["project_name"] = project_name
            scores.append(score)
    return scores


def experiment_scores(
    rows: Iterable[tuple[str, Row]],
    columns: ScoreColumns,
    *,
    confidence: float = CONFIDENCE,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> list[score_result.ScoreResult]:
    """The experiment-level scores of ``(dataset item id, row)`` pairs: per score, the
    mean with its bootstrap interval and the failed items counted, by the function
    ``experiment_scoring_functions`` gives Opik (``<score>_system``).

    Raises:
        ValueError: No row has a score (the system score would be undefined).
    """
    test_results = [
        TestResult(
            test_case=TestCase(trace_id="", dataset_item_id=item_id, task_output={}),
            score_results=score_results(row, columns),
            trial_id=0,
        )
        for item_id, row in rows
    ]
    results: list[score_result.ScoreResult] = []
    for name in columns.score_names:
        function = system_score_function(
            name, confidence=confidence, resamples=resamples, seed=seed
        )
        results.extend(function(test_results))
    return results


@dataclass(frozen=True)
class ExperimentRecord:
    """One row of a new experiment: its dataset item, its trace and their ids."""

    dataset_item_id: str
    trace_id: str
    item: dict[str, Any]
    output: dict[str, Any]
    scores: list[dict[str, Any]]


def new_experiment_records(
    rows: Iterable[Row], columns: ScoreColumns, output_columns: Sequence[str]
) -> list[ExperimentRecord]:
    """Dataset items (every column but the outputs and the results), traces (the output
    columns) and their feedback scores, with fresh Opik ids, one record per row."""
    from opik import id_helpers

    records = []
    for row in rows:
        item = {
            key: value
            for key, value in row.items()
            if key not in output_columns and key not in columns.all
        }
        output = {key: row[key] for key in output_columns}
        scores = [
            {"name": result.name, "value": result.value}
            for result in score_results(row, columns)
            if not result.scoring_failed
        ]
        records.append(
            ExperimentRecord(
                id_helpers.generate_id(), id_helpers.generate_id(), item, output, scores
            )
        )
    return records


def log_to_opik(
    scored: Any,
    metric: Any,
    *,
    experiment_name: str,
    dataset_name: str | None = None,
    dataset_item_id_column: str | None = None,
    output_columns: Sequence[str] = ("output",),
    project_name: str | None = None,
    client: Any = None,
    confidence: float = CONFIDENCE,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> list[score_result.ScoreResult]:
    """Log a scored dataset's scores to Opik, and the experiment-level scores.

    Two ways, by whether rows name dataset items:

    - ``dataset_item_id_column`` given: the experiment ``experiment_name`` exists, and
      each row's scores go, as feedback scores, to the trace of that experiment's item
      for the row's dataset item id.
    - otherwise: a new experiment ``experiment_name`` on the dataset ``dataset_name``
      (created if need be), one dataset item per row (every column but the output
      columns and the results), one trace per row (the output columns, the scores).

    Args:
        scored: What :func:`score_dataset` returned (a Ray Dataset), a pandas DataFrame
            or a list of row dicts.
        metric: The metric that scored it (its name gives the columns).
        experiment_name: The experiment to create or add to.
        dataset_name: The Opik dataset of a new experiment.
        dataset_item_id_column: The column holding each row's Opik dataset item id.
        output_columns: Columns that are the task's output in a new experiment.
        project_name: Opik project of the traces.
        client: An ``opik.Opik`` client (a new one by default).
        confidence, resamples, seed: Of the bootstrap interval.

    Returns:
        The experiment-level scores logged.

    Raises:
        ValueError: Neither ``dataset_name`` nor ``dataset_item_id_column``, or a row
            whose dataset item is not in the experiment.
    """
    import opik

    columns = ScoreColumns.of(metric)
    rows = list(_rows(scored))
    client = client if client is not None else opik.Opik()
    if dataset_item_id_column is not None:
        experiment, item_rows = _score_experiment_items(
            client, experiment_name, rows, columns, dataset_item_id_column, project_name
        )
    elif dataset_name is not None:
        experiment, item_rows = _new_experiment(
            client, experiment_name, dataset_name, rows, columns, output_columns, project_name
        )
    else:
        raise ValueError(
            "Pass `dataset_name` (a new experiment) or `dataset_item_id_column` (scores "
            "for an existing experiment's items)."
        )
    summary = experiment_scores(
        item_rows, columns, confidence=confidence, resamples=resamples, seed=seed
    )
    if hasattr(experiment, "log_experiment_scores"):
        experiment.log_experiment_scores(summary)
    else:
        logger.warning("This Opik client cannot log experiment scores: %s", summary)
    client.flush()
    return summary


def _score_experiment_items(
    client: Any,
    experiment_name: str,
    rows: Sequence[Row],
    columns: ScoreColumns,
    dataset_item_id_column: str,
    project_name: str | None,
) -> tuple[Any, list[tuple[str, Row]]]:
    """Each row's scores as feedback scores of the trace of the existing experiment's item
    the row names; returns the experiment and its ``(dataset item id, row)`` pairs.

    Raises:
        ValueError: A row whose dataset item is not in the experiment.
    """
    experiment = client.get_experiment_by_name(experiment_name)
    traces = {
        str(item.dataset_item_id): item.trace_id for item in experiment.get_items(max_results=None)
    }
    missing = [
        row[dataset_item_id_column]
        for row in rows
        if str(row[dataset_item_id_column]) not in traces
    ]
    if missing:
        raise ValueError(
            f"{len(missing)} rows name dataset items not in experiment "
            f"{experiment_name!r}, e.g. {missing[:3]}."
        )
    pairs = [(traces[str(row[dataset_item_id_column])], row) for row in rows]
    client.log_traces_feedback_scores(
        feedback_scores(pairs, columns, project_name), project_name=project_name
    )
    return experiment, [(str(row[dataset_item_id_column]), row) for row in rows]


def _new_experiment(
    client: Any,
    experiment_name: str,
    dataset_name: str,
    rows: Sequence[Row],
    columns: ScoreColumns,
    output_columns: Sequence[str],
    project_name: str | None,
) -> tuple[Any, list[tuple[str, Row]]]:
    """A new experiment on the dataset (created if need be): one dataset item and one
    trace with its scores per row; returns the experiment and its ``(dataset item id,
    row)`` pairs."""
    from opik.api_objects.experiment.experiment_item import ExperimentItemReferences

    records = new_experiment_records(rows, columns, output_columns)
    dataset = client.get_or_create_dataset(dataset_name)
    insert_options = {}
    if "deduplication" in inspect.signature(dataset.insert).parameters:
        insert_options["deduplication"] = False
    dataset.insert(
        [{"id": record.dataset_item_id, **record.item} for record in records],
        **insert_options,
    )
    experiment = client.create_experiment(dataset_name=dataset_name, name=experiment_name)
    for record in records:
        client.trace(
            id=record.trace_id,
            name="score_dataset",
            input=record.item,
            output=record.output,
            feedback_scores=record.scores,
            project_name=project_name,
        )
    experiment.insert(
        [
            ExperimentItemReferences(
                dataset_item_id=record.dataset_item_id, trace_id=record.trace_id
            )
            for record in records
        ]
    )
    return experiment, [
        (record.dataset_item_id, row) for record, row in zip(records, rows, strict=True)
    ]


def _rows(scored: Any) -> Iterable[Row]:
    """The rows of a Ray Dataset, a pandas DataFrame or a list of dicts."""
    if isinstance(scored, list):
        return scored
    if hasattr(scored, "iter_rows"):
        return scored.iter_rows()
    if hasattr(scored, "to_dict"):
        records: list[Row] = scored.to_dict("records")
        return records
    raise ValueError(
        "Expected a Ray Dataset, a pandas DataFrame or a list of dicts, got "
        f"{type(scored).__name__}."
    )
