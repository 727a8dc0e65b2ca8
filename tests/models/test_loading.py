"""The shared model loader: aliases, one copy per process, clear errors."""

from __future__ import annotations

import json
import re
import textwrap
import threading
from pathlib import Path

import pytest
import torch
from bert_score.utils import get_model as bert_score_get_model

from opik_semantic_metrics.batching.cache import EmbeddingCache
from opik_semantic_metrics.bertscore.engine import BERTScoreEngine
from opik_semantic_metrics.errors import ModelUnavailableError
from opik_semantic_metrics.models.devices import resolve_device, resolve_dtype
from opik_semantic_metrics.models.encoders import LoadedEncoder
from opik_semantic_metrics.models.layers import held_tensors
from opik_semantic_metrics.models.loading import load_encoder
from opik_semantic_metrics.models.sources import resolve_model_source
from tests.tiny_models import (
    build_tiny_albert,
    build_tiny_bert,
    build_tiny_roberta,
    build_tiny_t5,
    build_tiny_xlm,
)


@pytest.mark.parametrize("alias", ["all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2"])
def test_aliases_resolve_to_the_packaged_copy(alias, minilm_path):
    source = resolve_model_source(alias)
    assert source.packaged is True
    assert source.location == str(minilm_path)
    assert source.name == "sentence-transformers/all-MiniLM-L6-v2"


def test_a_local_directory_is_used_as_is(minilm_path):
    source = resolve_model_source(str(minilm_path))
    assert source.location == str(minilm_path.resolve()) and source.packaged is False


