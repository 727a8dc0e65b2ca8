"""BERTScore's idf over a whole reference column on Ray: document frequencies counted
per block on the actors and added up, equal to ``fit_idf`` on the column."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pyarrow as pa
import ray
import ray.data

from opik_semantic_metrics.bertscore.idf import IdfTable, idf_from_document_frequencies
from opik_semantic_metrics.distributed.recipe import MetricRecipe
from opik_semantic_metrics.distributed.resources import Resources, thread_environment, use_threads
from opik_semantic_metrics.errors import InputError
from opik_semantic_metrics.inputs import reference_texts
from opik_semantic_metrics.metrics.bertscore import BERTScore

#: The marker of the idf pass's row that carries the number of documents of a block.
_DOCUMENT_COUNT = -1


class DocumentFrequencies:
    """Per block: in how many reference texts each token id occurs, with the text count.

    Tokenised by the metric's own engine (the same truncation as ``fit_idf``); a
    reference that is not text is left out here, and fails its row when scored.
    """

    def __init__(self, recipe: MetricRecipe, column: str, threads: int) -> None:
        use_threads(threads)
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
        runtime_env=thread_environment(resources.threads_per_actor),
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
