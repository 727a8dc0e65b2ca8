"""``score_dataset``: one of this package's metrics over a Ray Dataset, on a pool of actors.

Ray Data does the distributing: it reads the input in blocks, streams them to a pool of
actors (:class:`BatchScorer`, built once each with the metric's settings and fitted
state, on a GPU when given one), restarts an actor that dies and retries its batch, and
shows its own progress bars. What this package adds is the metric's side: the columns the
metric reads (``datasets.py``), a metric fitted on the whole reference column and not per
block (``corpus_pass.py``), an error column in which a bad row is named instead of failing the run
(here), and resources sized so that the actors leave room for Ray's read tasks on a small
machine (``resources.py``).
"""

from __future__ import annotations

import dataclasses
import logging
import math
import sys
import time
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import ray
import ray.data
from opik.exceptions import MetricComputationError

from opik_semantic_metrics.distributed.blueprint import MetricBlueprint, blueprint_of
from opik_semantic_metrics.distributed.corpus_pass import column_counts
from opik_semantic_metrics.distributed.datasets import as_dataset, resolve_columns
from opik_semantic_metrics.distributed.resources import (
    Resources,
    plan_resources,
    set_torch_threads,
    thread_environment,
)
from opik_semantic_metrics.errors import InputError
from opik_semantic_metrics.inputs import check_positive_int

logger = logging.getLogger(__name__)

#: Rows per call of the metric on an actor, unless given: enough for the engines'
#: length-sorted batches and Ray's cost per block to pay, few enough for the progress
#: bar to move.
DEFAULT_BATCH_SIZE = 1024


@dataclass(frozen=True)
class ScoringSummary:
    """What a run did.

    Attributes:
        rows: Rows scored (each row of the input, once).
        failed_rows: Rows whose error column holds a message.
        seconds: Wall time from the start of the run to the last row scored, model loading
            and reading included (the idf pass and this summary's count are not).
        actors: Actors in the pool.
        gpus_per_actor: GPUs each actor had.
    """

    rows: int
    failed_rows: int
    seconds: float
    actors: int
    gpus_per_actor: float

    @property
    def rows_per_second(self) -> float:
        """Rows scored per second of wall time."""
        return self.rows / self.seconds if self.seconds > 0 else math.inf

    def __str__(self) -> str:
        where = f"{self.gpus_per_actor:g} GPU each" if self.gpus_per_actor else "on CPUs"
        return (
            f"Scored {self.rows} rows ({self.failed_rows} failed) in {self.seconds:.1f} s: "
            f"{self.rows_per_second:.1f} rows/s with {self.actors} actors ({where})."
        )


_summaries: weakref.WeakKeyDictionary[ray.data.Dataset, ScoringSummary] = (
    weakref.WeakKeyDictionary()
)


def scoring_summary(scored: ray.data.Dataset) -> ScoringSummary:
    """The summary of the run that made ``scored`` (returned by :func:`score_dataset`).

    Raises:
        ValueError: ``scored`` did not come from :func:`score_dataset`, or came from it
            with ``materialize=False`` (it has not run yet).
    """
    try:
        return _summaries[scored]
    except KeyError:
        raise ValueError(
            "This dataset has no scoring summary: it was not returned by score_dataset, or "
            "was returned with materialize=False (run, it is summarised by summarize_run)."
        ) from None


class BatchScorer:
    """The callable class Ray Data runs in each actor: the metric built once, then batches.

    Args:
        blueprint: The metric to build.
        columns: Metric argument -> column name.
        device: Where the model runs.
        threads: CPU threads PyTorch uses here.
    """

    def __init__(
        self, blueprint: MetricBlueprint, columns: Mapping[str, str], device: str, threads: int
    ) -> None:
        set_torch_threads(threads)
        self.blueprint = blueprint
        self.columns = dict(columns)
        self.metric = blueprint.build(device)

    def __call__(self, batch: pa.Table) -> pa.Table:
        rows = {
            argument: batch.column(column).to_pylist() for argument, column in self.columns.items()
        }
        values, errors = score_with_fallback(self.blueprint, self.metric, rows, batch.num_rows)
        for place, name in enumerate(self.blueprint.score_names):
            column = [None if row is None else row[place] for row in values]
            batch = batch.append_column(name, pa.array(column, type=pa.float64()))
        return batch.append_column(self.blueprint.error_column, pa.array(errors, type=pa.string()))


def score_with_fallback(
    blueprint: MetricBlueprint, metric: Any, rows: Mapping[str, list[Any]], count: int
) -> tuple[list[list[float] | None], list[str | None]]:
    """Score ``count`` rows in one call; where it fails, in halves, down to the bad rows.

    ``score_batch`` checks every item before scoring and fails the call for one bad item:
    the halves that hold none still score in batches, and each bad row gets the message
    the metric raised for it alone. No row is dropped.
    """
    values: list[list[float] | None] = [None] * count
    errors: list[str | None] = [None] * count
    pending = [list(range(count))] if count else []
    while pending:
        indices = pending.pop()
        subset = {name: [column[i] for i in indices] for name, column in rows.items()}
        try:
            scored = blueprint.score_rows(metric, subset)
        except Exception as error:
            if len(indices) == 1:
                errors[indices[0]] = _message(error)
            else:
                middle = len(indices) // 2
                pending.extend((indices[middle:], indices[:middle]))
            continue
        for index, row in zip(indices, scored, strict=True):
            values[index] = row
    return values, errors