def test_one_copy_per_settings_across_threads():
    found: list[object] = []

    def load() -> None:
        found.append(load_encoder("all-MiniLM-L6-v2", 3, device="cpu"))

    threads = [threading.Thread(target=load) for _ in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(found) == 16 and all(encoder is found[0] for encoder in found)
    assert load_encoder("sentence-transformers/all-MiniLM-L6-v2", 3, device="cpu") is found[0]
    assert load_encoder("all-MiniLM-L6-v2", 2, device="cpu") is not found[0]


def test_last_layer_is_the_default_and_layers_are_checked():
    encoder = load_encoder("all-MiniLM-L6-v2", device="cpu")
    assert (encoder.layer, encoder.num_layers, encoder.max_length) == (6, 6, 512)
    with pytest.raises(ValueError, match="between 0 and 6"):
        load_encoder("all-MiniLM-L6-v2", 7, device="cpu")


def test_truncated_model_returns_the_hidden_states_of_its_layer():
    full = load_encoder("all-MiniLM-L6-v2", device="cpu")
    for layer in (0, 3):
        truncated = load_encoder("all-MiniLM-L6-v2", layer, device="cpu")
        assert truncated.truncated_model
        assert len(truncated.model.encoder.layer) == layer
        ids = torch.tensor([[101, 7592, 2088, 102]])
        mask = torch.ones_like(ids)
        with torch.inference_mode():
            expected = full.all_hidden_states(ids, mask)[layer]
            got = truncated.hidden_states(ids, mask)
        assert torch.allclose(got, expected, atol=1e-5)


def test_offline_missing_model_names_the_model_and_the_fix():
    with pytest.raises(ModelUnavailableError) as raised:
        load_encoder("roberta-large", device="cpu")
    message = str(raised.value)
    assert "'roberta-large'" in message
    assert "HF_HUB_OFFLINE" in message and "hf download roberta-large" in message


def test_a_model_the_hub_could_not_provide_online_points_to_offline_mode(monkeypatch):
    # Online, huggingface_hub retries an unreachable Hub for minutes before this error;
    # the message says how to skip that next time. (Built directly: a real failed
    # download would spend those minutes here.)
    from huggingface_hub import constants

    from opik_semantic_metrics.models.sources import ModelSource, model_unavailable

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    error = model_unavailable(ModelSource("roberta-large", "roberta-large"), OSError("no route"))
    message = str(error)
    assert "`hf download roberta-large`" in message
    assert "without a network, set HF_HUB_OFFLINE=1" in message and "(no route)" in message


@pytest.mark.parametrize("name", ["./models/my-minilm", "~/no-such-model", "data/models/minilm"])
def test_a_missing_directory_is_called_one_not_a_hub_id(name):
    with pytest.raises(ModelUnavailableError) as raised:
        load_encoder(name, device="cpu")
    message = str(raised.value)
    expected = Path(name).expanduser().absolute()
    assert message == (
        f"Model {name!r} could not be loaded: there is no directory {expected} "
        "(a Hub id is 'name' or 'owner/name')."
    )


def test_a_model_directory_without_its_vocabulary_file_is_refused(tmp_path, minilm_path):
    # transformers 5 built a tokenizer of the special tokens alone: every word read as
    # [UNK], and BERTScore gave 0.994 to "The cat sat." against "A cat was sitting.".
    import shutil

    model_dir = tmp_path / "no-vocabulary"
    shutil.copytree(minilm_path, model_dir)
    (model_dir / "vocab.txt").unlink()
    (model_dir / "tokenizer.json").unlink()
    with pytest.raises(ModelUnavailableError) as raised:
        load_encoder(str(model_dir), device="cpu")
    assert str(model_dir) in str(raised.value)


def _edit_json(path: Path, **changes) -> None:
    document = json.loads(path.read_text())
    for key, value in changes.items():
        if value is None:
            document.pop(key, None)
        else:
            document[key] = value
    path.write_text(json.dumps(document))


def _rebuilt_bert(directory: Path, **config_changes) -> Path:
    """The tiny BERT with its weights rebuilt (seeded) for a changed config."""
    from transformers import BertConfig, BertModel

    build_tiny_bert(directory)
    _edit_json(directory / "config.json", **config_changes)
    torch.manual_seed(0)
    BertModel(BertConfig.from_pretrained(directory)).save_pretrained(directory)
    return directory


@pytest.mark.parametrize(
    "damage",
    [
        # An interrupted download or copy: safetensors' own SafetensorError before.
        lambda d: (d / "model.safetensors").write_bytes(b""),
        lambda d: (d / "model.safetensors").write_bytes(
            (d / "model.safetensors").read_bytes()[:999]
        ),
        # Sizes that are not the weights': a bare RuntimeError (size mismatch) before.
        lambda d: _edit_json(d / "config.json", hidden_size=64, intermediate_size=128),
    ],
    ids=["empty-weights", "truncated-weights", "config-of-other-sizes"],
)
def test_damaged_weights_are_a_named_error(tmp_path, damage):
    model_dir = build_tiny_bert(tmp_path / "bert")
    damage(model_dir)
    with pytest.raises(ModelUnavailableError, match="could not be loaded from the directory"):
        load_encoder(str(model_dir), 2, device="cpu")


def test_layers_the_weights_lack_are_refused_not_made_up(tmp_path):
    # A config.json counting 4 layers over a 2-layer checkpoint: transformers filled
    # layers 3 and 4 with random weights, and scores read there were random.
    import shutil

    whole = load_encoder(str(build_tiny_bert(tmp_path / "bert")), 2, device="cpu")
    model_dir = Path(shutil.copytree(tmp_path / "bert", tmp_path / "four-layers"))
    _edit_json(model_dir / "config.json", num_hidden_layers=4)
    with pytest.raises(ModelUnavailableError, match=r"has no weights for \['encoder\.layer\.2\."):
        load_encoder(str(model_dir), 4, device="cpu")
    # The layers the checkpoint holds still read as they did.
    within = load_encoder(str(model_dir), 2, device="cpu")
    ids = whole.tokenizer("A cat sat on the mat.", return_tensors="pt")
    mask = ids["attention_mask"]
    assert torch.equal(
        within.hidden_states(ids["input_ids"], mask), whole.hidden_states(ids["input_ids"], mask)
    )


def test_a_tokenizer_past_the_embedding_table_is_refused(tmp_path):
    # Every text with an id past the table failed with an IndexError, item after item.
    model_dir = _rebuilt_bert(tmp_path / "bert", vocab_size=60)
    with pytest.raises(ModelUnavailableError, match="but the model has 60 token embeddings"):
        load_encoder(str(model_dir), 2, device="cpu")


@pytest.mark.parametrize(
    ("build", "tokenizer_limit", "positions", "expected"),
    [
        # bert_score fails on long texts for each of these (a size mismatch or an index
        # error in the position embeddings); the limit is the table's.
        (build_tiny_bert, 1024, None, 512),
        (build_tiny_bert, None, 128, 128),  # no limit written: read as 512 before
        (build_tiny_roberta, 514, None, 512),  # positions start after the padding index
        (build_tiny_roberta, None, None, 512),
    ],
)
def test_the_token_limit_never_passes_the_position_table(
    tmp_path, build, tokenizer_limit, positions, expected
):
    if positions is None:
        model_dir = build(tmp_path / "model")
    else:
        model_dir = _rebuilt_bert(tmp_path / "model", max_position_embeddings=positions)
    _edit_json(model_dir / "tokenizer_config.json", model_max_length=tokenizer_limit)
    encoder = load_encoder(str(model_dir), 2, device="cpu")
    assert encoder.max_length == expected
    engine = BERTScoreEngine(str(model_dir), 2, device="cpu")
    long_text = " ".join(["the cat sits on the mat and the dog runs in the snow ."] * 60)
    [result] = engine.score([long_text], ["A cat sat on the mat."])
    assert result.candidate_truncated and 0.0 < result.f1 < 1.0


def test_dtypes_are_named_clearly():
    assert resolve_dtype(None) is torch.float32
    assert resolve_dtype("bf16") is torch.bfloat16
    assert resolve_dtype("FAST") is resolve_dtype("fast")
    assert resolve_dtype(torch.float64) is torch.float64
    # float8 is a floating-point type with no kernels for the models: every item failed.
    for bad in ("int4", torch.int64, 16, torch.float8_e5m2, torch.float8_e4m3fn):
        with pytest.raises(ValueError, match="dtype"):
            resolve_dtype(bad)  # type: ignore[arg-type]


def test_devices_are_checked_when_the_metric_is_made():
    assert resolve_device("cpu") == torch.device("cpu")
    with pytest.raises(ValueError, match=r"`device`.*'gpu'"):
        resolve_device("gpu")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="no CUDA device"):
            resolve_device("cuda:0")
    # PyTorch's own names of devices no model here runs on: each failed inside PyTorch
    # (a RuntimeError, AssertionError or ModuleNotFoundError), or, for "meta", which
    # holds no data, on every item.
    for other in ("meta", "hpu", "ipu", "lazy", "privateuseone"):
        with pytest.raises(ValueError, match=f"`device` to be 'cpu', .*got '{other}'"):
            resolve_device(other)
    if not torch.backends.mps.is_available():
        with pytest.raises(ValueError, match="no MPS device"):
            resolve_device("mps")


