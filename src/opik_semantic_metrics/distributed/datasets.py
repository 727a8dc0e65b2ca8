"""Reading the dataset to score: into a Ray Dataset, and which column each metric argument
reads."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import ray.data

from opik_semantic_metrics.dataset_files import dataset_files, dataset_kind
from opik_semantic_metrics.distributed.blueprint import MetricBlueprint


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
        kind = dataset_kind(dataset_files(path))
        text = str(path)
        if kind == "Parquet":
            return ray.data.read_parquet(text)
        if kind == "JSON Lines":
            return ray.data.read_json(text, lines=True)
        if kind == "CSV":
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


def resolve_columns(
    blueprint: MetricBlueprint, columns: Mapping[str, str] | None, names: Sequence[str]
) -> dict[str, str]:
    """Metric argument -> column: those given, then each argument whose name is a column.

    Raises:
        ValueError: An argument the metric does not read, a column the dataset lacks, a
            required argument without a column, or a result column the dataset already has.
    """
    mapping = dict(columns or {})
    for argument, column in mapping.items():
        if argument not in blueprint.arguments:
            raise ValueError(
                f"{blueprint.kind} reads no argument {argument!r}: it reads "
                f"{', '.join(blueprint.arguments)}."
            )
        if column not in names:
            raise ValueError(
                f"The dataset has no column {column!r} (for {argument!r}); its columns are "
                f"{', '.join(names)}."
            )
    for argument in blueprint.arguments:
        if argument not in mapping and argument in names:
            mapping[argument] = argument
    missing = [argument for argument in blueprint.required if argument not in mapping]
    one_of = blueprint.reads.one_of
    if one_of and not any(argument in mapping for argument in one_of):
        missing.append(" or ".join(one_of))
    if missing:
        raise ValueError(
            f"No column for {', '.join(missing)}: pass columns={{{missing[0]!r}: 'column name'}} "
            f"(the dataset's columns are {', '.join(names)})."
        )
    taken = [name for name in (*blueprint.score_names, blueprint.error_column) if name in names]
    if taken:
        raise ValueError(
            f"The dataset already has the result column(s) {', '.join(taken)}: rename them, or "
            "give the metric another name."
        )
    return mapping
