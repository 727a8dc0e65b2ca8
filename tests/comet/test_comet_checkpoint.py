"""Reading COMET checkpoints: safety, formats, hyper-parameters, and clear errors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import httpx
import huggingface_hub
import pytest
import torch
import yaml
from huggingface_hub.errors import GatedRepoError
from safetensors.torch import save_file

from opik_semantic_metrics import COMET, ModelUnavailableError
from opik_semantic_metrics.comet.checkpoint import parse_hparams, read_checkpoint, read_weights
from opik_semantic_metrics.comet.engine import CometEngine

FIXTURES = Path(__file__).parents[1] / "fixtures" / "comet"
ORACLE = json.loads((FIXTURES / "oracle.json").read_text(encoding="utf-8"))
SEGMENTS = json.loads((FIXTURES / "segments.json").read_text(encoding="utf-8"))


class _Payload:
    """Pickles into a call that writes a file: what a malicious checkpoint would run."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (Path.write_text, (self.marker, "the payload ran"))


def _copy_model(name: str, destination: Path) -> Path:
    """A fixture model and the encoders it names by relative path, copied together."""
    shutil.copytree(FIXTURES / "encoders", destination / "encoders")
    return Path(shutil.copytree(FIXTURES / name, destination / name))


def _malicious_model(tmp_path: Path) -> tuple[Path, Path]:
    model = _copy_model("regression-xlmr", tmp_path)
    marker = tmp_path / "pwned.txt"
    checkpoint = torch.load(model / "checkpoints" / "model.ckpt", weights_only=True)
    checkpoint["callbacks"] = _Payload(marker)
    torch.save(checkpoint, model / "checkpoints" / "model.ckpt")
    return model, marker


def test_a_checkpoint_with_a_pickled_payload_is_refused_not_run(tmp_path):
    model, marker = _malicious_model(tmp_path)
    with pytest.raises(ModelUnavailableError, match="Refused to load"):
        read_checkpoint(str(model))
    with pytest.raises(ModelUnavailableError, match="Refused to load"):
        COMET(str(model), device="cpu", track=False)
    assert not marker.exists()


def test_the_payload_is_real_it_runs_when_unpickled_unsafely(tmp_path):
    model, marker = _malicious_model(tmp_path)
    torch.load(model / "checkpoints" / "model.ckpt", weights_only=False)
    assert marker.read_text() == "the payload ran"


def test_a_safetensors_checkpoint_scores_as_the_pickled_one(tmp_path):
    model = _copy_model("regression-xlmr", tmp_path)
    state_dict, _ = read_weights(model / "checkpoints" / "model.ckpt")
    save_file(
        {key: value.contiguous() for key, value in state_dict.items()},
        model / "checkpoints" / "model.safetensors",
    )
    (model / "checkpoints" / "model.ckpt").unlink()
    engine = CometEngine(str(model), device="cpu")
    results = engine.score(*([s[key] for s in SEGMENTS[:12]] for key in ("src", "mt", "ref")))
    expected = ORACLE["models"]["regression-xlmr"]["with_reference"]["scores"][:12]
    assert [r.score for r in results] == pytest.approx(expected, abs=1e-5)


def test_a_file_that_is_no_checkpoint_is_said_to_be_read_as_one(tmp_path):
    # It named only <file's grandparent>/hparams.yaml, a folder the user never gave.
    stray = tmp_path / "hypotheses.txt"
    stray.write_text("Die Katze.\n")
    with pytest.raises(ModelUnavailableError, match="a file is read as the checkpoint"):
        read_checkpoint(str(stray))


def test_a_model_ckpt_path_reads_like_its_directory():
    by_path = read_checkpoint(str(FIXTURES / "xcomet" / "checkpoints" / "model.ckpt"))
    by_directory = read_checkpoint(str(FIXTURES / "xcomet"))
    assert by_path.directory == by_directory.directory == (FIXTURES / "xcomet").resolve()
    assert by_path.hparams == by_directory.hparams
    assert by_path.revision is None


