"""Layer mixing, pooling and the estimator head, against values worked out by hand."""

from __future__ import annotations

import pytest
import torch

from opik_semantic_metrics.comet.estimator import activation, feed_forward
from opik_semantic_metrics.comet.layers import (
    LAYER_NORM_EPSILON,
    LayerMix,
    average_pool,
    max_pool,
    sparsemax,
)


def test_sparsemax_projects_onto_the_simplex_with_exact_zeros():
    # Support {1, 0.8}: threshold (1 + 0.8 - 1) / 2 = 0.4.
    assert sparsemax(torch.tensor([1.0, 0.8, -1.0])).tolist() == pytest.approx([0.6, 0.4, 0.0])
    assert sparsemax(torch.tensor([0.3, 0.3, 0.3, 0.3])).tolist() == pytest.approx([0.25] * 4)
    assert sparsemax(torch.tensor([5.0, 0.0, -2.0])).tolist() == [1.0, 0.0, 0.0]
    weights = sparsemax(torch.randn(25, generator=torch.Generator().manual_seed(0)))
    assert float(weights.sum()) == pytest.approx(1.0) and bool((weights >= 0).all())


def _normalised(hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Per sentence: (h - mean) / sqrt(var + eps) with statistics over its real tokens only."""
    rows = []
    for sentence, sentence_mask in zip(hidden.double(), mask.bool(), strict=True):
        real = sentence[sentence_mask]
        mean, variance = real.mean(), real.var(unbiased=False)
        rows.append((sentence - mean) / torch.sqrt(variance + LAYER_NORM_EPSILON))
    return torch.stack(rows).float()


@pytest.mark.parametrize("layer_norm", [False, True])
def test_layer_mix_is_gamma_times_the_weighted_sum(layer_norm):
    generator = torch.Generator().manual_seed(1)
    hidden = [torch.randn(2, 5, 4, generator=generator) * 3 + 1 for _ in range(3)]
    mask = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 0, 0, 0]])
    scalars = torch.tensor([0.9, 0.1, -2.0])  # sparsemax: 0.9, 0.1, 0
    mix = LayerMix(scalars, torch.tensor([1.5]), use_sparsemax=True, layer_norm=layer_norm)
    assert mix.weights.tolist() == pytest.approx([0.9, 0.1, 0.0])
    states = [_normalised(h, mask) if layer_norm else h for h in hidden]
    expected = 1.5 * (0.9 * states[0] + 0.1 * states[1] + 0.0 * states[2])
    torch.testing.assert_close(mix(hidden, mask), expected, atol=1e-5, rtol=1e-5)


def test_softmax_mix_weighs_every_layer():
    mix = LayerMix(torch.zeros(4), torch.tensor([1.0]), use_sparsemax=False, layer_norm=False)
    assert mix.weights.tolist() == [0.25] * 4


def test_average_pool_leaves_pad_ids_out_of_the_sum_but_not_the_count():
    # COMET masks by token id: a literal pad token inside the text (position 1 of row 0)
    # drops from the sum, while the mean still divides by the attention-mask length.
    ids = torch.tensor([[0, 1, 5, 2], [0, 5, 2, 1]])
    mask = torch.tensor([[1, 1, 1, 1], [1, 1, 1, 0]])
    embeddings = torch.arange(8.0).view(2, 4, 1)
    pooled = average_pool(ids, embeddings, mask, pad_id=1)
    assert pooled.view(-1).tolist() == pytest.approx([(0 + 2 + 3) / 4, (4 + 5 + 6) / 3])


def test_max_pool_ignores_pad_positions():
    ids = torch.tensor([[0, 5, 1]])
    embeddings = torch.tensor([[[1.0, -4.0], [2.0, -3.0], [9.0, 9.0]]])
    assert max_pool(ids, embeddings, pad_id=1).tolist() == [[2.0, -3.0]]


def test_the_head_keeps_comets_layout_and_activation_names():
    head = feed_forward(12, [8, 4], "Tanh", "Sigmoid")
    assert list(head.state_dict()) == [
        "0.weight",
        "0.bias",
        "3.weight",
        "3.bias",
        "6.weight",
        "6.bias",
    ]
    assert isinstance(head[-1], torch.nn.Sigmoid)
    assert isinstance(activation("tanh"), torch.nn.Tanh)
    # COMET looks names up as name.title(): "ReLU" becomes "Relu", which torch lacks.
    with pytest.raises(ValueError, match="Relu"):
        activation("ReLU")
