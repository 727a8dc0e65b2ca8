"""A metric fitted on a whole reference column on Ray (BERTScore's idf, SemanticMatch's fit).

The metric's :class:`~opik_semantic_metrics.metrics.reference_fit.ReferenceFit` counts each
block's references on the actors (:class:`ReferenceCounter`), the counts are added up here,
and the fit turns the total into the fitted state: the state equals the one fitted on the
column in one process, however Ray splits it into blocks.
"""

from __future__ import annotations

import pickle
from typing import Any

import pyarrow as pa
import ray
import ray.data

from opik_semantic_metrics.distributed.blueprint import MetricBlueprint
from opik_semantic_metrics.distributed.resources import (
    Resources,
    set_torch_threads,
    thread_environment,
)
from opik_semantic_metrics.metrics.reference_fit import ReferenceCounts, ReferenceFit


class ReferenceCounter:
    """Per block: the metric's counts of the block's references, as one pickled row."""

    def __init__(self, blueprint: MetricBlueprint, column: str, threads: int) -> None:
        set_torch_threads(threads)
        self.column = column
        fit = blueprint.build("cpu").reference_fit()
        if fit is None:
            raise ValueError(f"{blueprint.kind} fits nothing on references.")
        self.fit: ReferenceFit = fit

    def __call__(self, batch: pa.Table) -> pa.Table:
        counts = self.fit.count(batch.column(self.column).to_pylist())
        return pa.table({"counts": pa.array([pickle.dumps(counts)], type=pa.binary())})


def column_counts(
    dataset: ray.data.Dataset,
    blueprint: MetricBlueprint,
    reference_column: str,
    resources: Resources,
    batch_size: int,
) -> ReferenceCounts[Any]:
    """The metric's counts of the whole reference column, counted per block on the
    actors and added up here."""
    counted = dataset.select_columns([reference_column]).map_batches(
        ReferenceCounter,
        fn_constructor_kwargs={
            "blueprint": blueprint,
            "column": reference_column,
            "threads": resources.threads_per_actor,
        },
        batch_size=batch_size * 4,
        batch_format="pyarrow",
        compute=ray.data.ActorPoolStrategy(size=resources.num_actors),
        num_cpus=resources.cpus_per_actor,
        runtime_env=thread_environment(resources.threads_per_actor),
    )
    total: ReferenceCounts[Any] = ReferenceCounts()
    block: Any
    for block in counted.iter_batches(batch_format="pyarrow", batch_size=None):
        for data in block.column("counts").to_pylist():
            total = total + pickle.loads(data)
    return total