def test_a_gpu_number_past_the_machines_gpus_is_refused(monkeypatch):
    # A machine with one GPU (this one has none: PyTorch is told it has one).
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    assert resolve_device("cuda:0") == torch.device("cuda", 0)
    with pytest.raises(ValueError, match=r"'cuda:1', but this machine has 1 CUDA GPU"):
        resolve_device("cuda:1")


def test_one_device_has_one_spelling_and_one_model_copy():
    assert resolve_device("cpu:0") == resolve_device(torch.device("cpu")) == torch.device("cpu")
    encoder = load_encoder("all-MiniLM-L6-v2", device="cpu:0")
    assert encoder is load_encoder("all-MiniLM-L6-v2", device="cpu")


def test_trusted_remote_code_gets_its_own_cache_entries(tmp_path):
    """One directory, two models: transformers' BERT, and trusted, the directory's own
    class (here one that changes the hidden states). A shared cache must not mix them."""
    model_dir = build_tiny_bert(tmp_path / "custom")
    (model_dir / "custom_bert.py").write_text(
        textwrap.dedent(
            """
            from transformers import BertModel

            class ShiftedBert(BertModel):
                def forward(self, *args, **kwargs):
                    output = super().forward(*args, **kwargs)
                    output.last_hidden_state.mul_(-1.0).add_(1.0)
                    return output
            """
        )
    )
    config = json.loads((model_dir / "config.json").read_text())
    config["auto_map"] = {"AutoModel": "custom_bert.ShiftedBert"}
    (model_dir / "config.json").write_text(json.dumps(config))
    pair = (["The cat sits on the mat."], ["A dog runs in the snow."])
    shared = EmbeddingCache()
    plain = BERTScoreEngine(str(model_dir), device="cpu", cache=shared)
    trusted = BERTScoreEngine(str(model_dir), device="cpu", cache=shared, trust_remote_code=True)
    assert type(trusted.encoder.model).__name__ == "ShiftedBert"
    alone = BERTScoreEngine(
        str(model_dir), device="cpu", cache=EmbeddingCache(), trust_remote_code=True
    )
    plain.score(*pair)  # fills the shared cache with the plain model's embeddings
    assert trusted.score(*pair)[0].f1 == alone.score(*pair)[0].f1
    assert plain.score(*pair)[0].f1 != alone.score(*pair)[0].f1


