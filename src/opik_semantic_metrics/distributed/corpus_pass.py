"""Statistics of a whole reference column on Ray, for a metric whose fitted state comes
from them (BERTScore's idf): counted per block on the actors by the metric itself
(:meth:`~opik_semantic_metrics.metrics.base.PackageMetric.reference_statistics`) and added
up here, so that the state equals one fitted on the column in one process."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pyarrow as pa
import ray
import ray.data

from opik_semantic_metrics.distributed.blueprint import MetricBlueprint
from opik_semantic_metrics.distributed.resources import Resources, thread_environment, use_threads


class ReferenceStatistics:
    """Per block: the metric's counts over the block's references."""

    def __init__(self, blueprint: MetricBlueprint, column: str, threads: int) -> None:
        use_threads(threads)
        self.column = column
        self.metric = blueprint.build("cpu")

    def __call__(self, batch: pa.Table) -> pa.Table:
        counts = self.metric.reference_statistics(batch.column(self.column).to_pylist())
        return pa.table(
            {
                "key": pa.array(list(counts), type=pa.int64()),
                "count": pa.array(list(counts.values()), type=pa.int64()),
            }
        )


def column_statistics(
    dataset: ray.data.Dataset,
    blueprint: MetricBlueprint,
    reference_column: str,
    resources: Resources,
    batch_size: int,
) -> dict[int, int]:
    """The metric's counts over the whole reference column, counted per block on the
    actors and added up here."""
    counted = dataset.select_columns([reference_column]).map_batches(
        ReferenceStatistics,
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
    totals: Counter[int] = Counter()
    block: Any
    for block in counted.iter_batches(batch_format="pyarrow", batch_size=None):
        for key, count in zip(
            block.column("key").to_pylist(), block.column("count").to_pylist(), strict=True
        ):
            totals[key] += count
    return dict(totals)
