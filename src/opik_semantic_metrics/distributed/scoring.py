"""``score_dataset``: one of this package's metrics over a Ray Dataset, on a pool of actors.

Ray Data does the distributing: it reads the input in blocks, streams them to a pool of
actors (:class:`BatchScorer`, built once each with the metric's settings and fitted
state, on a GPU when given one), restarts an actor that dies and retries its batch, and
shows its own progress bars. What this module adds is the metric's side: the columns the
metric reads, idf fitted on the whole reference column and not per block, an error
column in which a bad row is named instead of failing the run, and resources sized so
that the actors leave room for Ray's read tasks on a small machine.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import os
import sys
import time
import weakref
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import ray
import ray.data
from opik.exceptions import MetricComputationError

from opik_semantic_metrics.bertscore.idf import IdfTable, idf_from_document_frequencies
from opik_semantic_metrics.distributed.recipe import MetricRecipe, recipe_of
from opik_semantic_metrics.errors import InputError
from opik_semantic_metrics.inputs import check_positive_int, reference_texts
from opik_semantic_metrics.metrics.bertscore import BERTScore

logger = logging.getLogger(__name__)

#: Rows per call of the metric on an actor, unless given: enough for the engines'
#: length-sorted batches and Ray's cost per block to pay, few enough for the progress
#: bar to move.
DEFAULT_BATCH_SIZE = 1024
#: CPUs per actor when the models run on CPUs and ``num_actors`` is not given: several
#: actors of a few threads each keep more cores busy than one actor whose threads wait
#: for each other at the end of every operation (see ``batching/cpu_parallel.py``).
THREADS_PER_ACTOR = 8
#: The marker of the idf pass's row that carries the number of documents of a block.
_DOCUMENT_COUNT = -1


@dataclass(frozen=True)
class Resources:
    """How many actors, and what each asks Ray for.

    Attributes:
        num_actors: Actors in the pool.
        cpus_per_actor: The CPUs each reserves in Ray's accounting (may be a fraction).
        gpus_per_actor: The GPUs each reserves (0: the model runs on the CPU).
        threads_per_actor: The CPU threads PyTorch uses in each actor.
    """

    num_actors: int
    cpus_per_actor: float
    gpus_per_actor: float
    threads_per_actor: int

    @property
    def device(self) -> str:
        """Where an actor's model runs."""
        return "cuda" if self.gpus_per_actor > 0 else "cpu"


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


def _thread_environment(threads: int) -> dict[str, Any]:
    """The actors' runtime environment: OpenMP sized for the machine from the start.

    Ray sets ``OMP_NUM_THREADS`` to an actor's whole CPUs (1 for a fraction). Raising
    PyTorch's count afterwards with ``torch.set_num_threads`` leaves the engines' side by
    side CPU workers oversubscribed, at about half the speed, so the count is set where
    the actor process starts instead.
    """
    return {"env_vars": {"OMP_NUM_THREADS": str(max(1, threads))}}


def _use_threads(threads: int) -> None:
    """PyTorch on ``threads`` CPU threads, changed only where it is not already so."""
    import torch

    if torch.get_num_threads() != max(1, threads):
        torch.set_num_threads(max(1, threads))


class BatchScorer:
    """The callable class Ray Data runs in each actor: the metric built once, then batches.

    Args:
        recipe: The metric to build.
        columns: Metric argument -> column name.
        device: Where the model runs.
        threads: CPU threads PyTorch uses here.
    """

    def __init__(
        self, recipe: MetricRecipe, columns: Mapping[str, str], device: str, threads: int
    ) -> None:
        _use_threads(threads)
        self.recipe = recipe
        self.columns = dict(columns)
        self.metric = recipe.build(device)

    def __call__(self, batch: pa.Table) -> pa.Table:
        rows = {
            argument: batch.column(column).to_pylist() for argument, column in self.columns.items()
        }
        values, errors = score_with_fallback(self.recipe, self.metric, rows, batch.num_rows)
        for place, name in enumerate(self.recipe.score_names):
            column = [None if row is None else row[place] for row in values]
            batch = batch.append_column(name, pa.array(column, type=pa.float64()))
        return batch.append_column(self.recipe.error_column, pa.array(errors, type=pa.string()))


