"""A gold answer written as more than one answer: alternatives, a note in brackets, a
rounding word or a place's generic word, or items that together are the answer.

Quiz and QA datasets write golds for people to read: ``"Akrotiri or Dhekelia"`` (either
is right), ``"Pygmies (short height)"`` (the bracket explains), ``"approximately 1,000"``
(the figure is the answer), ``"Nile River"`` (answers say "the Nile"), ``"Brazil,
Colombia and Ecuador"`` (all three, in any order). An output rarely repeats such a gold
word for word, so the contains tier also looks for its parts (:func:`gold_parts`): any
one alternative, or every item.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from opik_semantic_metrics.answers.lists import split_plain_list

#: An alternative or an item of at most this many words; longer parts are prose.
MAX_PART_WORDS = 6
#: Golds longer than this have no parts looked for.
MAX_GOLD_CHARS = 300
_BRACKETED = re.compile(r"\s*\([^()]*\)")
_OR = re.compile(r"\s+or\s+", re.IGNORECASE)
#: Words that only say a figure is rounded ("approximately 1,000"): the figure alone is
#: an alternative. Bounds ("over", "more than") are no such words: they change the answer.
_ROUNDING_WORDS = (
    r"(?:approximately|approx\.?|about|around|roughly|nearly|almost|circa|c\.|some"
    r"|an estimated|estimated)"
)
#: A place's generic last word, which answers drop ("the Pacific", "the Nile"): the name
#: before it is an alternative. Not "City", "Sea" or "Lake": "Mexico" is not "Mexico City".
_GENERIC_PLACE_WORDS = r"(?:ocean|river)"
_APPROXIMATELY = re.compile(rf"^{_ROUNDING_WORDS}\s+(?=\S)", re.IGNORECASE)
_GENERIC_PLACE = re.compile(rf"(?<=\w)\s+{_GENERIC_PLACE_WORDS}$", re.IGNORECASE)
#: Only a gold with one of these can have parts.
_PART_HINT = re.compile(
    rf"[(,;]|\s(?:or|and)\s|&|^{_ROUNDING_WORDS}\s|\s{_GENERIC_PLACE_WORDS}$", re.IGNORECASE
)


@dataclass(frozen=True)
class GoldParts:
    """The parts of a gold answer.

    Attributes:
        alternatives: Texts of which any one is the answer (the gold without its
            brackets, without a rounding word before its figure, without a place's
            generic last word, and each side of an ``or``).
        items: Texts that together are the answer (each item of an enumeration).
    """

    alternatives: tuple[str, ...] = ()
    items: tuple[str, ...] = ()


NO_PARTS = GoldParts()


def gold_parts(text: str) -> GoldParts:
    """The alternatives and items of a gold answer (none for a plain one, or for one of
    over :data:`MAX_GOLD_CHARS` characters, which is prose).

    Example:
        >>> gold_parts("Akrotiri or Dhekelia").alternatives
        ('Akrotiri', 'Dhekelia')
        >>> gold_parts("Pygmies (short height)").alternatives
        ('Pygmies',)
        >>> gold_parts("Brazil, Colombia and Ecuador").items
        ('Brazil', 'Colombia', 'Ecuador')
        >>> gold_parts("approximately 1,000").alternatives, gold_parts("Nile River").alternatives
        (('1,000',), ('Nile',))
        >>> gold_parts("Paris") == NO_PARTS
        True
    """
    if len(text) > MAX_GOLD_CHARS or not _PART_HINT.search(text):
        return NO_PARTS
    return _gold_parts(text)


@functools.lru_cache(maxsize=4096)
def _gold_parts(text: str) -> GoldParts:
    # Cached: a dataset repeats its golds for every system it grades.
    plain = " ".join(_BRACKETED.sub("", text).split()).strip(" -:;,")
    if not plain:
        return NO_PARTS
    alternatives: list[str] = []
    if plain != text.strip():
        alternatives.append(plain)
    for shorter in (_APPROXIMATELY.sub("", plain, count=1), _GENERIC_PLACE.sub("", plain)):
        if shorter != plain and len(shorter) >= 3:
            alternatives.append(shorter)
    sides = [side.strip() for side in _OR.split(plain)]
    if len(sides) > 1:
        if all(side and len(side.split()) <= MAX_PART_WORDS for side in sides):
            alternatives.extend(sides)
        return GoldParts(tuple(alternatives))
    readings = split_plain_list(plain)
    items = readings[0] if readings else ()
    if len(items) < 2 or any(len(item.split()) > MAX_PART_WORDS for item in items):
        items = ()
    return GoldParts(tuple(alternatives), tuple(items))
