"""Numbers spelled out in words, written in digits: ``"eight"`` is ``8``, ``"two
thousand"`` ``2000``, ``"one thousand, eight hundred and thirty"`` ``1830``.

Answers give numbers either way ("Spiders have eight legs." for the gold ``"8"``), so
the answer matcher reads both sides through :func:`digits_for_words` before it compares
numbers. A run of number words becomes digits only when it reads as one number in
English order: units, teens and tens (``"forty-eight"``), ``hundred`` after a unit, and
``thousand`` after what comes before it; ``and`` and a comma are allowed after
``hundred`` or ``thousand``. Anything else (``"eight nine"``, ``"one and two"``) is left
as it is. Scale words from ``million`` up stay words after the digits (``"two
million"`` -> ``"2 million"``), since the number reader gives them their meaning and the
question may name the scale. A lone ``"one"`` in running text is a pronoun as often as a
number ("the one who"), so it is read only as a whole answer. Ordinals are read too:
``"sixteenth"`` is ``"16th"``, ``"twenty-first"`` ``"21st"``.
"""

from __future__ import annotations

import re

from opik_semantic_metrics.vocabulary import NUMBER_WORDS, ORDINAL_WORDS, SCALE_WORDS

#: The words of a spelled-out number, from the package's one list of number words
#: ("dozen" and "twice" are not parts of one).
_PARTS = {
    word: int(value) for word, value in NUMBER_WORDS.items() if word not in ("dozen", "twice")
}
UNITS = {word: value for word, value in _PARTS.items() if value < 20}
TENS = {word: value for word, value in _PARTS.items() if value >= 20}
#: Scale words folded into the digits; larger ones stay words after them.
FOLDED_SCALES = {word: int(SCALE_WORDS[word]) for word in ("hundred", "thousand")}
_WORD = "|".join(sorted((*UNITS, *TENS, *FOLDED_SCALES), key=len, reverse=True))
_GAP = r"(?:\s*-\s*|\s+|,\s*|\s+and\s+)"
_RUN = re.compile(rf"\b(?:{_WORD})(?:{_GAP}(?:{_WORD}))*\b", re.IGNORECASE)
_SEPARATOR = re.compile(r"[\s,-]+")
_ORDINAL = "|".join(sorted(ORDINAL_WORDS, key=len, reverse=True))
#: A run of number words that ends with an ordinal ("twenty-first", "sixteenth").
_ORDINAL_RUN = re.compile(rf"\b(?:(?:{_WORD}){_GAP})*(?:{_ORDINAL})\b", re.IGNORECASE)


def spelled_value(words: list[str]) -> int | None:
    """The value of number words in English order, or ``None`` if they are not one
    number.

    Example:
        >>> spelled_value("one thousand eight hundred and thirty".split())
        1830
        >>> spelled_value(["forty", "eight"]), spelled_value(["eight", "nine"])
        (48, None)
    """
    total = current = 0
    previous = ""  # "unit", "ten", "teen", "hundred", "thousand", "and"
    for word in words:
        if word == "and":
            if previous not in ("hundred", "thousand"):
                return None
            previous = "and"
        elif word in TENS:
            if previous in ("unit", "ten", "teen"):
                return None
            current += TENS[word]
            previous = "ten"
        elif word in UNITS:
            value = UNITS[word]
            if previous in ("unit", "teen") or (previous == "ten" and value >= 10):
                return None
            if value == 0 and (current or total):
                return None
            current += value
            previous = "teen" if value >= 10 else "unit"
        elif word == "hundred":
            if previous not in ("unit", "teen") or current >= 100:
                return None
            current *= 100
            previous = "hundred"
        elif word == "thousand":
            if previous in ("", "and", "thousand") or total:
                return None
            total, current = current * 1000, 0
            previous = "thousand"
        else:
            return None
    if previous == "and":
        return None
    return total + current


def digits_for_words(text: str, *, whole_answer: bool = False) -> str:
    """``text`` with each run of number words that reads as one number written in
    digits; ``whole_answer``: the text is an answer on its own, where a lone ``"one"``
    is the number.

    Example:
        >>> digits_for_words("Spiders have eight legs and two thousand eyes.")
        'Spiders have 8 legs and 2000 eyes.'
        >>> digits_for_words("The one who came twenty-first, forty-two times.")
        'The one who came 21st, 42 times.'
    """

    def replace(found: re.Match[str]) -> str:
        run = found.group()
        words = [word for word in _SEPARATOR.split(run.lower()) if word]
        if words == ["one"] and not (whole_answer and run.strip() == text.strip()):
            return run
        value = spelled_value(words)
        return run if value is None else str(value)  # "eight nine" is not guessed at

    lowered = text.lower()
    if any(word in lowered for word in ORDINAL_WORDS):  # a quick look before the regex
        text = _ORDINAL_RUN.sub(_ordinal_in_digits, text)
    return _RUN.sub(replace, text)


def _ordinal_in_digits(found: re.Match[str]) -> str:
    """An ordinal run in digits ("twenty-first" -> "21st", "hundredth" -> "100th"); a run
    that is not one number ("one second", a time) is left as it is."""
    run = found.group()
    words = [word for word in _SEPARATOR.split(run.lower()) if word]
    cardinal = ORDINAL_WORDS[words[-1]]
    if len(words) == 1 and cardinal in FOLDED_SCALES:
        return ordinal_digits(FOLDED_SCALES[cardinal])
    value = spelled_value([*words[:-1], cardinal])
    return run if value is None else ordinal_digits(value)


def ordinal_digits(value: int) -> str:
    """A number as an ordinal in digits (``21`` -> ``"21st"``, ``12`` -> ``"12th"``).

    Example:
        >>> ordinal_digits(21), ordinal_digits(12), ordinal_digits(103)
        ('21st', '12th', '103rd')
    """
    suffix = (
        "th" if value % 100 in (11, 12, 13) else {1: "st", 2: "nd", 3: "rd"}.get(value % 10, "th")
    )
    return f"{value}{suffix}"
