"""Greedy matching on hand-made embeddings: the formula, and padding kept out."""

from __future__ import annotations

import math

import torch

from opik_semantic_metrics.bertscore.greedy import greedy_match


def _unit(*rows: tuple[float, float]) -> torch.Tensor:
    return torch.nn.functional.normalize(torch.tensor(rows, dtype=torch.float32), dim=-1)


def _match(candidates, references, cand_weights=None, ref_weights=None):
    """Score pairs given as lists of (length, 2) unit-vector tensors, padded together."""
    pad = torch.nn.utils.rnn.pad_sequence
    cand = pad(candidates, batch_first=True)
    ref = pad(references, batch_first=True)
    cand_mask = torch.arange(cand.shape[1]) < torch.tensor([len(c) for c in candidates])[:, None]
    ref_mask = torch.arange(ref.shape[1]) < torch.tensor([len(r) for r in references])[:, None]
    cand_w = cand_mask.float() if cand_weights is None else cand_weights
    ref_w = ref_mask.float() if ref_weights is None else ref_weights
    none = torch.zeros(len(candidates), dtype=torch.bool)
    return greedy_match(cand, cand_mask, cand_w, ref, ref_mask, ref_w, none, none)


def test_formula_on_a_hand_checked_pair():
    # Candidate tokens at 0 and 90 degrees; reference tokens at 0 and 60 degrees.
    c60, s60 = math.cos(math.pi / 3), math.sin(math.pi / 3)
    cand = _unit((1.0, 0.0), (0.0, 1.0))
    ref = _unit((1.0, 0.0), (c60, s60))
    result = _match([cand], [ref])
    # P: token 1 best 1.0; token 2 best cos(30) = 0.866 -> mean 0.933.
    precision = (1.0 + math.cos(math.pi / 6)) / 2
    # R: ref token 1 best 1.0; ref token 2 best max(cos 60, cos 30) = 0.866.
    recall = (1.0 + math.cos(math.pi / 6)) / 2
    assert result.precision.item() == torch.tensor(precision).item()
    assert abs(result.recall.item() - recall) < 1e-6
    assert abs(result.f1.item() - 2 * precision * recall / (precision + recall)) < 1e-6


def test_weights_are_normalised_per_text():
    cand = _unit((1.0, 0.0), (0.0, 1.0))
    ref = _unit(
        (1.0, 0.0),
    )
    result = _match([cand], [ref], cand_weights=torch.tensor([[3.0, 1.0]]))
    # P = (3 * 1 + 1 * 0) / 4
    assert abs(result.precision.item() - 0.75) < 1e-6


def test_padding_never_beats_a_negative_similarity():
    # Every similarity of this pair is negative; a longer pair in the batch forces padding.
    lone_cand = _unit((1.0, 0.0))
    lone_ref = _unit((-1.0, 0.2), (-1.0, -0.2))
    long_cand = _unit((1.0, 0.0), (0.0, 1.0), (1.0, 1.0), (1.0, -1.0))
    long_ref = _unit((1.0, 0.0), (0.0, 1.0), (1.0, 1.0), (-1.0, 1.0))
    alone = _match([lone_cand], [lone_ref])
    batched = _match([lone_cand, long_cand], [lone_ref, long_ref])
    assert alone.precision.item() < 0
    assert torch.equal(batched.precision[0], alone.precision[0])
    assert torch.equal(batched.recall[0], alone.recall[0])
    assert torch.equal(batched.f1[0], alone.f1[0])


def test_empty_texts_score_zero_and_nan_f1_becomes_zero():
    cand = _unit((1.0, 0.0), (0.0, 1.0))
    ref = _unit((1.0, 0.0), (0.0, 1.0))
    mask = torch.ones(1, 2, dtype=torch.bool)
    weights = torch.ones(1, 2)
    result = greedy_match(
        cand[None], mask, weights, ref[None], mask, weights,
        torch.tensor([True]), torch.tensor([False]),
    )  # fmt: skip
    assert (result.precision.item(), result.recall.item(), result.f1.item()) == (0.0, 0.0, 0.0)
    zero_weights = _match([cand], [ref], cand_weights=torch.zeros(1, 2))
    assert math.isnan(zero_weights.precision.item())
    assert zero_weights.f1.item() == 0.0


def test_f1_is_zero_where_precision_and_recall_have_opposite_signs():
    # One reference token at 0 degrees; candidate tokens at cosines 0.1 and -0.29 to it.
    # P = (0.1 - 0.29) / 2 = -0.095 and R = max(0.1, -0.29) = 0.1, so the formula's
    # F = 2PR / (P + R) = -0.019 / 0.005 = -3.8: outside any similarity's range.
    reference = _unit((1.0, 0.0))
    candidate = _unit((0.1, math.sqrt(1 - 0.1**2)), (-0.29, math.sqrt(1 - 0.29**2)))
    # A pair with both scores positive, in the same batch, keeps the formula.
    same_signs = _unit((1.0, 0.0), (0.6, 0.8))
    result = _match([candidate, same_signs], [reference, reference])
    precision, recall = result.precision[0].item(), result.recall[0].item()
    assert (precision, recall) == (torch.tensor(-0.095).item(), torch.tensor(0.1).item())
    assert 2 * precision * recall / (precision + recall) < -3.7
    assert result.f1[0].item() == 0.0
    assert result.opposite_signs.tolist() == [True, False]
    # P = (1 + 0.6) / 2 = 0.8, R = 1, F = 1.6 / 1.8.
    assert abs(result.f1[1].item() - 1.6 / 1.8) < 1e-6
