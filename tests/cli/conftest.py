"""Small aligned text files for the CLI tests, from the STS Benchmark fixture."""

from __future__ import annotations

from pathlib import Path

import pytest


def write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def text_files(tmp_path_factory, stsb_pairs) -> dict[str, Path]:
    """12 candidates with two aligned reference files, and the texts themselves."""
    folder = tmp_path_factory.mktemp("cli")
    candidates = [first for first, _, _ in stsb_pairs[:12]]
    references_1 = [second for _, second, _ in stsb_pairs[:12]]
    references_2 = [second for _, second, _ in stsb_pairs[100:112]]
    return {
        "candidates": write_lines(folder / "candidates.txt", candidates),
        "references_1": write_lines(folder / "references_1.txt", references_1),
        "references_2": write_lines(folder / "references_2.txt", references_2),
        "short": write_lines(folder / "short.txt", references_1[:5]),
    }
