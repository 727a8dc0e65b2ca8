"""oneDNN-packed linear layers: the same products as ``nn.Linear``, in real models."""

from __future__ import annotations

import copy

import pytest
import torch
from bert_score.utils import get_model as bert_score_get_model
from transformers import AutoModel
from transformers.activations import GELUActivation

from opik_semantic_metrics.models.loading import load_encoder
from opik_semantic_metrics.models.packed_linear import (
    PackedLinear,
    pack_linear_layers,
    packing_supported,
)
from tests.tiny_models import build_tiny_t5

needs_packing = pytest.mark.skipif(
    not packing_supported(torch.float32), reason="oneDNN packing is not available here"
)


@needs_packing
@pytest.mark.parametrize("shape", [(7, 48), (3, 11, 48), (2, 2, 5, 48)])
@pytest.mark.parametrize("bias", [True, False])
def test_packed_linear_equals_nn_linear(shape, bias):
    torch.manual_seed(0)
    linear = torch.nn.Linear(48, 96, bias=bias)
    inputs = torch.randn(*shape)
    with torch.inference_mode():
        expected = linear(inputs)
        got = PackedLinear(linear)(inputs)
    assert got.shape == expected.shape
    assert torch.allclose(got, expected, atol=1e-5, rtol=1e-5)


@needs_packing
def test_packed_linear_reads_non_contiguous_inputs():
    torch.manual_seed(0)
    linear = torch.nn.Linear(16, 8)
    inputs = torch.randn(16, 10).T  # (10, 16), not contiguous
    with torch.inference_mode():
        assert torch.allclose(PackedLinear(linear)(inputs), linear(inputs), atol=1e-5)


@needs_packing
def test_packing_a_bert_keeps_its_hidden_states(minilm_path):
    model = AutoModel.from_pretrained(minilm_path).eval()
    packed = copy.deepcopy(model)
    linear_layers = sum(type(module) is torch.nn.Linear for module in model.modules())
    assert pack_linear_layers(packed) == linear_layers == 6 * 6 + 1  # 6 a layer, and the pooler
    assert not any(type(module) is torch.nn.Linear for module in packed.modules())
    fused = [layer.intermediate.dense.activation for layer in packed.encoder.layer]
    assert fused == ["gelu"] * 6
    ids = torch.tensor([[101, 1037, 4937, 7719, 2006, 1996, 13523, 1012, 102, 0, 0]] * 2)
    mask = (ids != 0).long()
    with torch.inference_mode():
        expected = model(input_ids=ids, attention_mask=mask).last_hidden_state
        got = packed(input_ids=ids, attention_mask=mask).last_hidden_state
    assert torch.allclose(got, expected, atol=2e-5)


@needs_packing
@pytest.mark.parametrize("bias", [True, False])
def test_a_fused_gelu_equals_gelu_after_the_product(bias):
    torch.manual_seed(0)
    linear = torch.nn.Linear(48, 96, bias=bias)
    inputs = torch.randn(3, 11, 48) * 3
    with torch.inference_mode():
        expected = torch.nn.functional.gelu(linear(inputs))
        got = PackedLinear(linear, activation="gelu")(inputs)
    assert torch.allclose(got, expected, atol=1e-5, rtol=1e-5)


class FeedForward(torch.nn.Module):
    """transformers' naming, with the activation before or after the product."""

    def __init__(self, activation: torch.nn.Module, after: bool = True) -> None:
        super().__init__()
        self.dense = torch.nn.Linear(16, 16)
        self.intermediate_act_fn = activation
        self.after = after

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        if self.after:
            return self.intermediate_act_fn(self.dense(inputs))
        return self.dense(self.intermediate_act_fn(inputs))


@needs_packing
@pytest.mark.parametrize(
    ("block", "fused"),
    [
        (FeedForward(GELUActivation()), True),
        (FeedForward(torch.nn.GELU()), True),
        (FeedForward(torch.nn.GELU(approximate="tanh")), False),  # not the exact GELU
        (FeedForward(GELUActivation(), after=False), False),  # the probe sees the order
    ],
)
def test_only_an_exact_gelu_after_the_product_is_fused(block, fused):
    torch.manual_seed(0)
    inputs = torch.randn(4, 16)
    with torch.inference_mode():
        expected = block(inputs)
    pack_linear_layers(block)
    assert (block.dense.activation == "gelu") is fused
    assert isinstance(block.intermediate_act_fn, torch.nn.Identity) is fused
    with torch.inference_mode():
        assert torch.allclose(block(inputs), expected, atol=1e-5)


@needs_packing
def test_subclasses_of_linear_are_left_alone():
    class Scaled(torch.nn.Linear):
        def forward(self, inputs: torch.Tensor) -> torch.Tensor:
            return 2 * super().forward(inputs)

    model = torch.nn.Sequential(torch.nn.Linear(4, 4), Scaled(4, 4))
    assert pack_linear_layers(model) == 1
    assert isinstance(model[0], PackedLinear) and type(model[1]) is Scaled


def test_nothing_is_packed_without_parameters_nor_for_float16():
    assert pack_linear_layers(torch.nn.Sequential(torch.nn.ReLU())) == 0
    assert not packing_supported(torch.float16)


@needs_packing
def test_the_loader_packs_cpu_models():
    encoder = load_encoder("all-MiniLM-L6-v2", device="cpu")
    # The loader keeps layers 1-6 and the pooler: 37 linear layers.
    assert encoder.packed_linear_layers == 37


def _children(model: torch.nn.Module) -> list[tuple[int, str, int]]:
    return [
        (id(module), name, id(child))
        for module in model.modules()
        for name, child in module.named_children()
    ]


@needs_packing
@pytest.mark.parametrize(
    "unchanged", [lambda: False, lambda: 1 / 0], ids=["output-differs", "model-fails"]
)
def test_a_model_the_check_rejects_gets_its_own_modules_back(minilm_path, unchanged):
    model = AutoModel.from_pretrained(minilm_path).eval()
    before = _children(model)
    assert pack_linear_layers(model, unchanged) == 0
    assert _children(model) == before
    assert isinstance(model.encoder.layer[0].intermediate.intermediate_act_fn, GELUActivation)
    assert pack_linear_layers(model, lambda: True) == 37


@needs_packing
def test_the_loader_leaves_t5_unpacked_and_its_encoder_reads_as_bert_scores(tmp_path):
    """T5's feed-forward casts its input to its linear layer's ``weight`` type, and a packed
    layer has no ``weight``: packed, the model fails, so the loader leaves it as it is."""
    directory = str(build_tiny_t5(tmp_path / "t5"))  # "t5" in the name: bert_score's T5 path
    encoder = load_encoder(directory, device="cpu")
    assert encoder.packed_linear_layers == 0
    assert not any(isinstance(module, PackedLinear) for module in encoder.model.modules())
    batch = encoder.tokenizer(
        ["the cat sat on the mat", "a dog"], padding=True, return_tensors="pt"
    )
    ids, mask = batch["input_ids"], batch["attention_mask"]
    real = mask.bool()
    with torch.inference_mode():
        got = encoder.hidden_states(ids, mask)
        expected = bert_score_get_model(directory, 2)(input_ids=ids, attention_mask=mask)[0]
    assert torch.allclose(got[real], expected[real], atol=1e-5)
