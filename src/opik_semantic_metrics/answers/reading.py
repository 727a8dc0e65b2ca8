"""Reading one side of an answer comparison once: its text, normal forms, whole-text
number and list, and the answer format.

Bad input (the engine's contract; the Opik metric turns :class:`InputError` into
``MetricComputationError``):

- ``output`` ``None``, NaN or an infinity: no answer, so no match (a defined 0, flagged
  ``output_missing`` or ``output_not_finite``), never an error: a missing answer is a
  wrong answer and must stay in an accuracy's denominator.
- ``reference`` ``None`` or NaN: the gold is "not answerable" (the MMESGBench answer
  analysis's convention for ``None``; pandas reads an empty cell as NaN). An infinite
  ``reference``: InputError.
- ints and floats: numbers. ``82`` matches ``"82%"`` and ``"82.0"`` (``numeric``) and
  ``"82"`` (``exact``, through its text); booleans are the texts ``True`` and ``False``.
- Python lists and tuples: list answers, within the bounds of
  :mod:`~opik_semantic_metrics.answers.lists` (InputError beyond them).
- NumPy scalars and arrays and PyTorch tensors (what a task computing with them, or a
  pandas row, hands over): read as the Python values their ``tolist()`` gives.
- any other type (dict, set, bytes, objects): InputError naming the type; an
  ``answer_format`` outside :data:`ANSWER_FORMATS`: InputError.
- texts of any length: every method but ``semantic`` is linear; list and number
  reading stop early on long texts.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

from opik_semantic_metrics.answers.lists import (
    ListItem,
    items_from_value,
    looks_like_list,
    python_value,
    read_list_literal,
    split_plain_list,
)
from opik_semantic_metrics.answers.normalize import NormalForms, normal_forms, search_text
from opik_semantic_metrics.answers.numbers import (
    MAX_DIGITS,
    ParsedNumber,
    number_from_value,
    parse_number,
)
from opik_semantic_metrics.answers.spelled_numbers import digits_for_words
from opik_semantic_metrics.errors import InputError, shown
from opik_semantic_metrics.inputs import check_text, is_blank, is_empty_cell, is_finite_number

#: Answer formats, as MMESGBench writes them; matched case-insensitively, ``None`` = unknown.
ANSWER_FORMATS = ("Str", "Int", "Float", "List", "None")


@dataclass(frozen=True)
class Element:
    """A list element read once: its text, normal forms, number, or nested elements."""

    text: str
    forms: NormalForms
    number: ParsedNumber | None
    nested: tuple[Element, ...] | None = None


class Answer:
    """One side of a comparison, read once; the normal forms only when a tier needs them."""

    def __init__(
        self,
        text: str,
        number: ParsedNumber | None,
        items: tuple[ListItem, ...] | None = None,
        list_like: bool = False,
        list_problem: str | None = None,
    ) -> None:
        self.text = text
        self.number = number
        self.items = items
        self.list_like = list_like
        self.list_problem = list_problem
        self._searched: dict[bool, tuple[str, NormalForms]] = {}

    @functools.cached_property
    def forms(self) -> NormalForms:
        return normal_forms(self.text)

    def searched(self, footnotes: bool) -> tuple[str, NormalForms]:
        """The text as a gold is looked for in it (``search_text``), and its normal
        forms; read once for all of an item's acceptable answers."""
        if footnotes not in self._searched:
            text = search_text(self.text, footnotes=footnotes)
            self._searched[footnotes] = (text, normal_forms(text))
        return self._searched[footnotes]


def check_answer_format(answer_format: object) -> str | None:
    """The canonical spelling of an answer format (an empty cell, blank text: unknown).

    An empty cell (``None``, NaN, pandas' ``NA``) counts as unknown because pandas reads
    one as NaN or ``NA`` (and, by default, the text ``"None"`` as NaN too: read such a
    column with ``keep_default_na=False`` to keep MMESGBench's ``None`` format).

    Raises:
        InputError: Not one of :data:`ANSWER_FORMATS` (case-insensitively).

    Example:
        >>> check_answer_format("float"), check_answer_format(None)
        ('Float', None)
    """
    if is_empty_cell(answer_format) or _is_blank(answer_format):
        return None
    if isinstance(answer_format, str):
        for known in ANSWER_FORMATS:
            if answer_format.strip().lower() == known.lower():
                return known
    raise InputError(
        f"Expected `answer_format` to be one of {', '.join(ANSWER_FORMATS)} (the string "
        f"'None': not answerable), or Python's None for unknown, got {shown(answer_format, 60)}."
    )


def is_missing_reference(reference: object) -> bool:
    """An empty cell or blank text: no gold answer, so the question is not answerable."""
    if isinstance(reference, float) and math.isinf(reference):
        raise InputError(f"Expected a gold answer, got the number {reference}.")
    return is_empty_cell(reference) or _is_blank(reference)


def missing_output_flag(output: object) -> str | None:
    """Why there is no answer to compare, if there is none: an empty cell or blank text
    (``output_missing``), NaN or an infinity (``output_not_finite``)."""
    if isinstance(output, float):
        return None if is_finite_number(output) else "output_not_finite"
    if is_empty_cell(output) or _is_blank(output):
        return "output_missing"
    return None


