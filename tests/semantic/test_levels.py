"""The word level: idf-weighted greedy alignment, hand-checked."""

from __future__ import annotations

import math

import torch

from opik_semantic_metrics.semantic.levels import WeightedPieces, cosine, word_level


def _unit(*rows: list[float]) -> torch.Tensor:
    return torch.nn.functional.normalize(torch.tensor(rows, dtype=torch.float32), dim=-1)


def test_soft_precision_recall_f1_by_hand():
    # Output pieces a=(1,0), b=(0,1); reference pieces a'=(1,0), c=(0.6,0.8).
    output = WeightedPieces(_unit([1, 0], [0, 1]), torch.tensor([1.0, 3.0]))
    reference = WeightedPieces(_unit([1, 0], [0.6, 0.8]), torch.tensor([2.0, 2.0]))
    [level] = word_level([(output, reference)])
    # Precision: a -> max(1, 0.6) = 1, b -> max(0, 0.8) = 0.8; weights 1 and 3.
    precision = (1 * 1.0 + 3 * 0.8) / 4
    # Recall: a' -> max(1, 0) = 1, c -> max(0.6, 0.8) = 0.8; weights 2 and 2.
    recall = (2 * 1.0 + 2 * 0.8) / 4
    assert level.precision == torch.tensor(precision).item()
    assert abs(level.recall - recall) < 1e-6
    assert abs(level.f1 - 2 * precision * recall / (precision + recall)) < 1e-6


def test_a_side_without_pieces_scores_zero():
    some = WeightedPieces(_unit([1, 0]), torch.tensor([1.0]))
    none = WeightedPieces(torch.empty(0, 2), torch.empty(0))
    assert [level.f1 for level in word_level([(some, none), (none, some), (some, some)])] == [
        0.0,
        0.0,
        1.0,
    ]


def test_results_do_not_depend_on_batching_or_padding():
    generator = torch.Generator().manual_seed(0)
    pairs = []
    for length in range(1, 9):
        output = torch.nn.functional.normalize(torch.randn(length, 5, generator=generator), dim=1)
        reference = torch.nn.functional.normalize(
            torch.randn(9 - length, 5, generator=generator), dim=1
        )
        pairs.append(
            (
                WeightedPieces(output, torch.rand(length, generator=generator) + 0.5),
                WeightedPieces(reference, torch.rand(9 - length, generator=generator) + 0.5),
            )
        )
    together = word_level(pairs, batch_size=8)
    alone = [word_level([pair], batch_size=1)[0] for pair in pairs]
    for joint, single in zip(together, alone, strict=True):
        assert abs(joint.f1 - single.f1) < 1e-6
    # Random vectors have negative cosines: padding must never win a max.
    assert min(level.precision for level in alone) < 0.5


def test_negative_soft_recall_is_clamped_so_f1_stays_in_range():
    # Precision max(0.1, -0.5) = 0.1, recall (0.1 - 0.5) / 2 = -0.2: unclamped, the
    # harmonic mean 2 * 0.1 * -0.2 / -0.1 = 0.4 would reward a pair with no match.
    output = WeightedPieces(_unit([1, 0]), torch.tensor([1.0]))
    reference = WeightedPieces(
        _unit([0.1, math.sqrt(0.99)], [-0.5, -math.sqrt(0.75)]), torch.tensor([1.0, 1.0])
    )
    [level] = word_level([(output, reference)])
    assert abs(level.precision - 0.1) < 1e-6
    assert level.recall == 0.0 and level.f1 == 0.0


def test_cosine_of_unit_vectors():
    first, second = _unit([3, 4]), _unit([4, 3])
    assert abs(cosine(first[0], second[0]) - 24 / 25) < 1e-7