def score_with_fallback(
    recipe: MetricRecipe, metric: Any, rows: Mapping[str, list[Any]], count: int
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
            scored = recipe.score_rows(metric, subset)
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


class DocumentFrequencies:
    """Per block: in how many reference texts each token id occurs, with the text count.

    Tokenised by the metric's own engine (the same truncation as ``fit_idf``); a
    reference that is not text is left out here, and fails its row when scored.
    """

    def __init__(self, recipe: MetricRecipe, column: str, threads: int) -> None:
        _use_threads(threads)
        self.column = column
        metric = recipe.build("cpu")
        assert isinstance(metric, BERTScore)
        self.engine = metric.engine

    def __call__(self, batch: pa.Table) -> pa.Table:
        texts: list[str] = []
        for reference in batch.column(self.column).to_pylist():
            try:
                texts.extend(reference_texts(reference, "reference"))
            except InputError:
                continue
        frequencies: Counter[int] = Counter()
        for encoded in self.engine.text_encoder.encode_many(texts):
            frequencies.update(set(encoded.ids))
        frequencies[_DOCUMENT_COUNT] = len(texts)
        return pa.table(
            {
                "token_id": pa.array(list(frequencies), type=pa.int64()),
                "documents": pa.array(list(frequencies.values()), type=pa.int64()),
            }
        )


def corpus_idf(
    dataset: ray.data.Dataset,
    recipe: MetricRecipe,
    reference_column: str,
    resources: Resources,
    batch_size: int,
) -> IdfTable:
    """BERTScore's idf over the whole reference column: document frequencies counted per
    block on the actors, added up here; equal to ``fit_idf`` on the column.

    Raises:
        ValueError: No reference in the column is text.
    """
    counted = dataset.select_columns([reference_column]).map_batches(
        DocumentFrequencies,
        fn_constructor_kwargs={
            "recipe": recipe,
            "column": reference_column,
            "threads": resources.threads_per_actor,
        },
        batch_size=batch_size * 4,
        batch_format="pyarrow",
        compute=ray.data.ActorPoolStrategy(size=resources.num_actors),
        num_cpus=resources.cpus_per_actor,
        runtime_env=_thread_environment(resources.threads_per_actor),
    )
    totals: Counter[int] = Counter()
    block: Any
    for block in counted.iter_batches(batch_format="pyarrow", batch_size=None):
        for token_id, documents in zip(
            block.column("token_id").to_pylist(), block.column("documents").to_pylist(), strict=True
        ):
            totals[token_id] += documents
    num_documents = totals.pop(_DOCUMENT_COUNT, 0)
    if num_documents == 0:
        raise ValueError(
            f"No reference in column {reference_column!r} is text: idf cannot be fitted."
        )
    return idf_from_document_frequencies(totals, num_documents)


def plan_resources(
    cluster: Mapping[str, float],
    num_actors: int | None,
    cpus_per_actor: float | None,
    gpus_per_actor: float | None,
    needs_model: bool = True,
) -> Resources:
    """Actors and their resources, from what the caller gave and the cluster has.

    - GPUs: ``gpus_per_actor=None`` takes one GPU per actor when the cluster has GPUs;
      then one actor per GPU (``num_actors=None``). ``0`` keeps the models on CPUs.
    - CPUs: one actor per :data:`THREADS_PER_ACTOR` CPUs (at least one). Each reserves its
      share of the CPUs less one, at most 1: Ray's read tasks ask for 1 CPU each, and
      actors reserving every CPU would leave them none (on 2 CPUs, two actors of 1 CPU
      and a read task wait for each other for ever). An actor's PyTorch threads are its
      share of the cluster's CPUs, not of its reservation.

    Raises:
        ValueError: A count below 1, negative resources, or GPUs the cluster lacks.
    """
    total_cpus = float(cluster.get("CPU", 0.0))
    total_gpus = float(cluster.get("GPU", 0.0))
    if gpus_per_actor is None:
        gpus_per_actor = 1.0 if total_gpus >= 1 and needs_model else 0.0
    if gpus_per_actor < 0:
        raise ValueError(f"Expected `gpus_per_actor` to be 0 or more, got {gpus_per_actor}.")
    if gpus_per_actor > 0 and total_gpus < gpus_per_actor:
        raise ValueError(
            f"Expected a cluster with GPUs for gpus_per_actor={gpus_per_actor:g}, but it has "
            f"{total_gpus:g} GPUs: pass gpus_per_actor=0 to score on CPUs."
        )
    if num_actors is None:
        if gpus_per_actor > 0:
            num_actors = max(1, int(total_gpus // gpus_per_actor))
        else:
            num_actors = max(1, round(total_cpus / THREADS_PER_ACTOR))
    num_actors = check_positive_int(num_actors, "num_actors")
    if cpus_per_actor is None:
        cpus_per_actor = min(1.0, max(total_cpus - 1.0, total_cpus / 2) / num_actors)
        cpus_per_actor = max(0.01, round(cpus_per_actor, 2))
    if cpus_per_actor < 0:
        raise ValueError(f"Expected `cpus_per_actor` to be 0 or more, got {cpus_per_actor}.")
    threads = max(1, int(total_cpus // num_actors)) if total_cpus else 1
    return Resources(num_actors, float(cpus_per_actor), float(gpus_per_actor), threads)


def as_dataset(dataset: Any) -> ray.data.Dataset:
    """A Ray Dataset from a Dataset, a pandas DataFrame, a list of dicts, or a Parquet,
    JSON Lines or CSV path (a file or a directory of them), read by Ray's readers.

    Raises:
        ValueError: Anything else, or a path of another kind.
    """
    if isinstance(dataset, ray.data.Dataset):
        return dataset
    if isinstance(dataset, str | os.PathLike):
        path = Path(dataset)
        suffixes = [path.suffix.lower()] if path.is_file() else _suffixes(path)
        text = str(path)
        if suffixes and all(s == ".parquet" for s in suffixes):
            return ray.data.read_parquet(text)
        if suffixes and all(s in (".jsonl", ".json") for s in suffixes):
            return ray.data.read_json(text, lines=True)
        if suffixes and all(s == ".csv" for s in suffixes):
            return ray.data.read_csv(text)
        raise ValueError(
            f"Expected a Parquet, JSON Lines (.jsonl) or CSV file or directory, got {text!r}."
        )
    if isinstance(dataset, list):
        if not all(isinstance(row, Mapping) for row in dataset):
            raise ValueError("Expected a list of dicts (one a row).")
        return ray.data.from_items([dict(row) for row in dataset])
    module = type(dataset).__module__
    if module.startswith("pandas"):
        return ray.data.from_pandas(dataset)
    raise ValueError(
        "Expected a ray.data.Dataset, a pandas DataFrame, a list of dicts or a path, got "
        f"{type(dataset).__name__}."
    )


def _suffixes(directory: Path) -> list[str]:
    if not directory.is_dir():
        raise ValueError(f"No such file or directory: {str(directory)!r}.")
    return sorted(
        {
            p.suffix.lower()
            for p in directory.iterdir()
            if p.is_file() and not p.name.startswith((".", "_"))
        }
    )


def resolve_columns(
    recipe: MetricRecipe, columns: Mapping[str, str] | None, names: Sequence[str]
) -> dict[str, str]:
    """Metric argument -> column: those given, then each argument whose name is a column.

    Raises:
        ValueError: An argument the metric does not read, a column the dataset lacks, a
            required argument without a column, or a result column the dataset already has.
    """
    mapping = dict(columns or {})
    for argument, column in mapping.items():
        if argument not in recipe.arguments:
            raise ValueError(
                f"{recipe.kind} reads no argument {argument!r}: it reads "
                f"{', '.join(recipe.arguments)}."
            )
        if column not in names:
            raise ValueError(
                f"The dataset has no column {column!r} (for {argument!r}); its columns are "
                f"{', '.join(names)}."
            )
    for argument in recipe.arguments:
        if argument not in mapping and argument in names:
            mapping[argument] = argument
    missing = [argument for argument in recipe.required if argument not in mapping]
    if missing:
        raise ValueError(
            f"No column for {', '.join(missing)}: pass columns={{{missing[0]!r}: 'column name'}} "
            f"(the dataset's columns are {', '.join(names)})."
        )
    taken = [name for name in (*recipe.score_names, recipe.error_column) if name in names]
    if taken:
        raise ValueError(
            f"The dataset already has the result column(s) {', '.join(taken)}: rename them, or "
            "give the metric another name."
        )
    return mapping


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

    Returns:
        Every input row and column, and one float column per score (``bertscore_f1``...,
        ``None`` where the row failed) and ``<metric name>_error`` (``None``, or the
        message the metric raised for that row). Rows may come in another order than
        the input's; keep an id column to join on.

    Raises:
        ValueError: A metric of another kind, columns that do not fit, or resources the
            cluster does not have.
    """
    recipe = recipe_of(metric)
    data = as_dataset(dataset)
    mapping = resolve_columns(recipe, columns, data.schema().names)
    needs_reference = recipe.kind == "comet" and metric.engine.requires_references
    if needs_reference and "reference" not in mapping:
        raise ValueError(
            f"{metric.engine.model_name} needs references: pass columns={{'reference': ...}}."
        )
    if not ray.is_initialized():
        ray.init()
    resources = plan_resources(
        ray.cluster_resources(),
        num_actors,
        cpus_per_actor,
        gpus_per_actor,
        needs_model=recipe.requires_gpu_model,
    )
    rows_per_call = check_positive_int(
        DEFAULT_BATCH_SIZE if batch_size is None else batch_size, "batch_size"
    )
    if recipe.kind == "bertscore" and recipe.settings["idf"] and recipe.state is None:
        started = time.perf_counter()
        table = corpus_idf(data, recipe, mapping["reference"], resources, rows_per_call)
        recipe = dataclasses.replace(recipe, state=table)
        logger.info(
            "idf fitted on %d references in %.1f s.",
            table.num_documents,
            time.perf_counter() - started,
        )
    started = time.perf_counter()
    scored = data.map_batches(
        BatchScorer,
        fn_constructor_kwargs={
            "recipe": recipe,
            "columns": mapping,
            "device": resources.device,
            "threads": resources.threads_per_actor,
        },
        batch_size=rows_per_call,
        batch_format="pyarrow",
        compute=ray.data.ActorPoolStrategy(size=resources.num_actors),
        num_cpus=resources.cpus_per_actor,
        num_gpus=resources.gpus_per_actor,
        runtime_env=_thread_environment(resources.threads_per_actor),
        # A dead actor is restarted and its batch retried: Ray Data's actor pools default
        # to max_restarts=-1 and max_task_retries=-1 (tests/distributed kills an actor).
    )
    if not materialize:
        return scored
    scored = scored.materialize()
    seconds = time.perf_counter() - started
    summary = summarize_run(scored, recipe.error_column, seconds, resources)
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
