"""Which data files a dataset path holds, and of which kind: one rule for
:func:`~opik_semantic_metrics.distributed.datasets.as_dataset`, which reads them with Ray,
and for the command line's check of ``score-dataset``'s input, which runs before Ray starts
(so this module imports neither Ray nor Opik).

A path is a file, or a directory whose files, hidden ones aside (a name starting with
``.`` or ``_``, as Ray's and Spark's writers leave beside the data), are all of one kind.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Final

#: Each data file suffix and the kind of file it is (JSON files are read as JSON Lines).
DATASET_KINDS: Final = {
    ".parquet": "Parquet",
    ".jsonl": "JSON Lines",
    ".json": "JSON Lines",
    ".csv": "CSV",
}


def dataset_files(path: Path) -> list[Path]:
    """A directory's files, hidden ones aside, sorted by name; any other path itself.

    Raises:
        ValueError: The path does not exist.
    """
    if path.is_dir():
        return sorted(
            p for p in path.iterdir() if p.is_file() and not p.name.startswith((".", "_"))
        )
    if not path.exists():
        raise ValueError(f"No such file or directory: {str(path)!r}.")
    return [path]


def dataset_kind(files: Sequence[Path]) -> str | None:
    """The one kind of :data:`DATASET_KINDS` all ``files`` are of; ``None`` for no file, a
    suffix of no kind, or files of several kinds.

    Example:
        >>> dataset_kind([Path("a.jsonl"), Path("b.JSON")]), dataset_kind([Path("a.txt")])
        ('JSON Lines', None)
    """
    kinds = {DATASET_KINDS.get(file.suffix.lower()) for file in files}
    return kinds.pop() if len(kinds) == 1 else None
