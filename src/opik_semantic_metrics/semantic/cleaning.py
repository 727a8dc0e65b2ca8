"""Cleaning a text down to its content words before the word and sentence levels.

The text is split on whitespace and each token is parted from its surrounding
punctuation, as a word tokenizer does ("attack." is "attack" and "."; "stepped-up",
"3.5" and "don't" stay whole). A punctuation or symbol character is one in a Unicode
``P*`` or ``S*`` category, a superset of Python's ``string.punctuation``. The
punctuation is dropped, and so is every word that is a stop word once lower-cased with
plain apostrophes. The remaining words are kept as written and joined by single spaces.

**Cleaning never empties a text that has words.** A text of stop words alone ("I can do
that.", "Yes, it is.") keeps all its words, without the punctuation: otherwise it would
have nothing for the word and sentence levels to read, and "I can do that." against "Yes,
I can do it." would be no answer at all, though people read them as near paraphrases.
Only a text without a word (empty, or punctuation alone) cleans to ``""``.

Two stop-word lists, one per cleaning (:data:`CLEANINGS`):

- ``"keep_negations"``: NLTK's English list (see
  :data:`~opik_semantic_metrics.vocabulary.ENGLISH_STOP_WORDS`) without the words that negate what
  they qualify (:data:`NEGATIONS`: "not", "no", "nor", "never", "isn't", "don't"...), for
  "A man is not playing" does not mean "A man is playing";
- ``"all_stop_words"``: NLTK's whole list, the layered semantic score's recipe, which
  reads both of those as "man playing".

Example:
    >>> clean_text("The patient had a heart attack.")
    'patient heart attack'
    >>> clean_text("It is NOT, as they say, -- what it was!")
    'say'
    >>> clean_text("It is NOT, as they say, -- what it was!", stop_words_of("keep_negations"))
    'NOT say'
    >>> clean_text("(Stepped-up) policing, 3.5 km away")
    'Stepped-up policing 3.5 km away'
    >>> clean_text("I can do that.")
    'I can do that'
    >>> clean_text("   "), clean_text("?!")
    ('', '')
    >>> word_forms("No.  -- it isn\u2019t!")
    ('no', 'it', "isn't")
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator
from typing import Final, Literal

from opik_semantic_metrics.inputs import visible_characters
from opik_semantic_metrics.vocabulary import ENGLISH_STOP_WORDS, NEGATIONS_AS_WRITTEN

_PLAIN_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'"})

Cleaning = Literal["keep_negations", "all_stop_words"]
#: The cleanings, by name (see the module docstring).
CLEANINGS: Final = ("keep_negations", "all_stop_words")

#: NLTK's stop words that negate: "not", "no", "nor" and the negative contractions, with
#: and without their apostrophe (NLTK lists "isn" for "isn t"); those of
#: :data:`~opik_semantic_metrics.vocabulary.NEGATIONS_AS_WRITTEN` that are stop words.
#: "never" and "nothing" are no NLTK stop words, so every cleaning keeps them.
NEGATIONS: Final[frozenset[str]] = ENGLISH_STOP_WORDS & NEGATIONS_AS_WRITTEN
_KEEPING_NEGATIONS: Final = ENGLISH_STOP_WORDS - NEGATIONS


def is_punctuation(character: str) -> bool:
    """Whether a character is punctuation or a symbol (Unicode categories ``P*``, ``S*``)."""
    return unicodedata.category(character)[0] in "PS"


def _core(token: str) -> str:
    """The token without its surrounding punctuation and its invisible characters.

    BERT's tokenizer drops control and zero-width characters, so "No\u200b" reads as "No"
    to the model and must be the stop word "no" here too.
    """
    token = visible_characters(token)
    start, end = 0, len(token)
    while start < end and is_punctuation(token[start]):
        start += 1
    while end > start and is_punctuation(token[end - 1]):
        end -= 1
    return token[start:end]


def _form(word: str) -> str:
    """A word as compared with the stop words: plain apostrophes, lower case."""
    return word.translate(_PLAIN_APOSTROPHES).lower()


def word_forms(text: str) -> tuple[str, ...]:
    """The compared forms of a text's words, punctuation left out."""
    return tuple(_form(core) for core in map(_core, text.split()) if core)


def stop_words_of(cleaning: Cleaning) -> frozenset[str]:
    """The stop words a cleaning drops.

    Raises:
        ValueError: An unknown cleaning.
    """
    if cleaning == "keep_negations":
        return _KEEPING_NEGATIONS
    if cleaning == "all_stop_words":
        return ENGLISH_STOP_WORDS
    raise ValueError(f"Expected `cleaning` in {CLEANINGS}, got {cleaning!r}.")


def _words(text: str) -> Iterator[str]:
    """The text's words as written, without their surrounding punctuation."""
    return (word for word in map(_core, text.split()) if word)


def _content_words(text: str, stop_words: frozenset[str]) -> Iterator[str]:
    return (word for word in _words(text) if _form(word) not in stop_words)


def has_words(text: str) -> bool:
    """Whether the text has a word (anything but whitespace, punctuation and symbols)."""
    return next(_words(text), None) is not None


def has_content(text: str, stop_words: frozenset[str] = ENGLISH_STOP_WORDS) -> bool:
    """Whether the text has a word that is not in ``stop_words``."""
    return next(_content_words(text, stop_words), None) is not None


def clean_text(text: str, stop_words: frozenset[str] = ENGLISH_STOP_WORDS) -> str:
    """The text without punctuation and ``stop_words``; a text of stop words alone
    without punctuation only (see the module docstring)."""
    return " ".join(
        _content_words(text, stop_words) if has_content(text, stop_words) else _words(text)
    )


class CleanedPrefixes:
    """:func:`clean_text` of ever longer leading parts of one text, each word cleaned once
    (cleaning goes word by word, so a part's cleaned form leads the text's).

    Example:
        >>> prefixes = CleanedPrefixes("The heart, the lungs and the liver.")
        >>> prefixes.of(10), prefixes.of(35)
        ('heart', 'heart lungs liver')
    """

    def __init__(self, text: str, stop_words: frozenset[str] = ENGLISH_STOP_WORDS) -> None:
        self.text = text
        # A text of stop words alone keeps them all, in every part, as clean_text does.
        self.stop_words = stop_words if has_content(text, stop_words) else frozenset()
        self._end = 0
        self._words: list[str] = []

    def of(self, end: int) -> str:
        """``clean_text(text[:end])``, for an ``end`` no earlier than the last one asked
        and not inside a word (before whitespace, or at the end of the text)."""
        self._words.extend(_content_words(self.text[self._end : end], self.stop_words))
        self._end = end
        return " ".join(self._words)