def _is_blank(value: object) -> bool:
    return isinstance(value, str) and is_blank(value)


def read_answer(value: object, side: str) -> Answer:
    """Read one side once: text, normal forms, whole-text number, list literal."""
    if isinstance(value, bool):
        value = str(value)
    if isinstance(value, str):
        # Checked as every metric checks a text (an unpaired surrogate is an error).
        text = check_text(value, f"the {side}").strip()
        number = parse_number(text)
        if number is None and text[:1].isalpha():
            # "eight", "two thousand": a number spelled out is that number.
            in_digits = digits_for_words(text, whole_answer=True)
            number = parse_number(in_digits) if in_digits != text else None
        if not looks_like_list(text):
            return Answer(text, number)
        reading = read_list_literal(text)
        return Answer(text, number, reading.items, True, reading.problem)
    if isinstance(value, int | float):
        number = number_from_value(value)
        if number is None:
            raise InputError(f"Expected the {side} to be a number of at most {MAX_DIGITS} digits.")
        return Answer(repr(value), number)
    if isinstance(value, list | tuple):
        items = items_from_value(value)
        # Written from the Python values read: NumPy 2 writes numpy.float64(0.5) in a list
        # as "np.float64(0.5)", NumPy 1 as "0.5".
        return Answer(repr(_as_lists(items)), None, items, list_like=True)
    raise InputError(
        f"Expected the {side} to be a string, a number, a list or None, got {type(value).__name__}."
    )


def _as_lists(items: tuple[ListItem, ...]) -> list[object]:
    return [_as_lists(item) if isinstance(item, tuple) else item for item in items]


def _element(item: ListItem) -> Element:
    if isinstance(item, tuple):
        return Element(repr(item), NormalForms("", ""), None, tuple(_element(i) for i in item))
    if isinstance(item, bool) or item is None:
        text = str(item)
        return Element(text, normal_forms(text), None)
    if isinstance(item, int | float):
        # An int is an exact answer, finite past a float's range too: number_from_value
        # reads ints itself (None past MAX_DIGITS digits).
        finite = isinstance(item, int) or is_finite_number(item)
        number = number_from_value(item) if finite else None
        text = repr(item)
        return Element(text, normal_forms(text), number)
    text = item.strip()
    return Element(text, normal_forms(text), parse_number(text))


def list_readings(answer: Answer) -> tuple[tuple[Element, ...], ...]:
    """The ways one side reads as a list (none when it cannot be read)."""
    if answer.items is not None:
        return (tuple(_element(item) for item in answer.items),)
    if answer.list_problem in ("too_long", "too_deep", "too_many_items"):
        return ()
    text = answer.text[1:-1] if answer.list_like else answer.text
    return tuple(tuple(_element(item) for item in reading) for reading in split_plain_list(text))


class _NotGiven:
    """The mark of an argument not given (``None`` is a gold answer: "not answerable")."""

    def __repr__(self) -> str:
        return "NOT_GIVEN"


#: A ``reference`` not given: distinct from ``None``, which means "not answerable".
NOT_GIVEN: object = _NotGiven()
#: Most acceptable answers one item may have (TriviaQA's most aliased have a few hundred).
MAX_ACCEPTABLE_ANSWERS = 1000


def acceptable_answer_list(reference: object, acceptable_answers: object) -> tuple[object, ...]:
    """The gold answers of one item: the ``reference`` (if given) first, then each of
    the ``acceptable_answers`` (a list, tuple or NumPy array; a single text is one
    answer), without repeats.

    Raises:
        InputError: Neither is given, ``acceptable_answers`` is of another type, or
            holds more than :data:`MAX_ACCEPTABLE_ANSWERS`.

    Example:
        >>> acceptable_answer_list("Nureyev", ["Rudolf Nureyev", "Nureyev"])
        ('Nureyev', 'Rudolf Nureyev')
    """
    golds: list[object] = [] if reference is NOT_GIVEN else [reference]
    extra = python_value(acceptable_answers)
    if hasattr(extra, "tolist"):  # a NumPy array, as Ray Data gives a list column
        extra = extra.tolist()
    if isinstance(extra, str | int | float) and not is_empty_cell(extra):
        extra = [extra]
    if extra is not None and not is_empty_cell(extra):
        if not isinstance(extra, list | tuple):
            raise InputError(
                "Expected `acceptable_answers` to be a list of answers, got "
                f"{type(extra).__name__}."
            )
        if len(extra) > MAX_ACCEPTABLE_ANSWERS:
            raise InputError(
                f"Expected at most {MAX_ACCEPTABLE_ANSWERS} acceptable answers, got {len(extra)}."
            )
        golds.extend(python_value(answer) for answer in extra)
    if not golds:
        raise InputError(
            "Expected a `reference` or `acceptable_answers`: neither was given (map the "
            "dataset's answer field to one of them)."
        )
    unique: list[object] = []
    for gold in golds:
        if not any(type(gold) is type(kept) and gold == kept for kept in unique):
            unique.append(gold)
    return tuple(unique)
