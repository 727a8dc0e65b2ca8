"""Over-long texts: which tokenizers may read only a leading part, and how it is found."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from tokenizers import Regex, Tokenizer, models, pre_tokenizers, processors, trainers
from transformers import AutoTokenizer, PreTrainedTokenizerFast

from opik_semantic_metrics.bertscore.tokenize import TextEncoder
from opik_semantic_metrics.models.long_texts import (
    CHARACTERS_A_TOKEN,
    leading_part,
    reads_leading_parts,
    transformers_tokenizer_reads_leading_parts,
)

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
TINY_FAMILIES = ["bert", "gpt2", "roberta", "roberta-prefix"]


def _tiny_tokenizer(family: str):
    return AutoTokenizer.from_pretrained(FIXTURES / "tiny_models" / family)


@pytest.mark.parametrize("family", TINY_FAMILIES)
@pytest.mark.parametrize("prefix", ["", " "])
def test_the_tiny_tokenizers_read_leading_parts(family, prefix):
    tokenizer = _tiny_tokenizer(family)
    assert transformers_tokenizer_reads_leading_parts(tokenizer, lambda text: prefix + text)


def test_minilm_and_xlm_r_tokenizers_read_leading_parts(minilm_path):
    minilm = AutoTokenizer.from_pretrained(minilm_path)
    # The SentencePiece (Unigram, Metaspace) tokenizer of the COMET test encoders.
    xlmr = Tokenizer.from_file(str(FIXTURES / "comet" / "encoders" / "xlmr" / "tokenizer.json"))
    assert transformers_tokenizer_reads_leading_parts(minilm, str.lower)
    assert reads_leading_parts(lambda text: xlmr.encode(text, add_special_tokens=False).ids)


def test_a_tokenizer_that_merges_across_spaces_fails_the_probe():
    """BPE with no pre-tokenizer learns merges that span a space ("s 3", "t w")."""
    tokenizer = Tokenizer(models.BPE(unk_token="?"))
    corpus = ["It's 3.14 o'clock, don't wait! e-mail: a@b.org end."] * 50
    trainer = trainers.BpeTrainer(vocab_size=200, special_tokens=["?"], show_progress=False)
    tokenizer.train_from_iterator(corpus, trainer=trainer)
    assert not reads_leading_parts(lambda text: tokenizer.encode(text).ids)


def _whole_text_ids(text_encoder: TextEncoder, texts: list[str]) -> list[list[int]]:
    """What the tokenizer gives the whole (stripped) texts, cut to the limit its own way."""
    prefix = " " if text_encoder.prefix_space else ""
    inputs = [prefix + text.strip() for text in texts]
    tokenizer = text_encoder.tokenizer
    return tokenizer(inputs, truncation=True, max_length=text_encoder.max_length)["input_ids"]


def test_a_tokenizer_that_truncates_on_the_left_reads_every_text_whole():
    """Such a limit keeps a text's last tokens, which no leading part holds."""
    tokenizer = _tiny_tokenizer("bert")
    tokenizer.truncation_side = "left"
    text_encoder = TextEncoder(tokenizer, max_length=64)
    assert not text_encoder._cuts_long_texts
    texts = ["the first words " * 600 + "and the last ones", "a cat " * 300 + "the end"]
    encoded = text_encoder.encode_many(texts)
    assert [list(item.ids) for item in encoded] == _whole_text_ids(text_encoder, texts)
    assert all(item.truncated for item in encoded)


def test_an_added_token_with_a_space_makes_a_tokenizer_read_every_text_whole():
    """A part could end inside "zebra quokka", read as one token in the whole text."""
    tokenizer = _tiny_tokenizer("bert")
    tokenizer.add_tokens(["zebra quokka"])
    assert not reads_leading_parts(lambda text: text.split(), added_tokens=["New York"])
    text_encoder = TextEncoder(tokenizer, max_length=64)
    assert not text_encoder._cuts_long_texts
    texts = ["x " * 520 + "zebra quokka " * 2_000]
    assert [list(item.ids) for item in text_encoder.encode_many(texts)] == _whole_text_ids(
        text_encoder, texts
    )


