"""Greedy matching of embedded pairs, in length-sorted batches (``greedy.py`` does the
maths), and the choice of the reference a result explains."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import torch
from torch.nn.utils.rnn import pad_sequence

from opik_semantic_metrics.batching.memory import HalvingBatchSize
from opik_semantic_metrics.bertscore.embedding import TextEmbedding
from opik_semantic_metrics.bertscore.greedy import GreedyMatch, greedy_match


class _PairMatch(NamedTuple):
    """One pair's greedy match."""

    #: Its (P, R, F1).
    prf: torch.Tensor
    #: Whether P and R have opposite signs.
    opposite_signs: torch.Tensor
    #: Each candidate token's best similarity and the reference token it matched.
    candidate_match: tuple[torch.Tensor, torch.Tensor]


def best_reference_index(
    group_scores: torch.Tensor, group: Sequence[str], embedded: dict[str, TextEmbedding]
) -> int:
    """The place of the reference with the best F1, the one a result explains.

    An empty reference's F1 is 0 by bert_score's rule, and so is that of a pair whose P
    and R have opposite signs: of references tied at the best F1, a non-empty one is
    explained (the per-column maxima hold its R or P), whatever their order.
    """
    f1 = torch.nan_to_num(group_scores[:, 2], nan=-torch.inf)
    tied = (f1 == f1.max()).nonzero().flatten().tolist()
    return next((i for i in tied if not embedded[group[i]].encoded.empty), tied[0])


def match_pairs(
    pairs: Sequence[tuple[str, str]],
    embedded: dict[str, TextEmbedding],
    batch_size: HalvingBatchSize,
) -> tuple[torch.Tensor, torch.Tensor, list[tuple[torch.Tensor, torch.Tensor]]]:
    """Greedy-match every pair: ``(pairs, 3)`` scores, ``(pairs,)`` opposite-sign
    flags (``greedy.py``) and per-pair candidate matches."""
    order = sorted(
        range(len(pairs)),
        key=lambda i: (
            len(embedded[pairs[i][0]].encoded.ids),
            len(embedded[pairs[i][1]].encoded.ids),
        ),
    )

    # Each batch's results stay where they were computed until every batch has run: on a
    # GPU, one wait for the device at the end instead of one per batch.
    computed: list[tuple[torch.Tensor, ...]] = []

    def match_batch(batch: list[int]) -> list[tuple[int, int]]:
        result = greedy_batch(
            [embedded[pairs[i][0]] for i in batch], [embedded[pairs[i][1]] for i in batch]
        )
        prf = torch.stack((result.precision, result.recall, result.f1), dim=1)
        computed.append(
            (prf, result.opposite_signs, result.candidate_best, result.candidate_best_index)
        )
        return [(len(computed) - 1, row) for row in range(len(batch))]

    # Out of memory halves the batch here too (batching/memory.py): a batch of long
    # pairs' similarity matrices can fail where their forward passes fitted.
    places = batch_size.run(match_batch, order)
    on_host = [tuple(tensor.cpu() for tensor in tensors) for tensors in computed]
    matched: list[_PairMatch] = []
    for index, (number, row) in zip(order, places, strict=True):
        prf, opposite, best, best_index = on_host[number]
        length = len(embedded[pairs[index][0]].encoded.ids)
        matched.append(
            _PairMatch(prf[row], opposite[row], (best[row, :length], best_index[row, :length]))
        )
    scores = torch.empty(len(pairs), 3)
    opposite_signs = torch.empty(len(pairs), dtype=torch.bool)
    scores[order] = torch.stack([match.prf for match in matched])
    opposite_signs[order] = torch.stack([match.opposite_signs for match in matched])
    by_pair = {index: match.candidate_match for index, match in zip(order, matched, strict=True)}
    return scores, opposite_signs, [by_pair[index] for index in range(len(pairs))]


def greedy_batch(
    candidates: Sequence[TextEmbedding], references: Sequence[TextEmbedding]
) -> GreedyMatch:
    """Pad one batch of pairs and greedy-match it."""

    def padded(items: Sequence[TextEmbedding]) -> tuple[torch.Tensor, ...]:
        embeddings = pad_sequence([item.embeddings for item in items], batch_first=True)
        device = embeddings.device
        weights = pad_sequence([item.weights for item in items], batch_first=True).to(device)
        if embeddings.shape[1] == 0:
            # Only texts without tokens (GPT-2's empty ones): one masked position, so
            # that the maxima have something to reduce over.
            embeddings = embeddings.new_zeros(len(items), 1, embeddings.shape[2])
            weights = weights.new_zeros(len(items), 1)
        lengths = torch.tensor([len(item.encoded.ids) for item in items], device=device)
        mask = torch.arange(embeddings.shape[1], device=device) < lengths.unsqueeze(1)
        empty = torch.tensor([item.encoded.empty for item in items], device=device)
        return embeddings, mask, weights, empty

    cand_emb, cand_mask, cand_weights, cand_empty = padded(candidates)
    ref_emb, ref_mask, ref_weights, ref_empty = padded(references)
    return greedy_match(
        cand_emb, cand_mask, cand_weights, ref_emb, ref_mask, ref_weights, cand_empty, ref_empty
    )
