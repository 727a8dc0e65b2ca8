"""Safe list reading: JSON and Python syntax, never code; bounded size and depth."""

from __future__ import annotations

import pytest

from opik_semantic_metrics.answers.lists import (
    MAX_LIST_CHARS,
    MAX_LIST_DEPTH,
    MAX_LIST_ITEMS,
    items_from_value,
    looks_like_list,
    read_list_literal,
    split_plain_list,
)
from opik_semantic_metrics.errors import InputError


@pytest.mark.parametrize(
    ("text", "items"),
    [
        ("['SSP1', 'SSP2']", ("SSP1", "SSP2")),
        ('["SSP1", "SSP2"]', ("SSP1", "SSP2")),
        ("[1, 2.5, true, null]", (1, 2.5, True, None)),  # JSON
        ("[1, 2.5, True, None]", (1, 2.5, True, None)),  # Python
        ("('a', 'b')", ("a", "b")),
        ("[]", ()),
        ("[[1, 2], ['x']]", ((1, 2), ("x",))),
        ("['it\\'s', \"a [b] c\"]", ("it's", "a [b] c")),  # brackets inside strings
    ],
)
def test_reads_lists(text, items):
    assert read_list_literal(text).items == items


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("[__import__('os').system('echo hacked')]", "malformed"),  # never evaluated
        ("[open('/etc/passwd').read()]", "malformed"),
        ("[1, 2", "malformed"),
        ("[SSP1, SSP2]", "malformed"),
        ("(5)", "not_a_list"),
        ("[{'a': 1}]", "not_a_list"),
        ("[{1, 2}]", "not_a_list"),
        ("[b'bytes']", "not_a_list"),
        ("[1j]", "not_a_list"),
        ("[" * (MAX_LIST_DEPTH + 1) + "]" * (MAX_LIST_DEPTH + 1), "too_deep"),
        ("[" * 100_000 + "]" * 100_000, "too_long"),
        ("[" * 5_000 + "]" * 5_000, "too_deep"),  # within the length bound, still refused
        ("[" + "1, " * (MAX_LIST_ITEMS + 1) + "]", "too_many_items"),
        ("['" + "x" * MAX_LIST_CHARS + "']", "too_long"),
        ("[" + "9" * 5000 + "]", "malformed"),  # over Python's int-string limit
    ],
)
def test_refuses_what_it_should_not_read(text, problem):
    reading = read_list_literal(text)
    assert (reading.items, reading.problem) == (None, problem)


def test_nesting_at_the_limit_is_read():
    text = "[" * MAX_LIST_DEPTH + "1" + "]" * MAX_LIST_DEPTH
    assert read_list_literal(text).problem is None


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ([{"a": 1}], "elements other than"),
        ([[[[["deep"]]]]], "nested deeper than 4"),
        (list(range(MAX_LIST_ITEMS + 1)), "more than 200 values"),
        ([object()], "elements other than"),
    ],
)
def test_python_lists_beyond_the_bounds_are_input_errors(value, message):
    with pytest.raises(InputError, match=message):
        items_from_value(value)


def test_a_deeply_nested_python_list_is_refused_without_recursing():
    value: list = []
    for _ in range(100_000):
        value = [value]
    with pytest.raises(InputError, match="nested deeper"):
        items_from_value(value)


@pytest.mark.parametrize(
    ("text", "readings"),
    [
        ("A, B and C", (("A", "B", "C"), ("A", "B and C"))),
        ("A, B, and C", (("A", "B", "C"),)),
        ("A; B; C", (("A", "B", "C"),)),
        ("A & B", (("A", "B"), ("A & B",))),
        ("- A\n- B\n* C", (("A", "B", "C"),)),
        ("1. first\n2) second", (("first", "second"),)),
        ("3,420, 1,200", (("3,420", "1,200"),)),  # thousands separators stay
        ("single", (("single",),)),
        (" , ; ", ()),
    ],
)
def test_split_plain_list(text, readings):
    assert split_plain_list(text) == readings


def test_split_plain_list_is_bounded():
    assert split_plain_list("a, " * MAX_LIST_CHARS) == ()
    assert split_plain_list(", ".join(["x"] * (MAX_LIST_ITEMS + 1))) == ()


def test_looks_like_list():
    assert looks_like_list("[1]") and looks_like_list("(1, 2)")
    assert not looks_like_list("[1)") and not looks_like_list("[") and not looks_like_list("1, 2")
