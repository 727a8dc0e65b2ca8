"""Each benchmark case's figures, written the moment the case ends.

A benchmark step of ``gpu_suite.sh`` runs under a time limit; what it measured before the
limit must survive it. Every case therefore appends one JSON line to
``$BENCHMARK_RESULTS/<step>.jsonl`` (``benchmarks/results/`` without the variable) and
flushes it to disk before the next case starts; ``gpu_suite_table.py`` reads whatever
lines are there, and a line cut in half by a kill is skipped.

Lines carry a ``kind``: ``meta`` (the step's settings: pairs, device, which weights),
``case`` (one case of one round: its figures), ``peak`` (a float32 matmul peak) and
``work`` (the workload's useful encoder work, GFLOP).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


def results_dir() -> Path:
    """Where the steps write: ``$BENCHMARK_RESULTS``, else ``benchmarks/results``."""
    folder = Path(os.environ.get("BENCHMARK_RESULTS") or Path(__file__).parent / "results")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def record(step: str, kind: str, **figures: Any) -> None:
    """Append one line of ``step``'s figures and put it on disk now."""
    line = json.dumps({"kind": kind, **figures})
    with open(results_dir() / f"{step}.jsonl", "a", encoding="utf-8") as output:
        output.write(line + "\n")
        output.flush()
        os.fsync(output.fileno())


def read(results: Path, step: str) -> list[dict[str, Any]]:
    """Every whole line ``step`` wrote into ``results`` (none if it wrote nothing)."""
    path = results / f"{step}.jsonl"
    if not path.is_file():
        return []
    lines = []
    for text in path.read_text(encoding="utf-8").splitlines():
        try:
            lines.append(json.loads(text))
        except ValueError:  # the last line of a step killed while writing it
            continue
    return lines
