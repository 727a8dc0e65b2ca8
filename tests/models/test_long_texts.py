"""Over-long texts: which tokenizers may read only a leading part, and how it is found."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from tokenizers import Tokenizer, models, trainers
from transformers import AutoTokenizer

from opik_semantic_metrics.models.long_texts import (
    CHARACTERS_A_TOKEN,
    leading_part,
    splits_at_whitespace,
)

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
TINY_FAMILIES = ["bert", "gpt2", "roberta", "roberta-prefix"]


@pytest.mark.parametrize("family", TINY_FAMILIES)
@pytest.mark.parametrize("prefix", ["", " "])
def test_the_tiny_tokenizers_split_at_whitespace(family, prefix):
    tokenizer = AutoTokenizer.from_pretrained(FIXTURES / "tiny_models" / family)
    assert splits_at_whitespace(
        lambda text: tokenizer.encode(prefix + text, add_special_tokens=False)
    )


def test_minilm_and_xlm_r_tokenizers_split_at_whitespace(minilm_path):
    minilm = AutoTokenizer.from_pretrained(minilm_path)
    # The SentencePiece (Unigram, Metaspace) tokenizer of the COMET test encoders.
    xlmr = Tokenizer.from_file(str(FIXTURES / "comet" / "encoders" / "xlmr" / "tokenizer.json"))
    assert splits_at_whitespace(lambda text: minilm.encode(text, add_special_tokens=False))
    assert splits_at_whitespace(lambda text: xlmr.encode(text, add_special_tokens=False).ids)


def test_a_tokenizer_that_merges_across_spaces_fails_the_probe():
    """BPE with no pre-tokenizer learns merges that span a space ("s 3", "t w")."""
    tokenizer = Tokenizer(models.BPE(unk_token="?"))
    corpus = ["It's 3.14 o'clock, don't wait! e-mail: a@b.org end."] * 50
    trainer = trainers.BpeTrainer(vocab_size=200, special_tokens=["?"], show_progress=False)
    tokenizer.train_from_iterator(corpus, trainer=trainer)
    assert not splits_at_whitespace(lambda text: tokenizer.encode(text).ids)


def _word_count_over(limit: int):
    calls: list[str] = []

    def long_enough(part: str) -> bool:
        calls.append(part)
        return len(part.split()) > limit

    return long_enough, calls


def test_a_text_no_longer_than_the_first_part_is_not_tried():
    long_enough, calls = _word_count_over(0)
    text = "word " * (CHARACTERS_A_TOKEN * 2 // 5)
    assert leading_part(text, long_enough, max_tokens=2) is text
    assert calls == []


def test_the_part_is_the_first_long_enough_and_ends_before_whitespace():
    long_enough, calls = _word_count_over(100)
    text = "\n".join(f"line{i}\tof  text" for i in range(1000))
    part = leading_part(text, long_enough, max_tokens=1)
    assert text.startswith(part) and text[len(part)] in " \t\n" and not part[-1].isspace()
    assert len(part.split()) > 100
    # Parts of about 16, 32, 64 ... characters: each was too short but the last.
    assert [len(part.split()) > 100 for part in calls] == [False] * (len(calls) - 1) + [True]
    assert all(len(b) >= 2 * len(a) for a, b in itertools.pairwise(calls))


@pytest.mark.parametrize(
    "text",
    [
        "x" * 10_000,  # one word: no place to cut
        "few words " + " " * 10_000,  # whitespace only after the first part
        "a b c d " + " " * 20_000 + "e f g",  # too few words in every part
    ],
)
def test_a_text_without_a_long_enough_part_is_read_whole(text):
    long_enough, calls = _word_count_over(50)
    assert leading_part(text, long_enough, max_tokens=16) is text
    # Each part tried is at least twice the last: a whole read costs at most twice over.
    assert sum(len(part) for part in calls) <= 2 * len(text)
