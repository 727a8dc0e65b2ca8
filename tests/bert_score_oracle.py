"""bert_score itself as the oracle: its scores, one pair at a time, for tests to compare with.

bert_score runs with ``batch_size=1``: its batched greedy match lets padding beat negative
token similarities (see ``bertscore/greedy.py``), and one pair at a time is its
padding-free value, the one ``BERTScoreEngine`` reproduces. ``nthreads=0`` keeps its
tokenisation in the calling process.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import torch
from bert_score import score as bert_score_score


def bert_score_prf(candidates: list[str], references: list, **options: object) -> torch.Tensor:
    """bert_score's P, R and F1 as a ``(pairs, 3)`` tensor, one pair at a time."""
    precision, recall, f1 = bert_score_score(
        candidates, references, batch_size=1, nthreads=0, **options
    )
    return torch.stack((precision, recall, f1), dim=1)


def minilm_prf(
    minilm_path: Path, candidates: list[str], references: list, **options: object
) -> torch.Tensor:
    """:func:`bert_score_prf` on the packaged all-MiniLM-L6-v2 at its last layer, 6."""
    return bert_score_prf(
        candidates, references, model_type=str(minilm_path), num_layers=6, **options
    )


def prf_table(results: Iterable[Any]) -> torch.Tensor:
    """Our results' P, R and F1 as a ``(pairs, 3)`` float64 tensor, to set beside
    :func:`bert_score_prf`'s."""
    return torch.tensor([[r.precision, r.recall, r.f1] for r in results], dtype=torch.float64)
