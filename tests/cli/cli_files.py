"""Small aligned text files for the CLI tests, from the STS Benchmark fixture.

A helper module, not a ``conftest.py``: the suite collects doctests from every module, and
a second ``conftest`` module name would clash with ``tests/conftest.py``.
"""

from __future__ import annotations

from pathlib import Path


def write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def write_text_files(folder: Path, stsb_pairs: list[tuple[str, str, float]]) -> dict[str, Path]:
    """12 candidates with two aligned reference files, and a 5-line file."""
    candidates = [first for first, _, _ in stsb_pairs[:12]]
    references_1 = [second for _, second, _ in stsb_pairs[:12]]
    references_2 = [second for _, second, _ in stsb_pairs[100:112]]
    return {
        "candidates": write_lines(folder / "candidates.txt", candidates),
        "references_1": write_lines(folder / "references_1.txt", references_1),
        "references_2": write_lines(folder / "references_2.txt", references_2),
        "short": write_lines(folder / "short.txt", references_1[:5]),
    }
