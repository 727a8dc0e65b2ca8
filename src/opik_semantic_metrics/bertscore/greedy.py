"""Greedy matching of token embeddings: BERTScore precision, recall and F1.

For a candidate ``x`` and a reference ``y`` with L2-normalised token embeddings and
token weights ``w`` (idf, or 1 with [CLS]/[SEP] at 0), normalised to sum 1 per text::

    sim[i, j] = x_i . y_j
    P = sum_i w_x[i] * max_j sim[i, j]
    R = sum_j w_y[j] * max_i sim[i, j]
    F = 2 P R / (P + R)

(Zhang et al., 2020, "BERTScore: Evaluating Text Generation with BERT", eq. 1-3 with idf.)
Special tokens weigh 0 but remain match targets, as in bert_score.

Unlike bert_score's batched code, padding never takes part: padded positions are set to
-inf before each max, so a real token whose best similarity is negative keeps it. Scores
therefore do not depend on how pairs are batched, and equal bert_score's with
``batch_size=1``. A text with no tokens besides the special ones scores P = R = F = 0
(bert_score's rule, with its warning). An F that is NaN (P + R = 0, or undefined P or R)
is 0, as in bert_score; P or R stay NaN when all their weights are 0 (idf fitted on too
small a corpus).

One deliberate difference: where P and R have opposite signs, F is 0. Token similarities
can be negative (MiniLM's are, on text it reads as ``[UNK]``), and as P nears -R the
formula's F grows without bound: an F of 23 from P = -0.04, R = 0.04 was seen, and its
digits then turn on float rounding, so no batching could reproduce it. bert_score keeps
the formula's value. At P = 0 both rules give 0.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class GreedyMatch:
    """Scores of a batch of pairs, each tensor of shape ``(batch,)`` unless noted.

    Attributes:
        precision, recall, f1: BERTScore P, R, F1.
        candidate_best: ``(batch, candidate_length)``: each candidate token's best similarity.
        candidate_best_index: ``(batch, candidate_length)``: the reference position it matched.
        opposite_signs: ``(batch,)`` bool, True where P and R have opposite signs (F is 0).
    """

    precision: torch.Tensor
    recall: torch.Tensor
    f1: torch.Tensor
    candidate_best: torch.Tensor
    candidate_best_index: torch.Tensor
    opposite_signs: torch.Tensor


def greedy_match(
    candidate_embeddings: torch.Tensor,
    candidate_mask: torch.Tensor,
    candidate_weights: torch.Tensor,
    reference_embeddings: torch.Tensor,
    reference_mask: torch.Tensor,
    reference_weights: torch.Tensor,
    candidate_empty: torch.Tensor,
    reference_empty: torch.Tensor,
) -> GreedyMatch:
    """BERTScore of padded batches of pairs.

    Args:
        candidate_embeddings: ``(batch, Lc, dim)``, L2-normalised along ``dim``.
        candidate_mask: ``(batch, Lc)`` bool, True on real tokens.
        candidate_weights: ``(batch, Lc)`` token weights, 0 on padding.
        reference_embeddings: ``(batch, Lr, dim)``, L2-normalised along ``dim``.
        reference_mask: ``(batch, Lr)`` bool.
        reference_weights: ``(batch, Lr)``.
        candidate_empty: ``(batch,)`` bool, True where the candidate has only special tokens.
        reference_empty: ``(batch,)`` bool, likewise for the reference.

    Returns:
        A :class:`GreedyMatch`; ``res.precision[b]`` is P of pair ``b``.
    """
    sim = torch.bmm(candidate_embeddings, reference_embeddings.transpose(1, 2))
    pair_mask = candidate_mask.unsqueeze(2) & reference_mask.unsqueeze(1)
    sim = sim.masked_fill(~pair_mask, float("-inf"))
    candidate_best, candidate_best_index = sim.max(dim=2)
    reference_best = sim.max(dim=1).values
    # Padded rows are -inf everywhere; their weight is 0, but -inf * 0 is NaN.
    candidate_best = candidate_best.masked_fill(~candidate_mask, 0.0)
    reference_best = reference_best.masked_fill(~reference_mask, 0.0)

    candidate_scale = candidate_weights / candidate_weights.sum(dim=1, keepdim=True)
    reference_scale = reference_weights / reference_weights.sum(dim=1, keepdim=True)
    precision = (candidate_best * candidate_scale).sum(dim=1)
    recall = (reference_best * reference_scale).sum(dim=1)
    f1 = 2 * precision * recall / (precision + recall)

    empty = candidate_empty | reference_empty
    precision = precision.masked_fill(empty, 0.0)
    recall = recall.masked_fill(empty, 0.0)
    opposite_signs = precision * recall < 0  # see the module docstring
    f1 = f1.masked_fill(empty | opposite_signs | torch.isnan(f1), 0.0)
    return GreedyMatch(precision, recall, f1, candidate_best, candidate_best_index, opposite_signs)
