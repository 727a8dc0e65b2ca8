"""The CPU encoder-path switch: the hand-written paths agree with transformers' forward."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys

import pytest
import torch
from transformers import AutoModel, AutoTokenizer

from opik_semantic_metrics.models.encoder_paths import (
    CPU_ENCODER_ENV,
    cpu_encoder_path,
    hand_written_paths_enabled,
)
from opik_semantic_metrics.models.packed_linear import pack_linear_layers, packing_supported
from opik_semantic_metrics.models.unpadded import prepare_unpadded
from tests.tiny_models import build_tiny_bert, build_tiny_roberta


@pytest.fixture(scope="module")
def model_directories(tmp_path_factory, minilm_path):
    return {
        "minilm": minilm_path,
        "tiny_bert": build_tiny_bert(tmp_path_factory.mktemp("bert")),
        "tiny_roberta": build_tiny_roberta(tmp_path_factory.mktemp("roberta")),
    }


@pytest.mark.parametrize("name", ["minilm", "tiny_bert", "tiny_roberta"])
def test_the_hand_written_paths_agree_with_transformers_on_real_sentences(
    name, model_directories, stsb_lists, monkeypatch
):
    monkeypatch.delenv(CPU_ENCODER_ENV, raising=False)
    directory = model_directories[name]
    tokenizer = AutoTokenizer.from_pretrained(directory)
    reference_model = AutoModel.from_pretrained(directory).eval()
    optimized_model = copy.deepcopy(reference_model)
    packed = pack_linear_layers(optimized_model)
    assert packed > 0 or not packing_supported(torch.float32)
    unpadded = prepare_unpadded(optimized_model)
    assert unpadded is not None
    candidates, references = stsb_lists
    texts = candidates[:16] + references[:16]
    batch = tokenizer(texts, padding=True, truncation=True, return_tensors="pt")
    with torch.inference_mode():
        expected = reference_model(**batch).last_hidden_state
        through_packed = optimized_model(**batch).last_hidden_state
        through_unpadded = unpadded.hidden_states(batch["input_ids"], batch["attention_mask"])
    real = batch["attention_mask"].bool()
    assert torch.allclose(through_packed[real], expected[real], atol=1e-5, rtol=0)
    assert torch.allclose(through_unpadded[real], expected[real], atol=1e-5, rtol=0)


def test_the_transformers_path_turns_both_hand_written_paths_off(minilm_path, monkeypatch):
    monkeypatch.setenv(CPU_ENCODER_ENV, "transformers")
    assert cpu_encoder_path() == "transformers" and not hand_written_paths_enabled()
    model = AutoModel.from_pretrained(minilm_path).eval()
    assert pack_linear_layers(model) == 0
    assert prepare_unpadded(model) is None
    assert all(type(module).__name__ != "PackedLinear" for module in model.modules())
    monkeypatch.setenv(CPU_ENCODER_ENV, " Optimized ")
    assert cpu_encoder_path() == "optimized"
    monkeypatch.setenv(CPU_ENCODER_ENV, "")
    assert cpu_encoder_path() == "optimized"
    monkeypatch.setenv(CPU_ENCODER_ENV, "fastest")
    with pytest.raises(ValueError, match=f"Expected {CPU_ENCODER_ENV} to be one of optimized"):
        cpu_encoder_path()


_SCORE_IN_CHILD = """
import json, sys
from opik_semantic_metrics.bertscore.engine import BERTScoreEngine
from opik_semantic_metrics.models.loading import load_encoder
candidates, references = json.load(sys.stdin)
engine = BERTScoreEngine("all-MiniLM-L6-v2", device="cpu")
encoder = load_encoder("all-MiniLM-L6-v2", device="cpu")
scores = [result.f1 for result in engine.score(candidates, references)]
print(json.dumps([scores, encoder.packed_linear_layers, encoder.unpadded is not None]))
"""


def _scores_in_a_process(path: str, pairs: list[list[str]]) -> list[object]:
    """BERTScore F1 of ``pairs`` in a fresh process whose models load on ``path``."""
    environment = {**os.environ, CPU_ENCODER_ENV: path}
    finished = subprocess.run(
        [sys.executable, "-c", _SCORE_IN_CHILD],
        input=json.dumps(pairs),
        capture_output=True,
        text=True,
        env=environment,
        timeout=600,
        check=True,
    )
    return json.loads(finished.stdout.strip().splitlines()[-1])


def test_bertscore_is_the_same_on_both_paths(stsb_lists):
    candidates, references = stsb_lists
    pairs = [candidates[:24], references[:24]]
    reference_scores, reference_packed, reference_unpadded = _scores_in_a_process(
        "transformers", pairs
    )
    scores, packed, unpadded = _scores_in_a_process("optimized", pairs)
    assert (reference_packed, reference_unpadded) == (0, False)
    assert unpadded and (packed > 0 or not packing_supported(torch.float32))
    assert len(scores) == len(reference_scores) == 24
    assert max(abs(a - b) for a, b in zip(scores, reference_scores, strict=True)) <= 1e-5
