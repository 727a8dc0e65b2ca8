"""Every file the package reads, damaged as files are: one named error, never a parser's own.

Each case writes a real damaged file (cut short as by an interrupted download, binary,
nested thousands deep, valid but of the wrong type, a field past the csv module's limit)
and goes through a public entry point: a metric's constructor, ``load``, or the command
line. A model's file raises ``ModelUnavailableError``, a user's data file ``ValueError``;
the message names the file.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from opik_semantic_metrics import COMET, BERTScore, ModelUnavailableError, SemanticMatch
from opik_semantic_metrics.bertscore.baseline import PACKAGED_BASELINES, write_baseline
from opik_semantic_metrics.bertscore.engine import BERTScoreEngine
from opik_semantic_metrics.cli.main import main

COMET_FIXTURES = Path(__file__).parents[1] / "fixtures" / "comet"
MINILM_FILES = ("model.safetensors",)
#: The JSON files of an encoder: its configuration and its tokenizer's.
ENCODER_FILES = (
    "config.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
)

#: Damage as files meet it, each a function of the file's intact bytes.
DAMAGE: dict[str, Callable[[bytes], bytes]] = {
    # An interrupted download or copy.
    "cut-short": lambda data: data[: len(data) // 2],
    "binary": lambda data: bytes(range(128, 256)) * 4,
    # The parsers recurse: json and PyYAML raised a bare RecursionError.
    "nested-deep": lambda data: b"[" * 100_000 + b"]" * 100_000,
    # Valid JSON (and YAML), the wrong type: transformers raised AttributeError.
    "wrong-type": lambda data: b"[1, 2, 3]",
}


def _damaged(path: Path, damage: str) -> Path:
    path.write_bytes(DAMAGE[damage](path.read_bytes()))
    return path


@pytest.fixture
def minilm_copy(tmp_path, minilm_path) -> Path:
    """A copy of the packaged MiniLM whose files a test may damage (the weights linked)."""
    copy = tmp_path / "minilm"
    shutil.copytree(minilm_path, copy, ignore=shutil.ignore_patterns(*MINILM_FILES))
    for name in MINILM_FILES:
        (copy / name).symlink_to(minilm_path / name)
    return copy


def _comet_copy(destination: Path) -> Path:
    """The regression fixture model and the encoders it names, copied together."""
    shutil.copytree(COMET_FIXTURES / "encoders", destination / "encoders")
    return Path(shutil.copytree(COMET_FIXTURES / "regression-xlmr", destination / "comet"))


def write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def _names(error: BaseException, path: Path) -> bool:
    return str(path) in str(error)


# -- a model's files -----------------------------------------------------------------------


@pytest.mark.parametrize("damage", sorted(DAMAGE))
@pytest.mark.parametrize("file_name", ENCODER_FILES)
def test_a_damaged_encoder_file_stops_bertscore_when_it_is_made(minilm_copy, file_name, damage):
    # A cut tokenizer.json raised the tokenizers library's bare "Exception: EOF while
    # parsing"; deep nesting a RecursionError; a list an AttributeError.
    path = _damaged(minilm_copy / file_name, damage)
    with pytest.raises(ModelUnavailableError) as raised:
        BERTScore(str(minilm_copy), device="cpu", track=False)
    assert _names(raised.value, path)


@pytest.mark.parametrize("damage", sorted(DAMAGE))
@pytest.mark.parametrize(
    "file_name", ["modules.json", "sentence_bert_config.json", "1_Pooling/config.json"]
)
def test_a_damaged_sentence_transformers_file_stops_semantic_match(minilm_copy, file_name, damage):
    path = _damaged(minilm_copy / file_name, damage)
    with pytest.raises(ModelUnavailableError) as raised:
        SemanticMatch(str(minilm_copy), device="cpu", track=False)
    assert _names(raised.value, path)


@pytest.mark.parametrize(
    ("setting", "value"),
    [("max_seq_length", "256"), ("max_seq_length", 0), ("do_lower_case", "yes")],
)
def test_a_sentence_transformers_setting_of_the_wrong_type_stops_the_build(
    minilm_copy, setting, value
):
    # A max_seq_length of "256" built the metric, then failed every item.
    path = minilm_copy / "sentence_bert_config.json"
    settings = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(json.dumps({**settings, setting: value}), encoding="utf-8")
    with pytest.raises(ModelUnavailableError, match=f"`{setting}`") as raised:
        SemanticMatch(str(minilm_copy), device="cpu", track=False)
    assert _names(raised.value, path)


def test_a_pooling_folder_outside_the_model_is_refused(minilm_copy):
    path = minilm_copy / "modules.json"
    modules = json.loads(path.read_text(encoding="utf-8"))
    modules[1]["path"] = "../elsewhere"
    path.write_text(json.dumps(modules), encoding="utf-8")
    with pytest.raises(ModelUnavailableError, match="plain name") as raised:
        SemanticMatch(str(minilm_copy), device="cpu", track=False)
    assert _names(raised.value, path)


def test_a_tokenizer_json_the_tokenizers_library_cannot_build_is_named(minilm_copy):
    # Valid JSON of the right type, but not a tokenizer: the library's bare Exception.
    path = minilm_copy / "tokenizer.json"
    path.write_text(json.dumps({"model": {"type": "NoSuchModel"}}), encoding="utf-8")
    (minilm_copy / "vocab.txt").unlink()  # else transformers rebuilds it from vocab.txt
    with pytest.raises(ModelUnavailableError) as raised:
        BERTScoreEngine(str(minilm_copy), device="cpu")
    assert _names(raised.value, minilm_copy)


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_a_damaged_hparams_yaml_stops_comet_when_it_is_made(tmp_path, damage):
    # A binary hparams.yaml raised a bare UnicodeDecodeError.
    model = _comet_copy(tmp_path)
    path = _damaged(model / "hparams.yaml", damage)
    with pytest.raises(ModelUnavailableError) as raised:
        COMET(str(model), device="cpu", track=False)
    assert _names(raised.value, path)


@pytest.mark.parametrize("value", ["[1, 2]", "{a: 1}", "5"])
def test_a_class_identifier_of_the_wrong_type_is_named(tmp_path, value):
    # A list raised a bare "unhashable type: 'list'".
    model = _comet_copy(tmp_path)
    path = model / "hparams.yaml"
    kept = [
        line for line in path.read_text(encoding="utf-8").splitlines() if "class_id" not in line
    ]
    path.write_text("\n".join([*kept, f"class_identifier: {value}", ""]), encoding="utf-8")
    with pytest.raises(ModelUnavailableError, match="class_identifier") as raised:
        COMET(str(model), device="cpu", track=False)
    assert _names(raised.value, path)


def test_a_checkpoint_hyper_parameter_of_the_wrong_type_is_named(tmp_path):
    # A number where COMET expects a list of layer sizes raised a bare TypeError.
    import torch

    model = _comet_copy(tmp_path)
    path = model / "checkpoints" / "model.ckpt"
    checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    checkpoint["hyper_parameters"] = {**checkpoint.get("hyper_parameters", {}), "hidden_sizes": 5}
    torch.save(checkpoint, path)
    with pytest.raises(ValueError, match="wrong type") as raised:
        COMET(str(model), device="cpu", track=False)
    assert _names(raised.value, path)


@pytest.mark.parametrize("damage", sorted(DAMAGE))
@pytest.mark.parametrize("file_name", ENCODER_FILES)
def test_a_damaged_comet_encoder_file_stops_comet(tmp_path, file_name, damage):
    model = _comet_copy(tmp_path)
    path = _damaged(tmp_path / "encoders" / "xlmr" / file_name, damage)
    with pytest.raises(ModelUnavailableError) as raised:
        COMET(str(model), device="cpu", track=False)
    assert _names(raised.value, path)


# -- baselines -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "content",
    [
        # A field past the csv module's limit (131,072 characters): a bare _csv.Error.
        b"LAYER,P,R,F\n0," + b"9" * 200_000 + b",0.5,0.5\n",
        bytes(range(128, 256)),
        b"LAYER,P,R,F\n0,0.8,0.7,0.",
    ],
    ids=["long-field", "binary", "cut-short"],
)
def test_a_damaged_baseline_file_stops_bertscore_when_it_is_made(tmp_path, content):
    path = tmp_path / "baseline.tsv"
    path.write_bytes(content)
    with pytest.raises(ValueError) as raised:
        BERTScore(
            "all-MiniLM-L6-v2",
            rescale_with_baseline=True,
            baseline_path=path,
            device="cpu",
            track=False,
        )
    assert _names(raised.value, path)


@pytest.mark.parametrize("lang", ["../..", "en/../..", "/etc", ".hidden", "en\\..\\.."])
def test_a_language_that_is_not_a_plain_name_never_leaves_the_baselines(lang):
    # "../.." read the baseline file of that name two folders above the packaged ones.
    with pytest.raises(ValueError, match="plain name"):
        BERTScore(
            "all-MiniLM-L6-v2", lang=lang, rescale_with_baseline=True, device="cpu", track=False
        )


def test_a_local_model_rescales_with_the_file_beside_it_and_says_so(minilm_copy, tmp_path, caplog):
    # As in bert_score, a model directory's baseline is <directory>.tsv; it was read
    # without a word.
    beside = write_baseline(tmp_path / "minilm.tsv", [_baseline(0.5)] * 7)
    with caplog.at_level(logging.WARNING):
        metric = BERTScore(
            str(minilm_copy), lang="en", rescale_with_baseline=True, device="cpu", track=False
        )
    assert metric.engine.baseline_path == beside
    assert str(beside) in caplog.text and "baseline_path" in caplog.text
    assert PACKAGED_BASELINES not in beside.parents


def _baseline(value: float):
    from opik_semantic_metrics.bertscore.baseline import Baseline

    return Baseline(value, value, value)


# -- fitted states -------------------------------------------------------------------------


@pytest.mark.parametrize("damage", [*sorted(DAMAGE), "missing"])
def test_a_damaged_fitted_state_is_a_value_error_naming_it(tmp_path, damage):
    metric = SemanticMatch(device="cpu", track=False)
    path = tmp_path / "state.json"
    metric.fit(["A heart attack.", "A broken leg.", "The tax return."])
    metric.save(path)
    if damage == "missing":
        path.unlink()
    else:
        _damaged(path, damage)
    with pytest.raises(ValueError) as raised:
        metric.load(path)
    assert _names(raised.value, path)


# -- the command line ----------------------------------------------------------------------


def _one_line_error(capsys, arguments: list[str]) -> str:
    assert main(arguments) == 2
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("opik-semantic-metrics: error: ")
    return lines[0]


@pytest.fixture
def text_files(tmp_path) -> list[str]:
    texts = ["A cat sits on the mat.", "The dog runs."]
    return [
        "-c",
        str(write_lines(tmp_path / "candidates.txt", texts)),
        "-r",
        str(write_lines(tmp_path / "references.txt", texts)),
    ]


@pytest.mark.parametrize("file_name", ["config.json", "tokenizer.json"])
def test_the_command_line_names_a_damaged_model_file_in_one_line(
    capsys, minilm_copy, text_files, file_name
):
    path = _damaged(minilm_copy / file_name, "cut-short")
    message = _one_line_error(
        capsys, ["bert-score", *text_files, "-m", str(minilm_copy), "--device", "cpu"]
    )
    assert str(path) in message and "cut short" in message


def test_the_command_line_names_a_damaged_baseline_in_one_line(capsys, tmp_path, text_files):
    path = tmp_path / "baseline.tsv"
    path.write_bytes(b"LAYER,P,R,F\n0," + b"9" * 200_000 + b",0.5,0.5\n")
    message = _one_line_error(
        capsys,
        [
            "bert-score",
            *text_files,
            *("-m", "all-MiniLM-L6-v2", "--device", "cpu"),
            *("--rescale-with-baseline", "--baseline-path", str(path)),
        ],
    )
    assert str(path) in message and "field larger than field limit" in message


def test_the_command_line_names_a_damaged_hparams_yaml_in_one_line(capsys, tmp_path):
    model = _comet_copy(tmp_path)
    path = _damaged(model / "hparams.yaml", "binary")
    texts = [str(write_lines(tmp_path / f"{name}.txt", ["Hallo Welt."])) for name in "stm"]
    message = _one_line_error(
        capsys,
        ["comet-score", "-s", texts[0], "-t", texts[1], "-m", str(model), "--device", "cpu"],
    )
    assert str(path) in message and "UTF-8" in message


# -- a Hub model without a network ---------------------------------------------------------


def test_bertscores_default_model_offline_fails_at_once_naming_the_packaged_model():
    # bert_score's default, roberta-large, is not in the tests' cache and HF_HUB_OFFLINE
    # is set (conftest.py): the error says what works offline.
    with pytest.raises(ModelUnavailableError) as raised:
        BERTScore(track=False)
    message = str(raised.value)
    assert "'roberta-large'" in message
    assert "all-MiniLM-L6-v2" in message and "opik-semantic-metrics[offline]" in message


def test_the_command_line_without_a_model_offline_names_the_packaged_model(capsys, text_files):
    message = _one_line_error(capsys, ["bert-score", *text_files, "--device", "cpu"])
    assert "'roberta-large'" in message and "-m all-MiniLM-L6-v2" in message


def test_an_unreachable_hub_fails_at_once_without_hf_hub_offline(tmp_path):
    # Without HF_HUB_OFFLINE and without a network, huggingface_hub retried for 23-50 s
    # before failing. A Hub that refuses connections (a closed local port) is found
    # unreachable at once and the model looked up in the cache alone. The timeout only
    # guards against a hang.
    environment = {
        name: value
        for name, value in os.environ.items()
        if name not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE") and "PROXY" not in name.upper()
    }
    environment.update(HF_HOME=str(tmp_path / "hf"), HF_ENDPOINT="http://127.0.0.1:9")
    script = (
        "from opik_semantic_metrics.bertscore.engine import BERTScoreEngine\n"
        "from opik_semantic_metrics.errors import ModelUnavailableError\n"
        "try:\n"
        "    BERTScoreEngine(device='cpu')\n"
        "except ModelUnavailableError as error:\n"
        "    print(error)\n"
    )
    finished = subprocess.run(
        [sys.executable, "-c", script],
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert "'roberta-large'" in finished.stdout
    assert "cannot be reached" in finished.stdout and "all-MiniLM-L6-v2" in finished.stdout
    assert "Retrying" not in finished.stderr