def test_hparams_yaml_sparsemax_patch_means_softmax_whatever_the_checkpoint_says():
    hparams_yaml = yaml.safe_load((FIXTURES / "regression-bert" / "hparams.yaml").read_text())
    assert hparams_yaml["layer_transformation"] == "sparsemax_patch"
    checkpoint = read_checkpoint(str(FIXTURES / "regression-bert"))
    assert checkpoint.hparams.sparsemax is False
    assert parse_hparams("regression_metric", {"layer_transformation": "sparsemax"}, {}).sparsemax


def test_missing_keys_take_the_class_defaults_and_xcomet_forces_its_inputs():
    # unbabel-comet 2.2.7's constructor defaults.
    qe = parse_hparams("referenceless_regression_metric", {}, {})
    assert (qe.hidden_sizes, qe.pool, qe.sparsemax, qe.layer_norm) == (
        (2048, 1024),
        "avg",
        False,
        True,
    )
    assert (qe.requires_references, qe.reads_references) == (False, False)
    xcomet = parse_hparams(
        "xcomet_metric", {"input_segments": ["mt", "src"], "word_level_training": False}, {}
    )
    assert xcomet.input_segments == ("mt", "src", "ref") and xcomet.word_level
    assert xcomet.error_labels == ("minor", "major", "critical")
    reference_only = parse_hparams("unified_metric", {"input_segments": ["mt", "ref"]}, {})
    assert reference_only.requires_references


@pytest.mark.parametrize(
    ("class_identifier", "hparams", "message"),
    [
        ("ranking_metric", {}, "not supported"),
        ("regression_metric", {"pool": "mean"}, "pooling"),
        ("regression_metric", {"layer": "top"}, "layer"),
        ("unified_metric", {"input_segments": ["src", "mt"]}, "starting with 'mt'"),
    ],
)
def test_unsupported_settings_are_value_errors(class_identifier, hparams, message):
    with pytest.raises(ValueError, match=message):
        parse_hparams(class_identifier, hparams, {})


def test_a_directory_without_hparams_yaml_is_not_a_comet_model(tmp_path):
    model = _copy_model("regression-xlmr", tmp_path)
    (model / "hparams.yaml").unlink()
    with pytest.raises(ModelUnavailableError, match=r"not a COMET model.*hparams\.yaml"):
        read_checkpoint(str(model))


def _truncated(path: Path) -> None:
    path.write_bytes(path.read_bytes()[:100])


@pytest.mark.parametrize(
    ("file_name", "damage"),
    [
        # An interrupted download or copy: the empty file raised a bare EOFError.
        ("model.ckpt", lambda path: path.write_bytes(b"")),
        ("model.ckpt", _truncated),
        # No pickle at all: it was refused as a checkpoint that could run code.
        ("model.ckpt", lambda path: path.write_bytes(b"garbage")),
        # These raised safetensors' own SafetensorError.
        ("model.safetensors", lambda path: path.write_bytes(b"")),
        ("model.safetensors", lambda path: path.write_bytes(b"garbage" * 10)),
    ],
)
def test_an_unreadable_checkpoint_says_so(tmp_path, file_name, damage):
    model = _copy_model("regression-xlmr", tmp_path)
    if file_name != "model.ckpt":
        (model / "checkpoints" / "model.ckpt").unlink()
    damage(model / "checkpoints" / file_name)
    with pytest.raises(ModelUnavailableError, match="is not a readable checkpoint") as raised:
        COMET(str(model), device="cpu", track=False)
    assert "could run code" not in str(raised.value)


def test_hparams_yaml_that_is_not_a_mapping_names_no_class(tmp_path):
    # A bare number raised "argument of type 'int' is not iterable".
    model = _copy_model("regression-xlmr", tmp_path)
    (model / "hparams.yaml").write_text("2\n", encoding="utf-8")
    with pytest.raises(ModelUnavailableError, match="names no `class_identifier`"):
        read_checkpoint(str(model))


