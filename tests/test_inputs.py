"""The shared input checks: what passes unchanged, and what each refusal says."""

from __future__ import annotations

import pytest

from opik_semantic_metrics.errors import InputError
from opik_semantic_metrics.inputs import as_list, check_pairs, check_text, reference_texts


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
