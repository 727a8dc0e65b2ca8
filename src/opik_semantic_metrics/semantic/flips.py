"""Two lexical checks for meaning flips that a sentence embedding hardly sees.

A mean-pooled sentence embedding places "The patient has a fever" next to "The patient
does not have a fever", and "The meeting is at 3 pm" next to "The meeting is at 5 pm":
the words are nearly the same. Both checks read the raw texts and give a number in
``[0, 1]`` that the layered score subtracts, weighted, from its raw score (see
:mod:`~opik_semantic_metrics.semantic.combine`).

They compare sentence with sentence (:func:`aligned_sentences`): each output sentence is
paired with the reference sentence that shares most of its content words, and a pair
counts by the sentence's share of the output's words. One changed figure in one sentence
of a six-sentence summary is then a sixth of the flip that a changed number in a
one-line paraphrase is. A pair is checked only where the reference sentence has at
least :data:`MIN_SHARED_WORDS` of the output sentence's content words (a flip is the same
statement with a number or a "not" changed; a sentence the reference does not make has
nothing to flip):

- :func:`negation_flip`: the share of the output's words in sentences where exactly one
  of the pair negates (holds a word of :data:`NEGATION_WORDS`, or one ending in "n't");
- :func:`changed_numbers`: per sentence, where both of the pair state numbers, the share
  of the output sentence's numbers that the reference sentence does not state, weighted
  by its share of the words. A number the output leaves out is no flip, so a short
  answer to a long reference is not penalised for the numbers it omits.

Two one-sentence texts are one pair: 1.0 when exactly one negates, and the share of the
output's numbers the reference does not state.

Numbers are read from the words of the text: digits with optional thousands commas and
decimals ("13,000", "4.1", the "10" of "10mg"), the English number words
(:data:`~opik_semantic_metrics.vocabulary.NUMBER_WORDS`: "three", "twenty", "twice"), and
a scale word after a number multiplies it
(:data:`~opik_semantic_metrics.vocabulary.SCALE_WORDS`: "26 million" is 26,000,000, as
"26,000,000" is; "$3 bn" is 3,000,000,000). Values compare exactly
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
    >>> changed_numbers("Storms hit. The storm killed 12 people.",  # 5 of 7 words
    ...                 "The storm killed 10 people.")
    0.7142857142857143
    >>> changed_numbers("The storm killed 12 people.", "Sales fell by 10 percent.")
    0.0
"""

from __future__ import annotations

import math
import re
from decimal import Decimal
from typing import Final

from opik_semantic_metrics.semantic.cleaning import word_forms
from opik_semantic_metrics.vocabulary import (
    ENGLISH_STOP_WORDS,
    NEGATIONS_AS_WRITTEN,
    NUMBER_WORDS,
    SCALE_WORDS,
)

#: A piece of a text with fewer words is no sentence of its own (see :func:`sentences`).
MIN_SENTENCE_WORDS: Final = 2
# Where a text is cut into sentences: whitespace after a sentence's end.
# or a lone stop glued to the next word, as tokenised summaries have them (" .police").
_SENTENCE_END: Final = re.compile(r"[.!?][\"'\u201d\u2019)\]]*(?=\s)|(?<=\s)[.!?](?=[a-z])")
# Words whose final stop ends no sentence: initials ("U.S.", "a.m.") and titles.
_ABBREVIATION: Final = re.compile(r"(?:\w\.){2,}|(?:mr|mrs|ms|dr|st|prof|jr|sr|vs|no)\.", re.I)
#: The share of an output sentence's content words (no stop word, negation or number)
#: that its aligned reference sentence must have for the pair to be checked for flips.
MIN_SHARED_WORDS: Final = 0.5

#: Words that negate what they qualify, as written (plain apostrophes):
#: :data:`~opik_semantic_metrics.vocabulary.NEGATIONS_AS_WRITTEN`.
NEGATION_WORDS: Final = NEGATIONS_AS_WRITTEN
# Digits with thousands commas and a decimal part; a word may hold several ("1.5-2").
_DIGITS: Final = re.compile(r"\d+(?:,\d{3})*(?:\.\d+)?")


