"""The shared input checks: what passes unchanged, and what each refusal says."""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import pytest

from opik_semantic_metrics.answers.tiers import AnswerMatcher
from opik_semantic_metrics.compare.stats import bootstrap_interval, compare_systems
from opik_semantic_metrics.errors import InputError
from opik_semantic_metrics.inputs import (
    as_list,
    check_between_0_and_1,
    check_non_negative_number,
    check_pairs,
    check_text,
    is_finite_number,
    reference_texts,
)
from opik_semantic_metrics.semantic.combine import Combination


@pytest.mark.parametrize("value", [["a"], ("a", "b"), []])
def test_lists_and_tuples_pass_unchanged(value):
    assert as_list(value, "candidates") is value


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        ("ab", "str"),
        (b"ab", "bytes"),
        (None, "NoneType"),
        (3, "int"),
        ({"a"}, "set"),
        ({"a": 1}, "dict"),
    ],
)
def test_anything_else_is_not_a_list(value, kind):
    with pytest.raises(InputError, match=rf"Expected `candidates` to be a list, got {kind}\."):
        as_list(value, "candidates")


def test_texts_pass_unless_they_hold_an_unpaired_surrogate():
    text = "Ünïcödé 東京 🐱"
    assert check_text(text, "candidate 0") is text
    # Bytes that are not UTF-8, decoded with errors="surrogateescape", as file readers do.
    broken = b"caf\xe9 au lait".decode("utf-8", errors="surrogateescape")
    with pytest.raises(
        InputError,
        match=r"Expected candidate 2 to be valid Unicode text, found the unpaired surrogate "
        r"'\\udce9' at character 3\.",
    ):
        check_text(broken, "candidate 2")
    with pytest.raises(InputError, match=r"Expected candidate 0 to be a string, got bytes\."):
        check_text(b"text", "candidate 0")


def test_a_reference_is_a_text_or_a_non_empty_list_of_texts():
    assert reference_texts("A cat.", "reference 0") == ["A cat."]
    assert reference_texts(("A cat.", ""), "reference 3") == ["A cat.", ""]
    for reference, message in [
        ([], "reference 4 to be a string or a non-empty list of strings, got list"),
        (None, "reference 4 to be a string or a non-empty list of strings, got NoneType"),
        (["a", 1, None], "reference 4 to hold only strings, found NoneType, int"),
        (["a", "\ud800"], "reference 4 to be valid Unicode text"),
    ]:
        with pytest.raises(InputError, match=message):
            reference_texts(reference, "reference 4")


@pytest.mark.parametrize(
    ("reference", "kind"),
    [
        (b"A cat.", "bytes"),
        (bytearray(b"A cat."), "bytearray"),
        (memoryview(b"A cat."), "memoryview"),
    ],
)
def test_binary_data_is_not_a_list_of_texts(reference, kind):
    with pytest.raises(
        InputError,
        match=rf"Expected reference 0 to be a string or a non-empty list of strings, got {kind}\.",
    ):
        reference_texts(reference, "reference 0")
    with pytest.raises(InputError, match=rf"Expected `references` to be a list, got {kind}\."):
        as_list(reference, "references")


def test_pairs_are_checked_as_lists_of_equal_length_then_item_by_item():
    assert check_pairs(("A cat.",), ["A cat sat."]) == (["A cat."], [["A cat sat."]])
    with pytest.raises(InputError, match="got 1 references for 2 candidates"):
        check_pairs(["a", "b"], ["a"])
    with pytest.raises(InputError, match="candidate 1 to be a string, got NoneType"):
        check_pairs(["a", None], ["a", "b"])
    with pytest.raises(InputError, match="reference 1 to be valid Unicode text"):
        check_pairs(["a", "b"], ["a", "b\udcff"])
    # One item (a metric's score() call) is not numbered: every failed item of an Opik
    # run would read "candidate 0".
    with pytest.raises(InputError, match="Expected the candidate to be a string, got NoneType"):
        check_pairs([None], ["a"])
    with pytest.raises(InputError, match="Expected the reference to be a string or a non-empty"):
        check_pairs(["a"], [[]])


# One rule for numbers: Python's and NumPy's ints and floats are, a bool is not, and an
# int past a float's range is not finite. Each setting below once read True as 1.


@pytest.mark.parametrize(
    ("value", "finite"),
    [
        (0.5, True),
        (3, True),
        (np.float32(0.25), True),
        (np.int64(7), True),
        (-0.0, True),
        (True, False),
        (np.True_, False),
        ("0.5", False),
        (None, False),
        (Decimal("0.5"), False),
        (float("nan"), False),
        (float("-inf"), False),
        (np.float64("inf"), False),
        (10**400, False),
    ],
)
def test_is_finite_number_follows_the_one_rule(value, finite):
    assert is_finite_number(value) is finite


def test_a_bool_is_no_number_for_any_setting():
    with pytest.raises(ValueError, match="`tie_tolerance` to be a finite number >= 0, got True"):
        compare_systems([0.5, 0.6], [0.4, 0.7], tie_tolerance=True)
    with pytest.raises(ValueError, match="`confidence` between 0 and 1, got True"):
        bootstrap_interval([0.5, 0.6], confidence=True)
    with pytest.raises(ValueError, match="`alpha` between 0 and 1, got False"):
        compare_systems([0.5, 0.6], [0.4, 0.7], alpha=False)
    with pytest.raises(ValueError, match="`tolerance` to be a finite number >= 0, got True"):
        AnswerMatcher(tolerance=True)
    with pytest.raises(ValueError, match=r"three non-negative numbers .*got \(True, 1.0, 1.0\)"):
        Combination.create(weights=(True, 1.0, 1.0))
    # An int past a float's range raised OverflowError from math.isfinite.
    with pytest.raises(ValueError, match="three non-negative numbers"):
        Combination.create(weights=(10**400, 1.0, 1.0))
    with pytest.raises(ValueError, match="`tie_tolerance` to be a finite number >= 0"):
        compare_systems([0.5, 0.6], [0.4, 0.7], tie_tolerance=10**400)
    # NumPy's numbers are numbers, and give what Python's give.
    assert compare_systems(
        [0.5, 0.6], [0.4, 0.7], tie_tolerance=np.float32(0.0)
    ) == compare_systems([0.5, 0.6], [0.4, 0.7], tie_tolerance=0.0)
    assert check_between_0_and_1(np.float64(0.9), "alpha") == 0.9
    assert check_non_negative_number(np.int64(2), "tolerance") == 2.0
