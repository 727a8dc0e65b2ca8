"""Checks of the lists, texts, numbers and settings the package takes: one place for all.

A check of an item raises :class:`~opik_semantic_metrics.errors.InputError` naming the
item, so that a metric can fail that item with a clear ``MetricComputationError`` instead
of a ``TypeError`` from deep inside a tokenizer; a check of a setting raises
``ValueError`` naming the argument, so that a bad setting stops the build.

Numbers follow one rule (:func:`is_real_number`, :func:`is_finite_number`): Python's and
NumPy's ints and floats are numbers, a bool (Python's or NumPy's) is not (``True`` given for
a threshold, a tolerance or a score is a mistake, not 1), and an int too large for a float
is not finite. A list of scores may also hold an array library's single values (iterating a
tensor of scores gives them), read as the numbers they hold (:func:`as_real_number`,
:func:`finite_numbers`). Scores that Opik recorded are the one place a bool counts as 1 or
0, as Opik averages them (:func:`~opik_semantic_metrics.compare.experiments.collect_scores`).

A module keeps only the checks of its own domain (a range, a count, a file's field), built
on these.
"""

from __future__ import annotations

import math
import numbers
import unicodedata
from collections.abc import Sequence, Sized
from typing import Any, TypeGuard

import numpy as np
from numpy.typing import NDArray

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


def as_real_number(value: object) -> float | None:
    """``value`` as a float if it is a real number (:func:`is_real_number`), or an array
    library's single value holding an int or a float (a 0-d tensor or array, as iterating
    a tensor of scores gives); ``None`` for anything else: a bool, Python's, NumPy's or a
    tensor's, text, ``None``, a ``Decimal``.

    Finiteness is not checked: NaN stays NaN, and an int past a float's range is infinite.

    Example:
        >>> as_real_number(np.float32(0.5)), as_real_number(np.array(2)), as_real_number(True)
        (0.5, 2.0, None)
    """
    if not is_real_number(value):
        single: Any = value
        if getattr(single, "shape", None) != () or not callable(getattr(single, "item", None)):
            return None
        value = single.item()
        if not is_real_number(value):
            return None
    number: Any = value
    try:
        return float(number)
    except OverflowError:  # an int past a float's range
        return math.inf if number > 0 else -math.inf


def finite_numbers(values: object, name: str, item: str = "value") -> NDArray[np.float64]:
    """``values`` (a list of numbers, lists of them for a grid, or an array or tensor) as a
    float64 array, every value a finite number.

    Each value must be a number by the package's rule (:func:`as_real_number`): a bool is
    none, even where NumPy would read it as 1 or 0, nor is text that NumPy would parse.

    Raises:
        ValueError: A value that is no number or not finite (named by ``item`` and its
            position: ``"human score 3 is nan"``), or ``values`` is no list.

    Example:
        >>> finite_numbers([0.5, np.float32(0.25), 1], "scores")
        array([0.5 , 0.25, 1.  ])
    """
    floats, refused = read_numbers(values, name)
    if refused is not None:
        raise ValueError(
            f"Expected `{name}` to hold finite numbers only (no NaN, inf or bool); "
            f"{item} {refused}."
        )
    return floats


def read_numbers(values: object, name: str) -> tuple[NDArray[np.float64], str | None]:
    """``values`` read as :func:`finite_numbers` reads them, and, where one is no finite
    number, the first such as its position and value (``"3 is nan"``, ``"(0, 1) is True"``
    in a grid), for a caller that words its own refusal; ``None`` where all are.

    Raises:
        ValueError: ``values`` is no list (a single number, text), or an array NumPy
            cannot read (a tensor on a GPU).

    Example:
        >>> read_numbers([0.5, True], "scores")[1]
        '1 is True'
    """
    if isinstance(values, np.ndarray) or hasattr(values, "__array__"):
        try:
            array = np.asarray(values)
        except (TypeError, ValueError, RuntimeError) as error:  # a tensor on a GPU
            raise ValueError(f"Expected `{name}` to be numbers NumPy can read: {error}") from None
    else:
        # As objects: NumPy would otherwise read True as 1.0 and "0.5" as 0.5.
        array = np.asarray(values, dtype=object)
    if array.ndim == 0:
        raise ValueError(f"Expected `{name}` to be a list of numbers, got {type(values).__name__}.")
    floats = _plain_floats(array)
    if floats is None:
        floats = np.empty(array.shape)
        for index, value in enumerate(array.flat):
            number = as_real_number(value)
            if number is None:
                return floats, _described(array, index)
            floats.flat[index] = number
    finite = np.isfinite(floats)
    if not finite.all():
        return floats, _described(array, int(np.argmin(finite)))
    return floats, None


def _plain_floats(array: np.ndarray) -> NDArray[np.float64] | None:
    """An array of ints or floats (or of Python's and NumPy's, as objects) as floats, at
    NumPy's speed; ``None`` where its values need to be read one by one."""
    if array.dtype.kind in "iuf":
        return array.astype(np.float64)
    if array.dtype != object:
        return None
    kinds = set(map(type, array.flat))
    if not all(issubclass(kind, _PLAIN_NUMBERS) and kind is not bool for kind in kinds):
        return None
    try:
        return array.astype(np.float64)
    except OverflowError:  # an int past a float's range: read one by one, as infinite
        return None


#: Number types an array of objects converts at once (bool excepted: an int subclass).
_PLAIN_NUMBERS = (float, int, np.floating, np.integer)


def _described(array: np.ndarray, index: int) -> str:
    """The value at flat ``index``: its position (a tuple in a grid) and value."""
    position = np.unravel_index(index, array.shape)
    where = str(position[0]) if array.ndim == 1 else str(tuple(int(i) for i in position))
    value = array.flat[index]
    if isinstance(value, np.generic):  # as Python writes it: nan, not np.float64(nan)
        value = value.item()
    return f"{where} is {shown(value, 60)}"


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


def check_as_many(items: Sized, name: str, per: Sized, per_name: str) -> None:
    """Refuse lists that are not aligned: as many ``items`` as ``per`` (both named in the
    plural: ``"references"``, ``"candidates"``).

    Raises:
        InputError: Their lengths differ.

    Example:
        >>> check_as_many(["a"], "sources", ["b", "c"], "translations")
        Traceback (most recent call last):
        ...
        opik_semantic_metrics.errors.InputError: Expected as many sources as translations, \
got 1 sources for 2 translations.
    """
    if len(items) != len(per):
        raise InputError(
            f"Expected as many {name} as {per_name}, got {len(items)} {name} for {len(per)} "
            f"{per_name}."
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
    check_as_many(reference_list, "references", candidate_list, "candidates")
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