def test_an_encoder_without_its_vocabulary_file_is_refused(tmp_path):
    # transformers 5 built a tokenizer of the 5 special tokens alone: every word was
    # <unk>, and the model scored 0.2051 where it scores 0.1801, without a warning.
    # (transformers 4 cannot build one without sentencepiece, and says so.)
    model = _copy_model("regression-xlmr", tmp_path)
    (tmp_path / "encoders" / "xlmr" / "tokenizer.json").unlink()
    expected = r"(?s)has no vocabulary, only special tokens|No tokenizer in .*sentencepiece"
    with pytest.raises(ModelUnavailableError, match=expected):
        CometEngine(str(model), device="cpu")


def test_an_encoder_without_its_config_is_refused(tmp_path):
    # transformers built the family's default config (30522 x 768), and the weights then
    # failed to load with a bare size mismatch that never named config.json.
    model = _copy_model("regression-xlmr", tmp_path)
    (tmp_path / "encoders" / "xlmr" / "config.json").unlink()
    with pytest.raises(ModelUnavailableError, match=r"config\.json is missing"):
        CometEngine(str(model), device="cpu")


def test_an_encoder_whose_weights_do_not_fit_is_named(tmp_path):
    model = _copy_model("regression-xlmr", tmp_path)
    config_path = tmp_path / "encoders" / "xlmr" / "config.json"
    config = json.loads(config_path.read_text(encoding="utf-8"))
    config["intermediate_size"] *= 2
    config_path.write_text(json.dumps(config), encoding="utf-8")
    with pytest.raises(ModelUnavailableError, match="do not fit the encoder") as raised:
        CometEngine(str(model), device="cpu")
    assert "size mismatch" in str(raised.value)


def test_a_tokenizer_with_more_tokens_than_embeddings_is_refused(tmp_path):
    # An id past the embedding table would fail every score with an IndexError.
    model = _copy_model("regression-xlmr", tmp_path)
    tokenizer_path = tmp_path / "encoders" / "xlmr" / "tokenizer.json"
    tokenizer = json.loads(tokenizer_path.read_text(encoding="utf-8"))
    extra = dict(tokenizer["added_tokens"][-1], id=698, content="<extra>")
    tokenizer["added_tokens"].append(extra)
    tokenizer_path.write_text(json.dumps(tokenizer), encoding="utf-8")
    with pytest.raises(
        ModelUnavailableError, match=r"token ids up to 698, but the model has 698 token embeddings"
    ):
        CometEngine(str(model), device="cpu")


def test_missing_estimator_weights_are_named(tmp_path):
    model = _copy_model("regression-xlmr", tmp_path)
    path = model / "checkpoints" / "model.ckpt"
    checkpoint = torch.load(path, weights_only=True)
    del checkpoint["state_dict"]["estimator.ff.0.weight"]
    torch.save(checkpoint, path)
    with pytest.raises(ModelUnavailableError, match="estimator"):
        CometEngine(str(model), device="cpu")


def test_an_uncached_hub_model_offline_says_how_to_get_it():
    with pytest.raises(ModelUnavailableError, match="HF_HUB_OFFLINE") as raised:
        COMET("Unbabel/wmt22-comet-da-not-in-this-cache", device="cpu", track=False)
    assert "Unbabel/wmt22-comet-da-not-in-this-cache" in str(raised.value)


def test_a_gated_model_says_to_accept_the_licence_and_log_in(monkeypatch):
    url = "https://huggingface.co/api/models/Unbabel/XCOMET-XL/revision/main"
    response = httpx.Response(403, request=httpx.Request("GET", url))

    def gated(**_kwargs):
        raise GatedRepoError(
            f"Access to model Unbabel/XCOMET-XL is restricted: {url}", response=response
        )

    monkeypatch.setattr(huggingface_hub, "snapshot_download", gated)
    with pytest.raises(ModelUnavailableError) as raised:
        COMET("Unbabel/XCOMET-XL", device="cpu", track=False)
    message = str(raised.value)
    assert "accept its licence at https://huggingface.co/Unbabel/XCOMET-XL" in message
    assert "hf auth login" in message
