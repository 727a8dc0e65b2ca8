"""Cleaning a text down to its content words before the word and sentence levels.

The text is split on whitespace. A token's *form* is the token with its surrounding
punctuation stripped (a punctuation or symbol character is one in a Unicode ``P*`` or
``S*`` category, a superset of Python's ``string.punctuation``), typographic apostrophes
made plain and lower-cased. A token is dropped when its form is empty (the token is
entirely punctuation) or an English stop word (NLTK's list, see
:mod:`~opik_semantic_metrics.semantic.stopwords`). Every other token is kept as written,
attached punctuation and case included, and the kept tokens are joined by single spaces.

Example:
    >>> clean_text("The patient had a heart attack.")
    'patient heart attack.'
    >>> clean_text("It is NOT, as they say, -- what it was!")
    'say,'
    >>> clean_text("   ")
    ''
    >>> word_forms("No.  -- it isn\u2019t!")
    ('no', 'it', "isn't")
"""

from __future__ import annotations

import unicodedata

from opik_semantic_metrics.semantic.stopwords import ENGLISH_STOP_WORDS

_PLAIN_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'"})


def is_punctuation(character: str) -> bool:
    """Whether a character is punctuation or a symbol (Unicode categories ``P*``, ``S*``)."""
    return unicodedata.category(character)[0] in "PS"


def _form(token: str) -> str:
    """The token without surrounding punctuation, with plain apostrophes, lower-cased."""
    start, end = 0, len(token)
    while start < end and is_punctuation(token[start]):
        start += 1
    while end > start and is_punctuation(token[end - 1]):
        end -= 1
    return token[start:end].translate(_PLAIN_APOSTROPHES).lower()


def word_forms(text: str) -> tuple[str, ...]:
    """The forms of a text's tokens, punctuation-only tokens left out."""
    return tuple(form for form in map(_form, text.split()) if form)


def clean_text(text: str) -> str:
    """The text without stop-word and punctuation tokens (see the module docstring)."""
    kept = []
    for token in text.split():
        form = _form(token)
        if form and form not in ENGLISH_STOP_WORDS:
            kept.append(token)
    return " ".join(kept)
