"""Safe reading of list answers: literals in JSON or Python syntax, and plain enumerations.

Nothing is ever evaluated as code. A text that looks like a list (``[...]`` or ``(...)``)
is read with :func:`json.loads` and, failing that, :func:`ast.literal_eval`, but only after
two linear checks that keep both parsers safe and fast: at most :data:`MAX_LIST_CHARS`
characters, and brackets nested at most :data:`MAX_LIST_DEPTH` deep (CPython's parser and
:mod:`json` recurse, so a text of 100,000 ``[`` would otherwise exhaust the stack). The
result must be a list or tuple of strings, numbers, booleans, ``None`` or such lists, at
most :data:`MAX_LIST_ITEMS` values in all, and no int of more than
:data:`~opik_semantic_metrics.answers.numbers.MAX_DIGITS` digits. A text that fails a
check is reported with the reason (``too_long``, ``too_deep``, ``too_many_items``,
``too_many_digits``, ``malformed``, ``not_a_list``) and compared as text instead.

Plain enumerations (:func:`split_plain_list`) are split on commas, semicolons and new
lines, with list bullets (``-``, ``*``, ``•``, ``1.``, ``1)``) removed and a final "and" or
"&" read as a separator: ``"A, B and C"``, ``"A, B, and C"``, ``"A; B; C"``. A comma
followed by exactly three digits after a digit is a thousands separator (``"3,420"``), not
a separator of items; between other digits it separates (``"10,20,30"``). Because
``"Research and Development"`` may be one item, a final "and" gives a second reading and
both readings are returned.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Union

from opik_semantic_metrics.answers.numbers import MAX_DIGITS
from opik_semantic_metrics.errors import InputError
from opik_semantic_metrics.inputs import check_text

#: Longest text read as a list literal or split as an enumeration.
MAX_LIST_CHARS = 20_000
#: Most values in a list, nested values included.
MAX_LIST_ITEMS = 200
#: Deepest nesting of brackets read (a flat list has depth 1).
MAX_LIST_DEPTH = 4

#: A list element: a scalar, or a nested list as a tuple.
ListItem = Union[str, int, float, bool, None, tuple["ListItem", ...]]  # noqa: UP007

_OPENERS = {"[": "]", "(": ")"}
# A comma between digits separates items unless it is a thousands separator: three digits
# follow it, then no digit ("3,420" is one number, "10,20,30" three).
_SEPARATOR = re.compile(r"\s*(?:;|\n|(?<!\d),|,(?!\d{3}(?!\d)))\s*")
_BULLET = re.compile(r"^(?:[-*•]|\d{1,3}[.)])\s+")
_LEADING_AND = re.compile(r"^(?:and|&)\s+", re.IGNORECASE)
_LAST_AND = re.compile(r"\s+(?:and|&)\s+", re.IGNORECASE)


@dataclass(frozen=True)
class ListReading:
    """What a text that looks like a list literal was read as.

    Attributes:
        items: The elements, or ``None`` when the text could not be read as a list.
        problem: Why not: ``too_long``, ``too_deep``, ``too_many_items``,
            ``too_many_digits``, ``malformed`` or ``not_a_list``; ``None`` when it was read.
    """

    items: tuple[ListItem, ...] | None
    problem: str | None = None


def looks_like_list(text: str) -> bool:
    """Whether ``text`` (stripped) is bracketed like a list or tuple literal.

    Example:
        >>> looks_like_list("['SSP1', 'SSP2']"), looks_like_list("SSP1, SSP2")
        (True, False)
    """
    return len(text) >= 2 and _OPENERS.get(text[0]) == text[-1]


def read_list_literal(text: str) -> ListReading:
    """Read a bracketed list in JSON or Python literal syntax, within the bounds above.

    Example:
        >>> single, double = "['SSP1', 'SSP2']", '["SSP1", "SSP2"]'
        >>> read_list_literal(single) == read_list_literal(double)
        True
        >>> read_list_literal("[1, [2, 3.5], None]").items
        (1, (2, 3.5), None)
        >>> read_list_literal("[" * 50 + "]" * 50).problem
        'too_deep'
        >>> read_list_literal("[__import__('os')]").problem
        'malformed'
    """
    if len(text) > MAX_LIST_CHARS:
        return ListReading(None, "too_long")
    if _bracket_depth(text) > MAX_LIST_DEPTH:
        return ListReading(None, "too_deep")
    try:
        value = json.loads(text)
    except ValueError:
        try:
            value = ast.literal_eval(text)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return ListReading(None, "malformed")
    if not isinstance(value, list | tuple):
        return ListReading(None, "not_a_list")
    items, problem = _convert(value)
    return ListReading(items, problem)


_PROBLEMS = {
    "too_deep": f"nested deeper than {MAX_LIST_DEPTH}",
    "too_many_items": f"with more than {MAX_LIST_ITEMS} values",
    "too_many_digits": f"holding a number of more than {MAX_DIGITS} digits",
    "not_a_list": "with elements other than strings, numbers, booleans, None and lists",
}


def python_value(value: object) -> object:
    """A NumPy or PyTorch value as the Python value it holds (its ``tolist()``); any
    other value as it is.

    Tasks that compute with NumPy, or read answers from pandas rows, hand over
    ``numpy.int64``, ``numpy.float64`` or arrays. ``numpy.float64`` even subclasses
    float, but its repr (``np.float64(0.5)`` in NumPy 2) is not a number's text.

    An array of more than :data:`MAX_LIST_ITEMS` values gives its first
    ``MAX_LIST_ITEMS + 1``, flat: enough for the answer to be refused as too long,
    without first turning millions of values into Python objects.

    Raises:
        InputError: Its values cannot be read (a tensor on the "meta" device, a sparse one).

    Example:
        >>> import numpy
        >>> python_value(numpy.float64(0.5)), python_value(numpy.array([1, 2])), python_value("a")
        (0.5, [1, 2], 'a')
        >>> len(python_value(numpy.zeros((1000, 1000))))
        201
    """
    to_list = getattr(value, "tolist", None)
    # A memoryview has tolist() too, but it is binary data, as bytes are: not a list.
    if isinstance(value, str | memoryview) or not callable(to_list):
        return value
    reshape = getattr(value, "reshape", None)
    try:
        if callable(reshape) and _value_count(value) > MAX_LIST_ITEMS:
            return reshape(-1)[: MAX_LIST_ITEMS + 1].tolist()
        return to_list()
    except (RuntimeError, NotImplementedError, TypeError, ValueError) as error:
        # A tensor with no data to read (on the "meta" device) or a sparse one.
        raise InputError(
            f"Expected an answer, got a {type(value).__name__} whose values cannot be read "
            f"({error})."
        ) from error


def _value_count(array: object) -> int:
    """How many values a NumPy array or PyTorch tensor holds (0 if it says nothing)."""
    numel = getattr(array, "numel", None)  # PyTorch; its `size` is a method
    count = numel() if callable(numel) else getattr(array, "size", 0)
    return count if isinstance(count, int) else 0


def items_from_value(value: Sequence[object]) -> tuple[ListItem, ...]:
    """Check a Python list or tuple answer and return it as nested tuples.

    Raises:
        InputError: An element that is not a string, number, boolean, ``None`` or list,
            more than :data:`MAX_LIST_ITEMS` values, nesting deeper than
            :data:`MAX_LIST_DEPTH`, or an int of more than ``MAX_DIGITS`` digits.

    Example:
        >>> items_from_value(["SSP1", ("a", 2)])
        ('SSP1', ('a', 2))
    """
    items, problem = _convert(value)
    if items is None or problem is not None:
        raise InputError(
            f"Expected a list answer of scalars, got a list {_PROBLEMS[problem or '']}."
        )
    return items


class _Unreadable(Exception):
    """A list outside the bounds; ``args[0]`` names the problem."""


def _convert(value: Sequence[object]) -> tuple[tuple[ListItem, ...] | None, str | None]:
    """Nested tuples of the elements, or ``None`` and the problem's name.

    The recursion stops at depth :data:`MAX_LIST_DEPTH` and the count is checked before
    each level is walked, so no input can make it deep or long.
    """
    count = 0

    def convert(values: Sequence[object], depth: int) -> tuple[ListItem, ...]:
        nonlocal count
        if depth > MAX_LIST_DEPTH:
            raise _Unreadable("too_deep")
        count += len(values)
        if count > MAX_LIST_ITEMS:
            raise _Unreadable("too_many_items")
        converted: list[ListItem] = []
        for value in values:
            item = python_value(value)
            if isinstance(item, list | tuple):
                converted.append(convert(item, depth + 1))
            elif isinstance(item, int) and abs(item) >= 10**MAX_DIGITS:
                # No answer's number is that long (nor may one alone be); repr() even
                # fails on an int of over 4,300 digits.
                raise _Unreadable("too_many_digits")
            elif isinstance(item, str):
                # As every metric checks a text: an unpaired surrogate is an error.
                converted.append(check_text(item, "a list item"))
            elif item is None or isinstance(item, int | float):
                converted.append(item)
            else:
                raise _Unreadable("not_a_list")
        return tuple(converted)

    try:
        return convert(value, 1), None
    except _Unreadable as unreadable:
        return None, unreadable.args[0]


def _bracket_depth(text: str) -> int:
    """Deepest bracket nesting outside quoted strings, in one pass."""
    depth = deepest = 0
    quote = ""
    escaped = False
    for character in text:
        if quote:
            if escaped:
                escaped = False
            elif character == "\\":
                escaped = True
            elif character == quote:
                quote = ""
        elif character in "'\"":
            quote = character
        elif character in "[({":
            depth += 1
            deepest = max(deepest, depth)
        elif character in "])}":
            depth -= 1
    return deepest


def split_plain_list(text: str) -> tuple[tuple[str, ...], ...]:
    """The readings of a plain enumeration, one tuple of items each (one or two readings).

    Texts longer than :data:`MAX_LIST_CHARS` or with more than :data:`MAX_LIST_ITEMS`
    items give no reading.

    Example:
        >>> split_plain_list("SSP1, SSP2 and SSP3")
        (('SSP1', 'SSP2', 'SSP3'), ('SSP1', 'SSP2 and SSP3'))
        >>> split_plain_list("A, B, and C")
        (('A', 'B', 'C'),)
        >>> split_plain_list("3,420; 1,200")
        (('3,420', '1,200'),)
        >>> split_plain_list("10,20,30")
        (('10', '20', '30'),)
    """
    if len(text) > MAX_LIST_CHARS:
        return ()
    parts = [_BULLET.sub("", part, count=1) for part in _SEPARATOR.split(text.strip())]
    parts = [part for part in parts if part]
    if not parts:
        return ()
    if len(parts) > 1:
        parts[-1] = _LEADING_AND.sub("", parts[-1], count=1)
    readings = [tuple(parts)]
    *head, last = parts
    final_and = None
    for final_and in _LAST_AND.finditer(last):  # noqa: B007  # the last one is wanted
        pass
    if final_and is not None:
        readings.insert(0, (*head, last[: final_and.start()], last[final_and.end() :]))
    return tuple(reading for reading in readings if len(reading) <= MAX_LIST_ITEMS)
