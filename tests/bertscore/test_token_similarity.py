"""BERTScoreEngine.token_similarity: the matrix greedy matching reads P and R from."""

from __future__ import annotations

import pytest
import torch
from transformers import AutoTokenizer

from opik_semantic_metrics.bertscore.engine import BERTScoreEngine
from opik_semantic_metrics.errors import InputError


@pytest.fixture(scope="module")
def engine() -> BERTScoreEngine:
    return BERTScoreEngine("all-MiniLM-L6-v2", device="cpu")


def test_row_and_column_maxima_give_the_engines_precision_and_recall(engine, stsb_pairs):
    for candidate, reference, _ in stsb_pairs[:20]:
        cand_tokens, ref_tokens, matrix = engine.token_similarity(candidate, reference)
        [result] = engine.score([candidate], [reference])
        assert matrix.shape == (len(cand_tokens), len(ref_tokens))
        assert cand_tokens[0] == "[CLS]" and cand_tokens[-1] == "[SEP]"
        # Without idf every token but [CLS]/[SEP] weighs the same; specials stay targets.
        precision = matrix[1:-1].max(dim=1).values.mean()
        recall = matrix[:, 1:-1].max(dim=0).values.mean()
        assert float(precision) == pytest.approx(result.precision, abs=1e-6)
        assert float(recall) == pytest.approx(result.recall, abs=1e-6)


def test_tokens_are_the_tokenizers_own_tokens(engine, minilm_path):
    tokenizer = AutoTokenizer.from_pretrained(minilm_path)
    cand_tokens, ref_tokens, matrix = engine.token_similarity("Cats purr.", "  A dog barks ")
    assert cand_tokens == ["[CLS]", *tokenizer.tokenize("Cats purr."), "[SEP]"]
    assert ref_tokens == ["[CLS]", *tokenizer.tokenize("A dog barks"), "[SEP]"]
    assert matrix.dtype == torch.float32 and matrix.device.type == "cpu"
    assert float(matrix.max()) <= 1.0 + 1e-6


@pytest.mark.parametrize(
    ("candidate", "reference", "message"),
    [
        (None, "a", "`candidate` to be a string, got NoneType"),
        ("a", ["a", "b"], "`reference` to be a string, got list"),
        (3, 4, "`candidate` to be a string, got int"),
        ("a\udc80b", "a", "`candidate` to be valid Unicode text, found the unpaired"),
    ],
)
def test_non_strings_raise_input_error(engine, candidate, reference, message):
    with pytest.raises(InputError, match=message):
        engine.token_similarity(candidate, reference)
