"""Token ids equal bert_score's ``sent_encode`` where bert_score works as designed.

The prefix space decides the score for byte-level BPE tokenizers ("OK" and " OK" are
different tokens). bert_score adds it by passing ``add_prefix_space=True`` to the
tokenizer, which transformers 5 ignores: under transformers 5 bert_score itself loses the
space. The oracle is therefore bert_score 0.3.13 under transformers 4, recorded with the
tiny models it ran on by ``fixtures/bertscore_transformers4/make_oracle.py``: RoBERTa-style
with and without a tokenizer-side prefix space, GPT-2-style, and WordPiece.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from bert_score.utils import get_tokenizer, sent_encode

from opik_semantic_metrics.bertscore.tokenize import TextEncoder, needs_prefix_space
from opik_semantic_metrics.models.loading import load_encoder
from opik_semantic_metrics.models.long_texts import CHARACTERS_A_TOKEN
from tests.tiny_models import build_tiny_byt5

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
ORACLE = json.loads((FIXTURES / "bertscore_transformers4" / "oracle.json").read_text("utf-8"))
FAMILIES = sorted(ORACLE["ids"])


def _text_encoder(family: str) -> TextEncoder:
    encoder = load_encoder(str(FIXTURES / "tiny_models" / family), device="cpu")
    return TextEncoder(encoder.tokenizer, encoder.max_length)


def test_every_tokenizer_family_is_covered():
    assert FAMILIES == ["bert", "gpt2", "roberta", "roberta-prefix"]
    assert ORACLE["versions"]["bert_score"] == "0.3.13"
    assert ORACLE["versions"]["transformers"].startswith("4.")


@pytest.mark.parametrize("family", FAMILIES)
def test_ids_equal_bert_score_under_transformers_4(family):
    text_encoder = _text_encoder(family)
    for text, expected in zip(ORACLE["id_texts"], ORACLE["ids"][family], strict=True):
        assert text_encoder.encode(text).ids == tuple(expected), repr(text)


@pytest.mark.parametrize("family", FAMILIES)
def test_a_whole_list_in_one_call_gets_the_same_ids(family):
    """encode_many makes one tokenizer call for the list: empty, long and prefixed texts mixed."""
    texts = ORACLE["id_texts"]
    text_encoder = _text_encoder(family)
    encoded = text_encoder.encode_many(["", *texts, "   "])
    assert [item.ids for item in encoded[1:-1]] == [tuple(ids) for ids in ORACLE["ids"][family]]
    assert encoded[0].empty and encoded[-1].empty
    assert encoded[0].ids == encoded[-1].ids == text_encoder.special_ids
    assert [item.truncated for item in encoded[1:-1]] == [text == texts[-1] for text in texts]


def test_ok_gets_its_prefix_space_on_byte_level_bpe():
    """The case that moves F1 most: " OK" and "OK" are different tokens."""
    tokenizer = _text_encoder("roberta").tokenizer
    assert tokenizer.tokenize("OK") != tokenizer.tokenize(" OK")
    ok = ORACLE["id_texts"].index("OK")
    assert ORACLE["ids"]["roberta"][ok] == tokenizer.encode(" OK")


@pytest.mark.parametrize("family", FAMILIES)
def test_prefix_space_is_decided_by_behaviour(family):
    # Byte-level BPE that does not add the space itself needs one; the others do not.
    assert needs_prefix_space(_text_encoder(family).tokenizer) == (family in {"roberta", "gpt2"})


def test_a_byte_tokenizer_reads_a_leading_space_as_its_own_token_and_gets_none(tmp_path):
    """ByT5 reads a leading space as a byte before the word's unchanged bytes. bert_score
    adds no space for its class, and a space there would be one more token, not another
    first token: we add none either (ids checked against bert_score under the running
    transformers, which encodes ByT5 the same under 4 and 5)."""
    directory = str(build_tiny_byt5(tmp_path / "byt5"))
    encoder = load_encoder(directory, device="cpu")
    text_encoder = TextEncoder(encoder.tokenizer, encoder.max_length)
    assert encoder.tokenizer.tokenize(" OK") == [" ", *encoder.tokenizer.tokenize("OK")]
    assert not needs_prefix_space(encoder.tokenizer)
    theirs = get_tokenizer(directory, use_fast=False)
    for text in ["OK", "cat", "  The cat sat on the mat. ", "Ünïcödé, 猫"]:
        assert text_encoder.encode(text).ids == tuple(sent_encode(theirs, text)), repr(text)


def test_bert_score_loses_the_prefix_space_under_transformers_5():
    """Why the oracle above was recorded under transformers 4."""
    import transformers

    if int(transformers.__version__.split(".")[0]) < 5:
        pytest.skip("transformers 4 honours add_prefix_space=True")
    tokenizer = get_tokenizer(str(FIXTURES / "tiny_models" / "roberta"), use_fast=False)
    ok = ORACLE["id_texts"].index("OK")
    assert sent_encode(tokenizer, "OK") != ORACLE["ids"]["roberta"][ok]


@pytest.mark.parametrize("family", FAMILIES)
def test_long_text_is_cut_and_flagged(family):
    text_encoder = _text_encoder(family)
    long_text = ORACLE["id_texts"][-1]
    encoded = text_encoder.encode(long_text)
    assert encoded.truncated and len(encoded.ids) == text_encoder.max_length
    assert not text_encoder.encode("OK").truncated


def _caption_words(count: int, seed: int) -> str:
    rng = random.Random(seed)
    words = [*" ".join(ORACLE["id_texts"][:-1]).split(), "\n", "\t", "  "]
    return " ".join(rng.choice(words) for _ in range(count))


# Over-long texts of every shape the leading part meets (models/long_texts.py).
LONG_TEXTS = [
    _caption_words(5_000, seed=0),  # found in the first part tried (16 characters a token)
    " " * 20_000 + _caption_words(3_000, seed=1),  # stripped first, as bert_score does
    "word " * 80 + "\n" * 30_000 + _caption_words(3_000, seed=2),  # found in a later part
    "x" * 30_000,  # no place to cut: read whole
    _caption_words(300, seed=3),  # over the limit, shorter than the first part
]


class _RecordingTokenizer:
    """The tokenizer, noting the longest text it was given."""

    def __init__(self, tokenizer) -> None:
        self.tokenizer = tokenizer
        self.longest = 0

    def __call__(self, texts, **options):
        self.longest = max(self.longest, *map(len, texts))
        return self.tokenizer(texts, **options)

    def encode(self, text, **options):
        self.longest = max(self.longest, len(text))
        return self.tokenizer.encode(text, **options)


@pytest.mark.parametrize("family", FAMILIES)
def test_an_over_long_text_gets_the_ids_of_the_whole_text(family):
    """The ids and flags equal those of the tokenizer given the whole text (the rules of
    this module: stripped, prefix space, cut to the limit)."""
    text_encoder = _text_encoder(family)
    tokenizer = text_encoder.tokenizer
    prefix = " " if text_encoder.prefix_space else ""
    whole = [prefix + text.strip() for text in LONG_TEXTS]
    expected = tokenizer(whole, truncation=True, max_length=text_encoder.max_length)
    lengths = [len(ids) for ids in tokenizer(whole, verbose=False)["input_ids"]]
    encoded = text_encoder.encode_many(LONG_TEXTS)
    assert [list(item.ids) for item in encoded] == expected["input_ids"]
    assert [item.truncated for item in encoded] == [n > text_encoder.max_length for n in lengths]


@pytest.mark.parametrize("family", FAMILIES)
def test_a_five_megabyte_text_is_tokenized_only_as_far_as_the_limit(family):
    text_encoder = _text_encoder(family)
    text = _caption_words(1_100_000, seed=4)
    expected = text_encoder.encode(text[:100_000])
    text_encoder.tokenizer = _RecordingTokenizer(text_encoder.tokenizer)
    encoded = text_encoder.encode(text)
    assert encoded == expected and encoded.truncated
    assert text_encoder.tokenizer.longest < 2 * CHARACTERS_A_TOKEN * text_encoder.max_length
    assert len(text) > 5_000_000