def _message(error: BaseException) -> str:
    """The metric's own message for its failures; the type too for anything else."""
    if isinstance(error, MetricComputationError | InputError | ValueError):
        return str(error)
    return f"{type(error).__name__}: {error}"


def score_dataset(
    dataset: Any,
    metric: Any,
    *,
    columns: Mapping[str, str] | None = None,
    num_actors: int | None = None,
    cpus_per_actor: float | None = None,
    gpus_per_actor: float | None = None,
    batch_size: int | None = None,
    materialize: bool = True,
    fit_on_references: bool = False,
) -> ray.data.Dataset:
    """Score every row of ``dataset`` with ``metric`` on a pool of Ray actors.

    Connects to the Ray cluster already initialised in this process, or starts a local
    one (``ray.init()``, which joins the cluster at ``RAY_ADDRESS`` when that is set).

    Args:
        dataset: A ``ray.data.Dataset``, a pandas DataFrame, a list of dicts, or the path
            of a Parquet, JSON Lines (``.jsonl``) or CSV file or directory.
        metric: A BERTScore, SemanticMatch, COMET or AnswerMatch instance; its settings
            and fitted state (idf, SemanticMatch's fit) are what the actors use.
        columns: Metric argument -> column name (``{"output": "mt", "reference":
            "ref"}``); an argument left out reads the column of its own name.
        num_actors: Actors in the pool; by default one per GPU, or on CPUs one per 8 CPUs.
        cpus_per_actor: CPUs each actor reserves (a fraction is fine); by default what
            leaves one CPU for Ray's read tasks (see :func:`plan_resources`).
        gpus_per_actor: GPUs each actor reserves; ``None`` takes 1 where the cluster has
            GPUs, ``0`` keeps the models on CPUs.
        batch_size: Rows per call of the metric (default :data:`DEFAULT_BATCH_SIZE`).
        materialize: Run now and summarise (:func:`scoring_summary`); ``False`` returns
            the lazy dataset, which runs when read or written.
        fit_on_references: Fit the metric on the whole reference column first
            (SemanticMatch's idf and paragraph baseline, as ``fit`` does); ``metric``
            itself is left as it was. A metric that cannot score unfitted (BERTScore with
            ``idf=True`` and no idf) is fitted so without being asked.

    Returns:
        Every input row and column, and one float column per score (``bertscore_f1``...,
        ``None`` where the row failed) and ``<metric name>_error`` (``None``, or the
        message the metric raised for that row). Rows may come in another order than
        the input's; keep an id column to join on.

    Raises:
        ValueError: A metric of another kind, columns that do not fit, resources the
            cluster does not have, ``fit_on_references`` for a metric that fits nothing
            on references, or a reference column it cannot be fitted on.
    """
    blueprint = blueprint_of(metric)
    fit = metric.reference_fit()
    if fit_on_references and fit is None:
        raise ValueError(f"{type(metric).__name__} fits nothing on references.")
    data = as_dataset(dataset)
    mapping = resolve_columns(blueprint, columns, data.schema().names)
    if not ray.is_initialized():
        ray.init()
    resources = plan_resources(
        ray.cluster_resources(),
        num_actors,
        cpus_per_actor,
        gpus_per_actor,
        needs_model=blueprint.uses_model,
    )
    rows_per_call = check_positive_int(
        DEFAULT_BATCH_SIZE if batch_size is None else batch_size, "batch_size"
    )
    if fit is not None and (fit_on_references or fit.required):
        started = time.perf_counter()
        column = mapping["reference"]
        counts = column_counts(data, blueprint, column, resources, rows_per_call)
        try:
            state = fit.state(counts)
        except ValueError as error:
            raise ValueError(f"Column {column!r}: {error}") from error
        blueprint = dataclasses.replace(blueprint, state=state)
        logger.info(
            "%s fitted on the reference column in %.1f s.",
            blueprint.name,
            time.perf_counter() - started,
        )
    started = time.perf_counter()
    scored = data.map_batches(
        BatchScorer,
        fn_constructor_kwargs={
            "blueprint": blueprint,
            "columns": mapping,
            "device": resources.device,
            "threads": resources.threads_per_actor,
        },
        batch_size=rows_per_call,
        batch_format="pyarrow",
        compute=ray.data.ActorPoolStrategy(size=resources.num_actors),
        num_cpus=resources.cpus_per_actor,
        num_gpus=resources.gpus_per_actor,
        runtime_env=thread_environment(resources.threads_per_actor),
        # A dead actor is restarted and its batch retried: Ray Data's actor pools default
        # to max_restarts=-1 and max_task_retries=-1 (tests/distributed kills an actor).
    )
    if not materialize:
        return scored
    scored = scored.materialize()
    seconds = time.perf_counter() - started
    summary = summarize_run(scored, blueprint.error_column, seconds, resources)
    _summaries[scored] = summary
    logger.info("%s", summary)
    if ray.data.DataContext.get_current().enable_progress_bars:
        print(summary, file=sys.stderr)
    return scored


def summarize_run(
    scored: ray.data.Dataset, error_column: str, seconds: float, resources: Resources
) -> ScoringSummary:
    """Rows and failed rows of a scored dataset (read from its error column), with the
    run's time and actors."""
    rows = failed = 0
    batch: Any
    for batch in scored.select_columns([error_column]).iter_batches(
        batch_format="pyarrow", batch_size=None
    ):
        column = batch.column(error_column)
        rows += len(column)
        failed += len(column) - column.null_count
    return ScoringSummary(
        rows=rows,
        failed_rows=failed,
        seconds=seconds,
        actors=resources.num_actors,
        gpus_per_actor=resources.gpus_per_actor,
    )
