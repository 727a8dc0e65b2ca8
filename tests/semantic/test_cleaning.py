"""Cleaning: stop words (NLTK's English list) and punctuation tokens are dropped."""

from __future__ import annotations

import string

import pytest

from opik_semantic_metrics.semantic.cleaning import (
    CleanedPrefixes,
    clean_text,
    has_content,
    is_punctuation,
    stop_words_of,
    word_forms,
)
from opik_semantic_metrics.semantic.stopwords import ENGLISH_STOP_WORDS


def test_the_list_is_nltks_179_english_words():
    assert len(ENGLISH_STOP_WORDS) == 179
    # First, middle and last entries of NLTK's file, and its contractions.
    for word in ("i", "me", "ourselves", "you're", "that'll", "should've", "ma", "wouldn't"):
        assert word in ENGLISH_STOP_WORDS
    for word in ("heart", "yes", "false", "true"):
        assert word not in ENGLISH_STOP_WORDS
    assert all(word == word.lower() for word in ENGLISH_STOP_WORDS)


def test_every_ascii_punctuation_character_counts_as_punctuation():
    assert all(is_punctuation(character) for character in string.punctuation)
    assert not any(is_punctuation(character) for character in "aZ09 é")
    assert is_punctuation("\u2014") and is_punctuation("\u00bf")  # em dash, inverted "?"


@pytest.mark.parametrize(
    ("text", "cleaned"),
    [
        ("The patient had a heart attack.", "patient heart attack"),
        ("Myocardial infarction", "Myocardial infarction"),
        ("THE Heart, OF the matter", "Heart matter"),
        ("(Stepped-up) policing, 3.5 km", "Stepped-up policing 3.5 km"),
        ("\u00bfQu\u00e9? \u2014 \u201cna\u00efve\u201d", "Qu\u00e9 na\u00efve"),
        ("It's not what you think -- it is !!", "think"),
        ("Don\u2019t stop (the) music", "stop music"),
        ("fever,cough", "fever,cough"),
        ("  spaced \t out\n words ", "spaced words"),
        ("", ""),
        ("   ", ""),
        # Stop words alone: every word is kept, punctuation only dropped.
        ("the of and . , ;", "the of and"),
        ("I can do that.", "I can do that"),
        ("... ?!", ""),
        # BERT's tokenizer drops zero-width and control characters; so does cleaning,
        # before the stop word look-up ("The\u200b" was once a content word).
        ("The\u200b he\u00adart\ufeff.", "heart"),
        ("No\u200b \u2060a\u200bttack\x07", "attack"),
    ],
)
def test_clean_text_drops_punctuation_and_stop_words(text, cleaned):
    assert clean_text(text) == cleaned


def test_cleaning_never_empties_a_text_that_has_words():
    """A text of stop words alone keeps them all, whatever the list; the words of a text
    with a content word are cleaned as usual, and a text of punctuation alone is empty."""
    keeping_negations = stop_words_of("keep_negations")
    assert clean_text("Yes, I can do it.", keeping_negations) == "Yes"
    assert clean_text("I can do that.", keeping_negations) == "I can do that"
    assert clean_text("Not.", keeping_negations) == "Not"
    assert clean_text("Not.", ENGLISH_STOP_WORDS) == "Not"
    assert clean_text("No, it is not!", ENGLISH_STOP_WORDS) == "No it is not"
    assert clean_text("-- ...", keeping_negations) == ""
    assert not has_content("I can do that.") and has_content("I can do that, yes.")


def test_cleaned_prefixes_of_a_text_of_stop_words_keep_every_word():
    """Over-long texts are cleaned part by part: a text of stop words alone keeps its
    words in each part, as clean_text keeps them in the whole."""
    text = "it is what it is, " * 5
    prefixes = CleanedPrefixes(text)
    assert prefixes.of(5) == "it is"
    assert prefixes.of(len(text)) == clean_text(text)
    with_content = CleanedPrefixes(text + "heart")
    assert with_content.of(5) == ""  # its content word comes later
    assert with_content.of(len(text) + 5) == "heart"


def test_word_forms_ignore_case_and_surrounding_punctuation():
    assert word_forms("No.") == word_forms("no") == ("no",)
    assert word_forms("It isn\u2019t!") == ("it", "isn't")
    assert word_forms("-- ...") == ()
    assert word_forms("No") != word_forms("Not")
    assert word_forms("No\u200b.") == ("no",)