def negates(text: str) -> bool:
    """Whether a text holds a negation word (see :data:`NEGATION_WORDS`)."""
    return _negates(word_forms(text))


def _negates(words: tuple[str, ...]) -> bool:
    return any(word in NEGATION_WORDS or word.endswith("n't") for word in words)


def numbers_in(text: str) -> frozenset[Decimal]:
    """The numbers a text states (see the module docstring).

    Example:
        >>> found = numbers_in("Two of the 1,500 rooms cost 4.50 dollars, 3 million")
        >>> [format(number, "f") for number in sorted(found)]
        ['2', '4.5', '1500', '3000000']
    """
    return _numbers(word_forms(text))


def _numbers(words: tuple[str, ...]) -> frozenset[Decimal]:
    found: list[Decimal] = []
    follows_number = False
    for word in words:
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


class _Sentence:
    """A sentence and what the checks read of it, each worked out once: its word forms,
    its content words (no stop word, negation or number), whether it negates, its numbers."""

    __slots__ = ("content", "negates", "numbers", "text", "words")

    def __init__(self, text: str, words: tuple[str, ...]) -> None:
        self.text = text
        self.words = words
        self.content = frozenset(
            word for word in words
            if word not in ENGLISH_STOP_WORDS and word not in NEGATION_WORDS
            and not _DIGITS.fullmatch(word) and word not in NUMBER_WORDS
        )  # fmt: skip
        self.negates = _negates(words)
        self.numbers = _numbers(words)

    def shared(self, other: _Sentence) -> float:
        """The share of this sentence's content words that ``other`` has (1.0 without any)."""
        return len(self.content & other.content) / len(self.content) if self.content else 1.0


def sentences(text: str) -> tuple[str, ...]:
    """The text's sentences: it is cut after ".", "!" or "?" (and any closing quotes or
    brackets) followed by whitespace, or after a lone stop glued to the next word as in
    tokenised text ("hit .police"); not after initials ("U.S.") or a title ("Dr."). A
    piece of fewer than :data:`MIN_SENTENCE_WORDS` words ("Yes.") joins the piece after it
    (the last one, the piece before).

    Example:
        >>> sentences("The talks failed. Dr. Smith left early! Will he return?")
        ('The talks failed.', 'Dr. Smith left early!', 'Will he return?')
        >>> sentences("Yes. I can do it.")
        ('Yes. I can do it.',)
    """
    return tuple(sentence.text for sentence in _split(text))


def _split(text: str) -> tuple[_Sentence, ...]:
    """:func:`sentences`, each with what the checks read of it. A piece joined to another
    is joined with a space, so its words are the two pieces' words in order."""
    ends = [
        match.end()
        for match in _SENTENCE_END.finditer(text)
        if not _ABBREVIATION.fullmatch(text[: match.end()].rsplit(None, 1)[-1])
    ]
    bounds = zip([0, *ends], [*ends, len(text)], strict=True)
    pieces = [part for part in (text[start:end].strip() for start, end in bounds) if part]
    merged: list[tuple[str, tuple[str, ...]]] = []
    waiting: tuple[str, tuple[str, ...]] | None = None
    for piece in pieces:
        words = word_forms(piece)
        if waiting is not None:
            piece, words = f"{waiting[0]} {piece}", waiting[1] + words
        if len(words) < MIN_SENTENCE_WORDS:
            waiting = (piece, words)
            continue
        merged.append((piece, words))
        waiting = None
    if waiting is not None:
        if merged:
            last = merged[-1]
            merged[-1] = (f"{last[0]} {waiting[0]}", last[1] + waiting[1])
        else:
            merged.append(waiting)
    return tuple(_Sentence(piece, words) for piece, words in merged)


def _sentences_or_whole(text: str, split: tuple[_Sentence, ...]) -> tuple[_Sentence, ...]:
    return split or (_Sentence(text, word_forms(text)),)


