"""Scores equal bert_score's on empty, whitespace-only and prefix-sensitive pairs.

bert_score 0.3.13 crashes on empty texts under transformers 5 and loses the RoBERTa prefix
space there, so its values were recorded under transformers 4 by
``fixtures/bertscore_transformers4/make_oracle.py``, one pair at a time, on the packaged
MiniLM and on the tiny models stored beside them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from opik_semantic_metrics.bertscore.engine import BERTScoreEngine
from tests.bert_score_oracle import bert_score_prf, prf_table
from tests.tiny_models import build_tiny_byt5

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
ORACLE = json.loads((FIXTURES / "bertscore_transformers4" / "oracle.json").read_text("utf-8"))
CANDIDATES = [candidate for candidate, _reference in ORACLE["score_pairs"]]
REFERENCES = [reference for _candidate, reference in ORACLE["score_pairs"]]
MODELS = {
    "minilm": ("all-MiniLM-L6-v2", 6),
    "bert": (str(FIXTURES / "tiny_models" / "bert"), 2),
    "roberta": (str(FIXTURES / "tiny_models" / "roberta"), 2),
    "roberta-prefix": (str(FIXTURES / "tiny_models" / "roberta-prefix"), 2),
}


@pytest.mark.parametrize("idf", [False, True], ids=["no-idf", "idf"])
@pytest.mark.parametrize("family", sorted(MODELS))
def test_scores_equal_bert_score_under_transformers_4(family, idf):
    model, layer = MODELS[family]
    engine = BERTScoreEngine(model, layer, device="cpu", idf=idf)
    if idf:
        engine.fit_idf(REFERENCES)  # bert_score fits idf on the references of the call
    results = engine.score(CANDIDATES, REFERENCES)
    ours = prf_table(results)
    oracle = torch.tensor(ORACLE["scores"][f"{family}/{'idf' if idf else 'no-idf'}"])
    assert (ours - oracle).abs().max().item() <= 1e-5


def test_empty_pairs_score_zero_and_are_flagged():
    results = BERTScoreEngine("all-MiniLM-L6-v2", device="cpu").score(CANDIDATES, REFERENCES)
    for (candidate, reference), result in zip(ORACLE["score_pairs"], results, strict=True):
        empty = not candidate.strip() or not reference.strip()
        assert (result.candidate_empty or result.reference_empty) == empty
        if empty:
            assert (result.precision, result.recall, result.f1) == (0.0, 0.0, 0.0)


@pytest.mark.parametrize("family", ["bert", "gpt2", "roberta"])
def test_empty_texts_score_zero_with_any_tokenizer(family):
    """GPT-2's tokenizer adds no special tokens, so an empty text has no token at all:
    it scores 0 and is flagged like a [CLS] [SEP]-only text, in a list, alone, or in a
    batch of nothing but empty texts."""
    engine = BERTScoreEngine(str(FIXTURES / "tiny_models" / family), 2, device="cpu")
    candidates, references = ["", "  ", "a cat", "", "a cat"], ["a dog", "", "", "", "a dog"]
    whole_list = engine.score(candidates, references)
    one_by_one = [engine.score_one(c, r) for c, r in zip(candidates, references, strict=True)]
    only_empty = engine.score(["", " "], ["", "\t"])
    for result in whole_list[:-1] + one_by_one[:-1] + only_empty:
        assert (result.precision, result.recall, result.f1) == (0.0, 0.0, 0.0)
        assert result.candidate_empty or result.reference_empty
    assert whole_list[-1].f1 > 0.5
    assert whole_list[-1].f1 == pytest.approx(one_by_one[-1].f1, abs=1e-6)
    cand_tokens, ref_tokens, matrix = engine.token_similarity("", "a dog")
    assert tuple(matrix.shape) == (len(cand_tokens), len(ref_tokens))


def test_a_one_token_text_of_a_t5_tokenizer_is_not_empty(tmp_path):
    """bert_score takes a text of exactly two tokens for empty: [CLS] and [SEP] where the
    tokenizer adds those two. T5's tokenizers add only "</s>", so every one-token text
    ("OK", "Yes", one byte for ByT5) is two tokens, and bert_score sets its P and R, but
    not its F1, to 0. Ours: a text is empty when it has no token but the special ones;
    F1 equals bert_score's everywhere, P and R wherever no text has one token."""
    # bert_score reads a T5 on its encoder where its name holds "t5".
    directory = str(build_tiny_byt5(tmp_path / "byt5"))
    candidates = ["a", "b", "The cat sits on the mat.", "Two dogs run."]
    references = ["a", "c", "A cat sat on the mat.", "Dogs are running in a park."]
    theirs = bert_score_prf(candidates, references, model_type=directory, num_layers=2)
    results = BERTScoreEngine(directory, 2, device="cpu").score(candidates, references)
    ours = prf_table(results)
    assert not any(r.candidate_empty or r.reference_empty for r in results)
    assert (ours[:, 2] - theirs[:, 2]).abs().max().item() <= 1e-5
    assert (ours[2:] - theirs[2:]).abs().max().item() <= 1e-5
    assert theirs[:2, :2].abs().max().item() == 0.0
    assert ours[0].tolist() == pytest.approx([1.0, 1.0, 1.0])
    assert 0.0 < ours[1, 0].item() < 1.0 and 0.0 < ours[1, 1].item() < 1.0