@pytest.mark.parametrize("deeper_first", [False, True], ids=["loaded", "view"])
def test_a_model_that_fails_at_a_layer_says_so_when_loaded(tmp_path, deeper_first):
    """Some layouts fail with their layers dropped (DeBERTa-v2 at layer 0 raises an
    UnboundLocalError from inside transformers): the load names the model and layer,
    whether layer 0 is loaded first or is a view of layer 1's copy."""
    model_dir = build_tiny_bert(tmp_path / "needs-a-layer")
    (model_dir / "needs_a_layer.py").write_text(
        textwrap.dedent(
            """
            from transformers import BertModel

            class NeedsALayer(BertModel):
                def forward(self, *args, **kwargs):
                    if len(self.encoder.layer) == 0:
                        raise IndexError("no layer to read")
                    return super().forward(*args, **kwargs)
            """
        )
    )
    config = json.loads((model_dir / "config.json").read_text())
    config["auto_map"] = {"AutoModel": "needs_a_layer.NeedsALayer"}
    (model_dir / "config.json").write_text(json.dumps(config))
    if deeper_first:
        assert load_encoder(str(model_dir), 1, device="cpu", trust_remote_code=True).layer == 1
    expected = "read at layer 0 of 2, fails on a one-word text (IndexError: no layer to read)"
    with pytest.raises(ValueError, match=re.escape(expected)):
        load_encoder(str(model_dir), 0, device="cpu", trust_remote_code=True)
    assert load_encoder(str(model_dir), 2, device="cpu", trust_remote_code=True).layer == 2


def test_remote_code_is_refused_unless_asked(tmp_path, minilm_path):
    # A model whose config asks for code from its repository must not run that code.
    import shutil

    model_dir = tmp_path / "remote"
    shutil.copytree(minilm_path, model_dir)
    config = json.loads((model_dir / "config.json").read_text())
    config["auto_map"] = {"AutoConfig": "evil.EvilConfig", "AutoModel": "evil.EvilModel"}
    (model_dir / "config.json").write_text(json.dumps(config))
    (model_dir / "evil.py").write_text("raise SystemExit('remote code ran')\n")
    # Without trust_remote_code the repository's code is ignored: the built-in class loads.
    encoder = load_encoder(str(model_dir), device="cpu")
    assert type(encoder.model).__name__ == "BertModel"
    # A string is no answer: "False" reached transformers as true and ran evil.py.
    with pytest.raises(ValueError, match="`trust_remote_code` to be True or False"):
        load_encoder(str(model_dir), device="cpu", trust_remote_code="False")  # type: ignore[arg-type]


