"""The three levels of the layered score, on embeddings already computed.

- **Word**: idf-weighted greedy alignment of the word-piece vectors of the two cleaned
  texts (only alphanumeric pieces). Each output piece takes its best cosine among the
  reference's pieces; soft precision is their idf-weighted mean, soft recall the same
  from the reference's side, and the level is their F1. A side with no pieces scores 0.
  This is BERTScore's greedy matching with smoothed idf weights, so it runs on
  :func:`opik_semantic_metrics.bertscore.greedy.greedy_match` (padding never matches).
  Precision and recall are clamped at 0 before the F1: token cosines can be negative,
  and the harmonic mean of a positive and a negative number is unbounded (with
  all-MiniLM-L6-v2 and uniform weights one STS-B train pair, "A man is holding a
  leaf." / "A woman is watching television.", has F1 -73.9 unclamped), while a
  negative soft precision means no match at all. The level is then in ``[0, 1]``.
- **Sentence**: cosine of the sentence embeddings of the cleaned texts.
- **Paragraph**: cosine of the sentence embeddings of the raw texts, before the
  baseline rescaling of :mod:`~opik_semantic_metrics.semantic.combine`.

All vectors here are L2-normalised, so a cosine is a dot product.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch.nn.utils.rnn import pad_sequence

from opik_semantic_metrics.batching.memory import HalvingBatchSize
from opik_semantic_metrics.bertscore.greedy import greedy_match


@dataclass(frozen=True)
class WeightedPieces:
    """The word pieces of one cleaned text that take part in the word level.

    Attributes:
        vectors: ``(pieces, width)`` L2-normalised piece vectors.
        weights: ``(pieces,)`` their idf weights.
    """

    vectors: torch.Tensor
    weights: torch.Tensor

    @property
    def empty(self) -> bool:
        """True when the text has no piece to align."""
        return self.vectors.shape[0] == 0


@dataclass(frozen=True)
class WordLevel:
    """Soft precision, recall and their F1 (the word level) of one pair."""

    precision: float
    recall: float
    f1: float


_NO_PIECES = WordLevel(precision=0.0, recall=0.0, f1=0.0)


def word_level(
    pairs: Sequence[tuple[WeightedPieces, WeightedPieces]],
    batch_size: int | HalvingBatchSize = 64,
) -> list[WordLevel]:
    """The word level of each (output, reference) pair, in order.

    Args:
        pairs: Per pair, the output's and the reference's weighted pieces.
        batch_size: Pairs matched in one padded batch (the result does not depend on it),
            or a :class:`HalvingBatchSize` kept across calls: a batch that runs out of
            memory is then halved and retried, and later calls use the halved size.

    Returns:
        One :class:`WordLevel` per pair; 0 where either side has no piece.

    Example:
        >>> unit = torch.eye(3)
        >>> output = WeightedPieces(unit[:2], torch.tensor([1.0, 3.0]))
        >>> reference = WeightedPieces(unit[1:], torch.tensor([1.0, 1.0]))
        >>> [level] = word_level([(output, reference)])
        >>> level.precision, level.recall, round(level.f1, 4)
        (0.75, 0.5, 0.6)
    """
    if not isinstance(batch_size, HalvingBatchSize):
        batch_size = HalvingBatchSize(batch_size)

    def match_batch(batch: list[int]) -> list[WordLevel]:
        out_vectors, out_mask, out_weights = _padded([pairs[i][0] for i in batch])
        ref_vectors, ref_mask, ref_weights = _padded([pairs[i][1] for i in batch])
        no_empty = torch.zeros(len(batch), dtype=torch.bool, device=out_vectors.device)
        match = greedy_match(
            out_vectors, out_mask, out_weights, ref_vectors, ref_mask, ref_weights,
            no_empty, no_empty,
        )  # fmt: skip
        precision = match.precision.clamp(min=0.0).tolist()
        recall = match.recall.clamp(min=0.0).tolist()
        return [_f1(p, r) for p, r in zip(precision, recall, strict=True)]

    results = [_NO_PIECES] * len(pairs)
    scored = [
        i for i, (output, reference) in enumerate(pairs) if not (output.empty or reference.empty)
    ]
    for index, level in zip(scored, batch_size.run(match_batch, scored), strict=True):
        results[index] = level
    return results


def _f1(precision: float, recall: float) -> WordLevel:
    total = precision + recall
    f1 = 2 * precision * recall / total if total > 0 else 0.0
    return WordLevel(precision=precision, recall=recall, f1=f1)


def _padded(items: Sequence[WeightedPieces]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Vectors ``(batch, longest, width)``, the real-piece mask, and weights (0 on padding)."""
    vectors = pad_sequence([item.vectors for item in items], batch_first=True)
    weights = pad_sequence([item.weights for item in items], batch_first=True).to(vectors.device)
    lengths = torch.tensor([item.vectors.shape[0] for item in items], device=vectors.device)
    mask = torch.arange(vectors.shape[1], device=vectors.device) < lengths.unsqueeze(1)
    return vectors, mask, weights


def cosine(first: torch.Tensor, second: torch.Tensor) -> float:
    """Cosine of two L2-normalised vectors (the sentence and paragraph levels)."""
    return float(torch.dot(first, second))
