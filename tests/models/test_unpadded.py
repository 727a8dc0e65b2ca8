"""BERT-family layers on real tokens only: the model's own hidden states, less the padding."""

from __future__ import annotations

import copy

import pytest
import torch
from transformers import AutoModel, BertConfig, BertModel

from opik_semantic_metrics.models.loading import load_encoder
from opik_semantic_metrics.models.packed_linear import pack_linear_layers, packing_supported
from opik_semantic_metrics.models.unpadded import (
    _compiled_layers,
    _run_layers,
    pays_to_unpad,
    prepare_unpadded,
    row_count,
)
from tests.tiny_models import build_tiny_bert, build_tiny_gpt2, build_tiny_roberta


def padded_batch(lengths: list[int], pad_id: int, vocab: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Random ids (no padding id among them) padded with ``pad_id`` to the longest."""
    generator = torch.Generator().manual_seed(0)
    width = max(lengths)
    ids = torch.randint(5, vocab, (len(lengths), width), generator=generator)
    ids[ids == pad_id] = pad_id + 1
    mask = (torch.arange(width) < torch.tensor(lengths).unsqueeze(1)).long()
    return ids.masked_fill(mask == 0, pad_id), mask


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory):
    return AutoModel.from_pretrained(build_tiny_bert(tmp_path_factory.mktemp("bert"))).eval()


@pytest.fixture(scope="module")
def tiny_roberta(tmp_path_factory):
    return AutoModel.from_pretrained(build_tiny_roberta(tmp_path_factory.mktemp("roberta"))).eval()


@pytest.mark.parametrize("family", ["tiny_bert", "tiny_roberta"])
# 26, 33 and 69 real tokens; the last two batches have little padding and keep it.
@pytest.mark.parametrize(
    "lengths", [[9, 2, 5, 9, 1], [20, 13], [20, 20, 20, 9], [20] * 19 + [19], [7, 7]]
)
def test_real_tokens_get_the_models_own_hidden_states(family, lengths, request):
    model = request.getfixturevalue(family)
    unpadded = prepare_unpadded(model)
    assert unpadded is not None
    ids, mask = padded_batch(lengths, model.config.pad_token_id, model.config.vocab_size)
    with torch.inference_mode():
        expected = model(input_ids=ids, attention_mask=mask).last_hidden_state
        got = unpadded.hidden_states(ids, mask)
    real = mask.bool()
    assert got.shape == expected.shape
    assert torch.allclose(got[real], expected[real], atol=1e-6, rtol=1e-6)
    if pays_to_unpad(mask):
        assert torch.count_nonzero(got[~real]) == 0  # padded positions are zeros


def test_each_text_is_independent_of_the_batch_it_runs_in(tiny_roberta):
    model = tiny_roberta
    unpadded = prepare_unpadded(model)
    ids, mask = padded_batch([7, 3, 12], model.config.pad_token_id, model.config.vocab_size)
    with torch.inference_mode():
        together = unpadded.hidden_states(ids, mask)
        for row, length in enumerate(mask.sum(dim=1).tolist()):
            one = slice(row, row + 1)
            alone = unpadded.hidden_states(ids[one, :length], mask[one, :length])
            assert torch.allclose(together[row, :length], alone[0], atol=1e-6, rtol=1e-6)


@pytest.mark.parametrize("lengths", [[14, 3, 8, 21], [21, 21, 21]])
def test_a_truncated_packed_minilm_runs_unpadded_and_keeps_its_hidden_states(minilm_path, lengths):
    encoder = load_encoder(str(minilm_path), layer=4, device="cpu")
    assert encoder.truncated_model and encoder.unpadded is not None
    ids, mask = padded_batch(lengths, 0, encoder.tokenizer.vocab_size)
    with torch.inference_mode():
        expected = encoder.model(input_ids=ids, attention_mask=mask)[0]
        got = encoder.hidden_states(ids, mask)
    real = mask.bool()
    assert torch.allclose(got[real], expected[real], atol=1e-5, rtol=1e-5)


def test_batches_without_padding_run_on_rounded_row_counts_too(minilm_path, monkeypatch):
    # Run through the model as they were, each new text length was a new row count, for
    # which oneDNN keeps compiled kernels: a lone caller over many lengths grew by
    # hundreds of MB (benchmarks/row_counts_memory.py).
    encoder = load_encoder(str(minilm_path), layer=4, device="cpu")
    counted: list[int] = []
    monkeypatch.setattr(
        "opik_semantic_metrics.models.unpadded.row_count",
        lambda tokens: counted.append(tokens) or row_count(tokens),
    )
    ids, mask = padded_batch([23, 23], 0, encoder.tokenizer.vocab_size)
    with torch.inference_mode():
        encoder.hidden_states(ids, mask)
    assert counted == [46]


@pytest.fixture(scope="module")
def packed_tiny_bert(tiny_bert):
    if not packing_supported(torch.float32):
        pytest.skip("oneDNN packing needs an x86-64 CPU and PyTorch built with oneDNN")
    model = copy.deepcopy(tiny_bert)
    assert pack_linear_layers(model) > 0
    return model


def test_a_packed_model_with_its_gelu_fused_runs_unpadded(packed_tiny_bert, tiny_bert):
    unpadded = prepare_unpadded(packed_tiny_bert)
    assert unpadded is not None and unpadded.packed
    ids, mask = padded_batch([9, 2, 5], tiny_bert.config.pad_token_id, tiny_bert.config.vocab_size)
    with torch.inference_mode():
        expected = tiny_bert(input_ids=ids, attention_mask=mask).last_hidden_state
        got = unpadded.hidden_states(ids, mask)
    real = mask.bool()
    assert torch.allclose(got[real], expected[real], atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("unpad", [True, False])
@pytest.mark.parametrize("model_name", ["tiny_bert", "packed_tiny_bert"])
def test_the_compiled_layers_compute_what_the_python_function_does(model_name, unpad, request):
    model = request.getfixturevalue(model_name)
    # TorchScript works in every environment we test in, so the compiled path is the one run.
    assert isinstance(_compiled_layers(), torch.jit.ScriptFunction)
    unpadded = prepare_unpadded(model)
    layer_args = (unpadded.heads, unpadded.eps, unpadded.packed)
    layer_args += (unpadded.weights, unpadded.biases, unpadded.norms)
    ids, mask = padded_batch([20, 13, 4], model.config.pad_token_id, model.config.vocab_size)
    with torch.inference_mode():
        hidden = model.embeddings(input_ids=ids)
        rows = row_count(int(mask.sum()) if unpad else mask.numel())
        compiled = _compiled_layers()(hidden, mask, rows, unpad, *layer_args)
        python = _run_layers(hidden, mask, rows, unpad, *layer_args)
    assert torch.equal(compiled, python)
    real = mask.bool()
    assert torch.allclose(compiled[real], model(ids, mask)[0][real], atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("activation", ["relu", "gelu_new"])
def test_a_model_with_another_activation_is_left_to_transformers(activation):
    config = BertConfig(
        vocab_size=60, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=32, hidden_act=activation,
    )  # fmt: skip
    model = BertModel(config).eval()
    assert prepare_unpadded(model) is None


def test_models_of_other_families_or_in_training_mode_are_not_run_unpadded(tmp_path, tiny_bert):
    gpt2 = AutoModel.from_pretrained(build_tiny_gpt2(tmp_path / "gpt2")).eval()
    assert prepare_unpadded(gpt2) is None
    tiny_bert.train()
    try:
        assert prepare_unpadded(tiny_bert) is None
    finally:
        tiny_bert.eval()


def test_the_probe_rejects_a_model_whose_attention_computes_something_else(tmp_path):
    model = AutoModel.from_pretrained(build_tiny_bert(tmp_path / "bert")).eval()
    # Same weights, other attention: the unpadded layers, built from the weights alone,
    # would compute what this layer no longer does.
    attention = model.encoder.layer[0].attention.self
    forward = attention.forward

    def halved(*args, **kwargs):
        context, *rest = forward(*args, **kwargs)
        return (context * 0.5, *rest)

    attention.forward = halved
    assert prepare_unpadded(model) is None


@pytest.mark.parametrize(
    ("lengths", "expected"),
    [([8, 8, 8, 8], False), ([20] * 19 + [19], False), ([20, 10], True), ([20] * 4 + [14], True)],
)
def test_only_batches_with_more_than_5_percent_padding_are_unpadded(lengths, expected):
    _ids, mask = padded_batch(lengths, 0, 100)
    assert pays_to_unpad(mask) is expected


def test_row_counts_keep_five_significant_bits():
    counts = [row_count(tokens) for tokens in range(1, 2049)]
    assert all(0 <= count - tokens <= tokens / 16 for tokens, count in enumerate(counts, 1))
    assert row_count(33) == 34 and row_count(69) == 72 and row_count(230) == 232
    assert len({row_count(tokens) for tokens in range(257, 2049)}) == 16 * 3  # 3 octaves
