"""``score-dataset``'s input, checked before anything starts.

Starting a Ray cluster takes tens of seconds; a dataset that is missing, of a kind Ray's
readers do not take, or without the columns the metric reads is refused first, in one
line. The rules are those of :func:`opik_semantic_metrics.distributed.datasets.as_dataset`
and :func:`~opik_semantic_metrics.distributed.datasets.resolve_columns`, read from the
file's header (a CSV's first line, the first JSON line's keys, a Parquet file's schema)
without Ray.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping
from pathlib import Path

from opik_semantic_metrics.catalog import METRICS
from opik_semantic_metrics.cli.common import CliError
from opik_semantic_metrics.dataset_files import dataset_files, dataset_kind

#: The row arguments each ``--metric`` needs, from the catalog, which imports neither
#: Opik nor Ray.
REQUIRED_ARGUMENTS = {entry.command_name: entry.reads.required for entry in METRICS}
#: The row arguments each ``--metric`` reads where the dataset has them, from the catalog.
OPTIONAL_ARGUMENTS = {entry.command_name: entry.reads.optional for entry in METRICS}
#: Per command name, the arguments of which a dataset must have at least one.
ONE_OF_ARGUMENTS = {entry.command_name: entry.reads.one_of for entry in METRICS}


def check_column_arguments(metric: str, columns: Mapping[str, str]) -> None:
    """Refuse a ``--columns`` key the metric does not read (a misspelt ``refrence=gold``
    would otherwise leave the column unread), naming the keys it reads.

    Raises:
        CliError: A key that is no argument of the metric.

    Example:
        >>> check_column_arguments("bertscore", {"refrence": "gold"})  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        opik_semantic_metrics.cli.common.CliError: ...; its arguments are output, reference.
    """
    arguments = REQUIRED_ARGUMENTS[metric] + OPTIONAL_ARGUMENTS[metric]
    for argument, column in columns.items():
        if argument not in arguments:
            raise CliError(
                f"--columns {argument}={column}: --metric {metric} reads no argument "
                f"{argument!r}; its arguments are {', '.join(arguments)}."
            )


def check_dataset_input(
    path: str | Path, metric: str, columns: Mapping[str, str]
) -> list[str] | None:
    """Refuse a dataset ``score-dataset`` could not score, before Ray starts; return the
    columns of its first file (``None`` where they cannot be read without pyarrow).

    Args:
        path: The ``IN`` argument: a file, or a directory of files of one kind.
        metric: The ``--metric`` value.
        columns: The ``--columns`` mapping (metric argument -> column).

    Raises:
        CliError: The path does not exist, is of another kind, holds no data file or
            files of several kinds, or lacks a column the metric reads.

    Example:
        >>> check_dataset_input("hyps.txt", "bertscore", {})
        Traceback (most recent call last):
        ...
        opik_semantic_metrics.cli.common.CliError: hyps.txt does not exist.
    """
    location = Path(path)
    if not location.exists():
        raise CliError(f"{path} does not exist.")
    files = dataset_files(location)
    if dataset_kind(files) is None:
        suffixes = {p.suffix.lower() for p in files}
        found = ", ".join(sorted(suffix or "(none)" for suffix in suffixes)) or "no file"
        raise CliError(
            f"{path}: expected a Parquet (.parquet), JSON Lines (.jsonl) or CSV (.csv) file, "
            f"or a directory of files of one of these kinds; found {found}."
        )
    names = _column_names(files[0])
    if names is None:
        return None  # Parquet without pyarrow: the command's import error says what to install
    for argument, column in columns.items():
        if column not in names:
            raise CliError(
                f"{files[0]} has no column {column!r} (for {argument!r}); its columns are "
                f"{', '.join(names) or 'none'}."
            )
    missing = [
        argument
        for argument in REQUIRED_ARGUMENTS[metric]
        if argument not in columns and argument not in names
    ]
    one_of = ONE_OF_ARGUMENTS[metric]
    if one_of and not any(argument in columns or argument in names for argument in one_of):
        missing.append(" or ".join(one_of))
    if missing:
        first = missing[0].split(" or ")[0]
        raise CliError(
            f"No column for {', '.join(missing)} in {files[0]}: name it with --columns "
            f"{first}=COLUMN (its columns are {', '.join(names) or 'none'})."
        )
    return names


def _column_names(file: Path) -> list[str] | None:
    """The columns a file's header names (``None``: a Parquet file, and no pyarrow).

    Raises:
        CliError: The file cannot be read, or its first row is not a row.
    """
    try:
        if file.suffix.lower() == ".parquet":
            try:
                import pyarrow.parquet as pq
            except ImportError:
                return None
            try:
                return list(pq.read_schema(file).names)
            except Exception as error:  # pyarrow's own errors, for a file not Parquet
                raise CliError(f"{file} cannot be read as Parquet: {error}") from error
        with file.open(encoding="utf-8-sig", newline="") as handle:
            if file.suffix.lower() == ".csv":
                return next(csv.reader(handle), [])
            for line in handle:
                if line.strip():
                    row = json.loads(line)
                    if not isinstance(row, dict):
                        raise CliError(f"{file}: line 1 is not a JSON object (one row a line).")
                    return list(row)
            return []
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise CliError(f"{file} cannot be read: {error}") from error
