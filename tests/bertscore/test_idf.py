"""idf weights: bert_score's formula, checked by hand and against bert_score."""

from __future__ import annotations

import math

import pytest
import torch
from bert_score.utils import get_idf_dict

from opik_semantic_metrics.bertscore.engine import BERTScoreEngine
from opik_semantic_metrics.bertscore.idf import fit_idf, uniform_weights


def test_formula_by_hand():
    # Three documents; token 7 in all three, token 8 in one (twice), token 9 in two.
    table = fit_idf([(7, 8, 8), (7, 9), (7, 9)])
    assert table.weight(7) == math.log(4 / 4) == 0.0
    assert table.weight(8) == math.log(4 / 2)
    assert table.weight(9) == math.log(4 / 3)
    assert table.weight(12345) == math.log(4)
    assert table.weigh(torch.tensor([8, 12345])).tolist() == pytest.approx(
        [math.log(2), math.log(4)]
    )


def test_uniform_weights_zero_only_cls_and_sep():
    weights = uniform_weights(torch.tensor([101, 5, 6, 102, 0]), [101, 102])
    assert weights.tolist() == [0, 1, 1, 0, 1]


def test_equals_bert_scores_idf_on_a_real_corpus(stsb_pairs):
    references = [second for _, second, _ in stsb_pairs] + ["", "  "]
    engine = BERTScoreEngine("all-MiniLM-L6-v2", device="cpu", idf=True)
    table = engine.fit_idf(references)
    tokenizer = engine.encoder.tokenizer
    oracle = get_idf_dict(references[:-2], tokenizer, nthreads=0)
    # bert_score's dict misses empty strings (it crashes on them under transformers 5);
    # refit ours without them for the comparison.
    table = engine.fit_idf(references[:-2])
    for token_id in [*list(oracle)[:500], tokenizer.cls_token_id, 999999]:
        assert abs(table.weight(token_id) - oracle[token_id]) < 1e-12
    assert table.weight(tokenizer.cls_token_id) == 0.0


def test_lists_of_references_are_flattened():
    engine = BERTScoreEngine("all-MiniLM-L6-v2", device="cpu", idf=True)
    nested = engine.fit_idf([["a dog", "a cat"], "a bird"])
    flat = engine.fit_idf(["a dog", "a cat", "a bird"])
    assert nested == flat and nested.num_documents == 3