def test_a_part_never_ends_before_a_line_break():
    """Llama 3's and Qwen 2's pre-tokenizer joins a run of punctuation and the line breaks
    after it (";;;\\n"), so a part ending at ";;;" could be read otherwise than the whole
    text. This tokenizer's merges make ";;;" two other tokens with and without the "\\n"."""
    pattern = (
        r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
        r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
    )
    vocabulary = {"[UNK]": 0, "[CLS]": 1, "[SEP]": 2}
    for character in sorted(set(" \n;xbc")):
        vocabulary[character] = len(vocabulary)
    merges = [(";", "\n"), (";", ";\n"), (";", ";")]
    merges += [("x" * size, "x" * size) for size in (1, 2, 4, 8, 16)]  # "x" * 32 is a token
    for first, second in merges:
        vocabulary[first + second] = len(vocabulary)
    backend = Tokenizer(models.BPE(vocab=vocabulary, merges=merges, unk_token="[UNK]"))
    backend.pre_tokenizer = pre_tokenizers.Split(Regex(pattern), behavior="isolated")
    backend.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 1), ("[SEP]", 2)]
    )
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend, unk_token="[UNK]", cls_token="[CLS]", sep_token="[SEP]"
    )
    assert tokenizer.tokenize(";;;") != tokenizer.tokenize(";;;\n")[:2]
    text_encoder = TextEncoder(tokenizer, max_length=64)
    assert text_encoder._cuts_long_texts
    # The part that ends at ";;;" has the limit's tokens or a few more, ";;;" last.
    texts = ["x" * (32 * count) + ";;;\nb " + "c " * 2_000 for count in range(56, 64)]
    assert [list(item.ids) for item in text_encoder.encode_many(texts)] == _whole_text_ids(
        text_encoder, texts
    )


def _counting_words(calls: list[str]):
    def count_words(part: str) -> int:
        calls.append(part)
        return len(part.split())

    return count_words


def test_a_text_no_longer_than_the_first_part_is_not_tried():
    calls: list[str] = []
    text = "word " * (CHARACTERS_A_TOKEN * 2 // 5)
    assert leading_part(text, _counting_words(calls), max_tokens=2) is text
    assert calls == []


def test_the_part_is_the_first_long_enough_and_ends_before_a_space():
    calls: list[str] = []
    text = " ".join(f"line{i}\tof\ntext" for i in range(1000))
    part = leading_part(text, _counting_words(calls), max_tokens=100)
    assert text.startswith(part) and text[len(part)] == " " and not part[-1].isspace()
    assert len(part.split()) > 100
    assert [len(part.split()) > 100 for part in calls] == [False] * (len(calls) - 1) + [True]


def test_a_sparse_text_is_read_further_at_once():
    """A part with a tenth of the tokens needed is followed by one about ten times as long."""
    calls: list[str] = []
    text = " ".join(["word" + " " * 200] * 1_000)
    part = leading_part(text, _counting_words(calls), max_tokens=100)
    assert len(part.split()) > 100
    assert len(calls) == 2 and len(calls[1]) >= 10 * len(calls[0])


@pytest.mark.parametrize(
    "text",
    [
        "x" * 10_000,  # one word: no place to cut
        "few words " + " " * 10_000,  # spaces only after the first part
        "a b c d " + " " * 20_000 + "e f g",  # the first place to cut is past the middle
        "abcd\n" * 20_000,  # words between line breaks, none before a space
        ("w" + " " * 999) * 40,  # 40 words
        ("w" + " " * 99) * 90,  # 90 words, but not one part of at most half the text
    ],
)
def test_a_text_without_a_long_enough_part_is_read_whole(text):
    calls: list[str] = []
    assert leading_part(text, _counting_words(calls), max_tokens=50) is text
    # No part tried is over half the text: a whole read costs at most twice over.
    assert all(2 * len(part) <= len(text) for part in calls)
    assert sum(len(part) for part in calls) < len(text)
    assert all(len(b) >= 2 * len(a) for a, b in itertools.pairwise(calls))
