"""Checks of the lists, texts, numbers and settings the package takes: one place for all.

A check of an item raises :class:`~opik_semantic_metrics.errors.InputError` naming the
item, so that a metric can fail that item with a clear ``MetricComputationError`` instead
of a ``TypeError`` from deep inside a tokenizer; a check of a setting raises
``ValueError`` naming the argument, so that a bad setting stops the build.

Numbers follow one rule (:func:`is_real_number`, :func:`is_finite_number`): Python's and
NumPy's ints and floats are numbers, a bool is not (``True`` given for a threshold or a
tolerance is a mistake, not 1), and an int too large for a float is not finite.
"""

from __future__ import annotations

import math
import numbers
import unicodedata
from collections.abc import Sequence
from typing import TypeGuard

import numpy as np

from opik_semantic_metrics.errors import InputError, shown

#: Sequences that are not lists of items: a text, and binary data (a sequence of ints).
_NOT_LISTS = str | bytes | bytearray | memoryview


def as_list(value: object, name: str) -> Sequence[object]:
    """``value`` if it is a list (any sequence but a string or binary data).

    Raises:
        InputError: A string, bytes, ``None``, a number, a set, a generator...

    Example:
        >>> as_list(("a", "b"), "candidates")
        ('a', 'b')
    """
    if isinstance(value, _NOT_LISTS) or not isinstance(value, Sequence):
        raise InputError(f"Expected `{name}` to be a list, got {type(value).__name__}.")
    return value


def is_real_number(value: object) -> bool:
    """Whether a value is a real number: Python's or NumPy's, but not a bool.

    Example:
        >>> is_real_number(0.25), is_real_number(True), is_real_number("0.25")
        (True, False, False)
    """
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def is_finite_number(value: object) -> TypeGuard[float]:
    """Whether ``value`` is a real number (:func:`is_real_number`: not a bool) that is
    finite as a float; an int past a float's range is not.

    Scores that Opik recorded are the one place a bool is read as 1 or 0, as Opik averages
    them (:func:`~opik_semantic_metrics.compare.experiments.collect_scores`).

    Example:
        >>> is_finite_number(0.5), is_finite_number(np.float32(0.5)), is_finite_number(True)
        (True, True, False)
        >>> is_finite_number(float("nan")), is_finite_number(10**400), is_finite_number("1")
        (False, False, False)
    """
    if not is_real_number(value):
        return False
    try:
        return math.isfinite(value)  # type: ignore[arg-type]
    except OverflowError:  # an int past a float's range
        return False


def check_between_0_and_1(value: object, name: str) -> float:
    """``value`` as a float if it is a number strictly between 0 and 1 (a coverage or
    significance level).

    Raises:
        ValueError: Anything else; ``name`` is the argument's name.

    Example:
        >>> check_between_0_and_1(0.95, "confidence")
        0.95
    """
    if not is_finite_number(value) or not 0.0 < value < 1.0:
        raise ValueError(f"Expected `{name}` between 0 and 1, got {shown(value)}.")
    return float(value)


def check_non_negative_number(value: object, name: str) -> float:
    """``value`` as a float if it is a finite number of at least 0 (a tolerance).

    Raises:
        ValueError: Anything else; ``name`` is the argument's name.

    Example:
        >>> check_non_negative_number(1e-6, "tie_tolerance")
        1e-06
    """
    if not is_finite_number(value) or value < 0:
        raise ValueError(f"Expected `{name}` to be a finite number >= 0, got {shown(value)}.")
    return float(value)


def as_whole_number(value: object) -> int | None:
    """``value`` as an ``int`` if it is an integer, Python's or NumPy's (a layer from
    ``np.arange``); ``None`` for a bool, a float such as ``2.0``, a string or anything else.

    Example:
        >>> as_whole_number(np.int64(3)), as_whole_number(True), as_whole_number(3.0)
        (3, None, None)
    """
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return int(value)
    return None


def check_positive_int(value: object, name: str) -> int:
    """``value`` as an ``int`` if it is an integer of at least 1 (see
    :func:`as_whole_number`).

    Raises:
        ValueError: Anything else; ``name`` is the argument's name.

    Example:
        >>> check_positive_int(16, "batch_size")
        16
    """
    number = as_whole_number(value)
    if number is None or number < 1:
        raise ValueError(f"Expected `{name}` to be a positive integer, got {shown(value)}.")
    return number


def check_flag(value: object, name: str) -> bool:
    """``value`` if it is a bool, Python's or NumPy's.

    A string is refused rather than read as true: ``"False"`` would switch the setting on.

    Raises:
        ValueError: Anything else; ``name`` is the argument's name.

    Example:
        >>> check_flag(np.True_, "idf")
        True
    """
    if not isinstance(value, bool | np.bool_):
        raise ValueError(f"Expected `{name}` to be True or False, got {shown(value)}.")
    return bool(value)