def test_an_unknown_model_outside_bert_scores_table_is_a_named_error():
    """The layer count is read from the configuration: a missing one is not a raw OSError."""
    from opik_semantic_metrics.bertscore.engine import BERTScoreEngine

    missing = "no-such-org/no-such-model-anywhere"
    with pytest.raises(ModelUnavailableError, match="no-such-model-anywhere"):
        BERTScoreEngine(missing, device="cpu")


def test_every_spelling_of_one_model_shares_its_weights(minilm_path):
    """The alias, the directory and the directory with a trailing "/" are one model:
    one copy of the weights and one cache namespace, each under the name it was given."""
    spellings = ["all-MiniLM-L6-v2", str(minilm_path), f"{minilm_path}/"]
    encoders = [load_encoder(spelling, device="cpu") for spelling in spellings]
    assert len({id(encoder.model) for encoder in encoders}) == 1
    assert len({id(encoder.tokenizer_lock) for encoder in encoders}) == 1
    assert len({encoder.cache_key for encoder in encoders}) == 1
    assert [encoder.name for encoder in encoders] == [
        "sentence-transformers/all-MiniLM-L6-v2",
        str(minilm_path),
        f"{minilm_path}/",
    ]
    assert load_encoder(f"{minilm_path}/", device="cpu") is encoders[2]


def _tensor_ids(encoder: LoadedEncoder) -> set[int]:
    return {id(tensor) for tensor in held_tensors(encoder.model)}


@pytest.mark.parametrize(
    "build", [build_tiny_bert, build_tiny_roberta, build_tiny_albert, build_tiny_xlm, build_tiny_t5]
)
def test_every_layer_of_a_checkpoint_is_a_view_of_one_copy_and_reads_as_bert_score(tmp_path, build):
    """Layer 1 is loaded first with the layers above it dropped; the deeper layer 2, asked
    for next, adds only the layer the copy lacks; layer 0 is a view. Each returns what
    bert_score's own truncated model returns, and each records hidden states once a layer
    (transformers 5 records them by hooks on the shared layers)."""
    # bert_score reads a T5 on its encoder only where "t5" is in the name.
    directory = str(build(tmp_path / build.__name__.removeprefix("build_")))
    encoders = {layer: load_encoder(directory, layer, device="cpu") for layer in (1, 2, 0)}
    deepest = encoders[2]
    assert set().union(*map(_tensor_ids, encoders.values())) == _tensor_ids(deepest)
    assert all(encoder.tokenizer is deepest.tokenizer for encoder in encoders.values())
    assert all(encoder.tokenizer_lock is deepest.tokenizer_lock for encoder in encoders.values())
    batch = deepest.tokenizer(
        ["the cat sat on the mat", "a dog"], padding=True, return_tensors="pt"
    )
    ids, mask = batch["input_ids"], batch["attention_mask"]
    real = mask.bool()
    for layer, encoder in encoders.items():
        reference = bert_score_get_model(directory, layer)
        with torch.inference_mode():
            expected = reference(input_ids=ids, attention_mask=mask)[0]
            got = encoder.hidden_states(ids, mask)
            every = encoder.all_hidden_states(ids, mask)
        assert torch.allclose(got[real], expected[real], atol=1e-5), layer
        assert len(every) == layer + 1
        assert torch.allclose(every[layer][real], expected[real], atol=1e-5), layer


def test_bertscore_at_two_layers_holds_one_copy_of_minilm():
    """Two metrics at different layers of one model: one copy of the weights, each layer
    still packed for oneDNN and run on real tokens only where the CPU allows."""
    shallow = BERTScoreEngine("all-MiniLM-L6-v2", num_layers=3, device="cpu").encoder
    deep = BERTScoreEngine("all-MiniLM-L6-v2", num_layers=6, device="cpu").encoder
    assert _tensor_ids(shallow) < _tensor_ids(deep)
    assert len(shallow.model.encoder.layer) == 3 and len(deep.model.encoder.layer) == 6
    assert (shallow.unpadded is None) == (deep.unpadded is None)
    if deep.packed_linear_layers:  # 6 a layer and the pooler's
        assert (shallow.packed_linear_layers, deep.packed_linear_layers) == (19, 37)
