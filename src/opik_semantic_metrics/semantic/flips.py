"""Two lexical checks for meaning flips that a sentence embedding hardly sees.

A mean-pooled sentence embedding places "The patient has a fever" next to "The patient
does not have a fever", and "The meeting is at 3 pm" next to "The meeting is at 5 pm":
the words are nearly the same. Both checks read the raw texts and give a number in
``[0, 1]`` that the layered score subtracts, weighted, from its raw score (see
:mod:`~opik_semantic_metrics.semantic.combine`):

- :func:`negation_flip`: 1.0 when exactly one of the two texts negates (holds a word of
  :data:`NEGATION_WORDS`, or one ending in "n't"), else 0.0;
- :func:`changed_numbers`: when both texts state numbers, the share of the output's
  numbers that the reference does not state; else 0.0. A number the output leaves out
  is no flip, so a short answer to a long reference is not penalised for the numbers it
  omits.

Numbers are read from the words of the text: digits with optional thousands commas and
decimals ("13,000", "4.1", the "10" of "10mg"), the English number words
(:data:`NUMBER_WORDS`: "three", "twenty", "twice"), and a scale word after a number
multiplies it ("26 million" is 26,000,000, as "26,000,000" is). Values compare exactly
("3" and "3.0" are one number).

Example:
    >>> negation_flip("A man is playing the guitar.", "A man is not playing the guitar.")
    1.0
    >>> negation_flip("He didn't come.", "He never came.")
    0.0
    >>> changed_numbers("The meeting is at 5 pm.", "The meeting is at 3 pm.")
    1.0
    >>> changed_numbers("Three men play football.", "3 men are playing football.")
    0.0
    >>> changed_numbers("About 26 million people.", "26,000,000 people and 2 dogs.")
    0.0
    >>> changed_numbers("The bridge is long.", "The bridge is 200 metres long.")
    0.0
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Final

from opik_semantic_metrics.semantic.cleaning import NEGATIONS, word_forms

#: Words that negate what they qualify: the stop words of
#: :data:`~opik_semantic_metrics.semantic.cleaning.NEGATIONS` and the negative words NLTK
#: does not list.
NEGATION_WORDS: Final[frozenset[str]] = NEGATIONS | frozenset(
    {"never", "nothing", "nobody", "none", "neither", "nowhere", "cannot"}
)

_UNITS: Final = (
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen",
    "eighteen", "nineteen", "twenty",
)  # fmt: skip
_TENS: Final = ("thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")

#: English number words and their values.
NUMBER_WORDS: Final[dict[str, Decimal]] = {
    **{word: Decimal(value) for value, word in enumerate(_UNITS)},
    **{word: Decimal(10 * tens) for tens, word in enumerate(_TENS, start=3)},
    "dozen": Decimal(12),
    "twice": Decimal(2),
}

#: Scale words, which multiply a number just before them and stand for themselves alone.
SCALE_WORDS: Final[dict[str, Decimal]] = {
    "hundred": Decimal(100),
    "thousand": Decimal(1000),
    "million": Decimal(10**6),
    "billion": Decimal(10**9),
    "trillion": Decimal(10**12),
}

# Digits with thousands commas and a decimal part; a word may hold several ("1.5-2").
_DIGITS: Final = re.compile(r"\d+(?:,\d{3})*(?:\.\d+)?")


def negates(text: str) -> bool:
    """Whether a text holds a negation word (see :data:`NEGATION_WORDS`)."""
    return any(word in NEGATION_WORDS or word.endswith("n't") for word in word_forms(text))


def numbers_in(text: str) -> frozenset[Decimal]:
    """The numbers a text states (see the module docstring).

    Example:
        >>> found = numbers_in("Two of the 1,500 rooms cost 4.50 dollars, 3 million")
        >>> [format(number, "f") for number in sorted(found)]
        ['2', '4.5', '1500', '3000000']
    """
    found: list[Decimal] = []
    follows_number = False
    for word in word_forms(text):
        scale = SCALE_WORDS.get(word)
        if scale is not None:
            if follows_number:
                found[-1] *= scale
            else:
                found.append(scale)
            follows_number = False
            continue
        values = [Decimal(digits.replace(",", "")) for digits in _DIGITS.findall(word)]
        if not values and word in NUMBER_WORDS:
            values = [NUMBER_WORDS[word]]
        found.extend(values)
        follows_number = bool(values)
    return frozenset(value.normalize() for value in found)


def negation_flip(output: str, reference: str) -> float:
    """1.0 when exactly one of the texts negates, else 0.0."""
    return 1.0 if negates(output) != negates(reference) else 0.0


def changed_numbers(output: str, reference: str) -> float:
    """The share of the output's numbers the reference does not state, when both state
    numbers; else 0.0."""
    stated, expected = numbers_in(output), numbers_in(reference)
    if not stated or not expected:
        return 0.0
    return len(stated - expected) / len(stated)