def is_empty_cell(value: object) -> bool:
    """Whether ``value`` is what a table's empty cell reads as: ``None``, NaN, or pandas'
    ``NA`` and ``NaT`` (nullable and Arrow-backed columns give ``pd.NA``, not NaN).

    pandas is not imported: its two markers are told by their types.

    Example:
        >>> is_empty_cell(None), is_empty_cell(float("nan")), is_empty_cell(""), is_empty_cell(0)
        (True, True, False, False)
    """
    if value is None:
        return True
    if isinstance(value, float):
        return math.isnan(value)
    kind = type(value)
    return kind.__module__.startswith("pandas.") and kind.__name__ in ("NAType", "NaTType")


#: Whitespace, control and format (zero-width) characters: nothing a reader sees, and
#: nothing BERT's tokenizer keeps.
_INVISIBLE_CATEGORIES = frozenset({"Zs", "Zl", "Zp", "Cc", "Cf"})


def is_blank(text: str) -> bool:
    """Whether a text has only whitespace, control and zero-width characters, or none.

    Such a text is empty to every metric: a zero-width space left in a table cell is no
    answer, and BERT's tokenizer reads no token in it.

    Example:
        >>> is_blank(" \u200b\t"), is_blank("\u200ba")
        (True, False)
    """
    return not visible_characters(text)


def visible_characters(text: str) -> str:
    """The text without its whitespace, control and zero-width characters.

    Example:
        >>> visible_characters("No\u200b. \u00adyes")
        'No.yes'
    """
    if text.isprintable() and " " not in text:
        return text
    return "".join(c for c in text if unicodedata.category(c) not in _INVISIBLE_CATEGORIES)


def check_text(value: object, what: str) -> str:
    """``value`` if it is a string that can be written as UTF-8.

    A string can hold unpaired surrogates (``"\\ud800"``: text decoded with
    ``errors="surrogateescape"``, or JSON with a broken escape); tokenizers cannot read
    them and fail with a ``TypeError``.

    Raises:
        InputError: Not a string, or a string with an unpaired surrogate; ``what`` names
            the item (``"candidate 3"``).

    Example:
        >>> check_text("Café", "candidate 0")
        'Café'
    """
    if not isinstance(value, str):
        raise InputError(f"Expected {what} to be a string, got {type(value).__name__}.")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as error:
        raise InputError(
            f"Expected {what} to be valid Unicode text, found the unpaired surrogate "
            f"{value[error.start]!r} at character {error.start}."
        ) from None
    return value


def item_name(kind: str, index: int, count: int) -> str:
    """How an error names one of ``count`` items: ``"candidate 3"``, or ``"the candidate"``
    where it is the only one.

    A metric's ``score()`` checks its one item as a list of one: with the index, every item
    that failed in an Opik run would be named "0".

    Example:
        >>> item_name("candidate", 3, 10), item_name("candidate", 0, 1)
        ('candidate 3', 'the candidate')
    """
    return f"{kind} {index}" if count > 1 else f"the {kind}"


def reference_texts(reference: object, what: str) -> list[str]:
    """One item's reference as a list of texts: a string alone, or a non-empty list of
    strings.

    Raises:
        InputError: Anything else (bytes included: a reference is text, and bytes are
            not a list of texts), naming the item (``what``: ``"reference 3"``) and the
            type found.

    Example:
        >>> reference_texts(["A cat.", "A kitten."], "reference 1")
        ['A cat.', 'A kitten.']
    """
    if isinstance(reference, str):
        return [check_text(reference, what)]
    if (
        isinstance(reference, Sequence)
        and not isinstance(reference, _NOT_LISTS)
        and len(reference) > 0
    ):
        kinds = sorted({type(part).__name__ for part in reference if not isinstance(part, str)})
        if kinds:
            raise InputError(f"Expected {what} to hold only strings, found {', '.join(kinds)}.")
        return [check_text(part, what) for part in reference]
    raise InputError(
        f"Expected {what} to be a string or a non-empty list of strings, "
        f"got {type(reference).__name__}."
    )


def check_pairs(candidates: object, references: object) -> tuple[list[str], list[list[str]]]:
    """Candidates and, per candidate, its references as a list of texts.

    Raises:
        InputError: Either is not a list, their lengths differ, or an item fails
            :func:`check_text` or :func:`reference_texts`.

    Example:
        >>> check_pairs(["A cat."], [["A cat.", "A kitten."]])
        (['A cat.'], [['A cat.', 'A kitten.']])
    """
    candidate_list = as_list(candidates, "candidates")
    reference_list = as_list(references, "references")
    if len(candidate_list) != len(reference_list):
        raise InputError(
            f"Expected as many references as candidates, got {len(reference_list)} references "
            f"for {len(candidate_list)} candidates."
        )
    count = len(candidate_list)
    checked = [
        check_text(text, item_name("candidate", index, count))
        for index, text in enumerate(candidate_list)
    ]
    groups = [
        reference_texts(reference, item_name("reference", index, count))
        for index, reference in enumerate(reference_list)
    ]
    return checked, groups