def _aligned(
    said: tuple[_Sentence, ...], expected: tuple[_Sentence, ...]
) -> list[tuple[_Sentence, _Sentence, float]]:
    """:func:`aligned_sentences` of texts already split."""
    counts = [max(len(sentence.words), 1) for sentence in said]
    total = sum(counts)
    if len(expected) == 1:
        return [
            (sentence, expected[0], count / total)
            for sentence, count in zip(said, counts, strict=True)
        ]
    pairs = []
    for sentence, count in zip(said, counts, strict=True):
        own = sentence.content
        best = max(range(len(expected)), key=lambda at: (len(own & expected[at].content), -at))
        pairs.append((sentence, expected[best], count / total))
    return pairs


def aligned_sentences(output: str, reference: str) -> list[tuple[str, str, float]]:
    """Each output sentence with the reference sentence that shares most of its content
    words (the first of equals), and the sentence's share of the output's words.

    Example:
        >>> aligned_sentences("Rain fell. The match was cancelled.",
        ...                   "The match was called off. It rained all day long.")
        [('Rain fell.', 'The match was called off.', 0.333...), ...]
    """
    said = _sentences_or_whole(output, _split(output))
    expected = _sentences_or_whole(reference, _split(reference))
    return [(one.text, other.text, share) for one, other, share in _aligned(said, expected)]


def _negation_flip(pairs: list[tuple[_Sentence, _Sentence, float]]) -> float:
    return math.fsum(
        share for said, expected, share in pairs
        if said.negates != expected.negates and said.shared(expected) >= MIN_SHARED_WORDS
    )  # fmt: skip


def _changed_numbers(pairs: list[tuple[_Sentence, _Sentence, float]]) -> float:
    changed = []
    for said, counterpart, share in pairs:
        stated, against = said.numbers, counterpart.numbers
        if stated and against and said.shared(counterpart) >= MIN_SHARED_WORDS:
            changed.append(share * len(stated - against) / len(stated))
    return math.fsum(changed)


def negation_flip(output: str, reference: str, *, aligned: bool = True) -> float:
    """The share of the output's words in sentences that negate where their aligned
    reference sentence does not, or the reverse, among the pairs checked (see the module
    docstring); ``aligned=False`` reads each text whole, as one sentence, and checks it
    whatever words it shares (how calibrations saved before state version 4 were fitted)."""
    return flip_checks(output, reference, aligned=aligned)[0]


def changed_numbers(output: str, reference: str, *, aligned: bool = True) -> float:
    """Over the output's sentences, weighted by their share of its words, the share of a
    sentence's numbers that its aligned reference sentence does not state, among the pairs
    checked where both state numbers (see the module docstring); ``aligned=False`` reads
    each text whole, as one sentence, and checks it whatever words it shares."""
    return flip_checks(output, reference, aligned=aligned)[1]


def flip_checks(output: str, reference: str, *, aligned: bool = True) -> tuple[float, float, float]:
    """:func:`negation_flip`, :func:`changed_numbers` and the mean of the two texts'
    sentence counts (:func:`sentences`), from one reading of each text: the layered score
    needs all three for every pair.

    Example:
        >>> flip_checks("Storms hit. The storm killed 12 people.", "The storm killed 10 people.")
        (0.0, 0.7142857142857143, 1.5)
    """
    split_output, split_reference = _split(output), _split(reference)
    count = (len(split_output) + len(split_reference)) / 2
    if not aligned:
        whole_output = _Sentence(output, word_forms(output))
        whole_reference = _Sentence(reference, word_forms(reference))
        negation = 1.0 if whole_output.negates != whole_reference.negates else 0.0
        stated, expected = whole_output.numbers, whole_reference.numbers
        changed = len(stated - expected) / len(stated) if stated and expected else 0.0
        return negation, changed, count
    pairs = _aligned(
        _sentences_or_whole(output, split_output),
        _sentences_or_whole(reference, split_reference),
    )
    return _negation_flip(pairs), _changed_numbers(pairs), count
