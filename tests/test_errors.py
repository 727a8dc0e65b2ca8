"""errors.shown: a short description of any value, for messages that must not fail."""

from __future__ import annotations

import pytest

from opik_semantic_metrics.errors import shown


class Unprintable:
    def __repr__(self) -> str:
        raise RuntimeError("no repr")


def test_a_value_is_its_repr():
    assert shown("Paris") == "'Paris'"
    assert shown([1, 2.5, None]) == "[1, 2.5, None]"


def test_a_long_value_is_cut_to_the_limit():
    assert len(shown("x" * 1000, limit=50)) == 50
    assert shown("x" * 1000, limit=50).startswith("'xxx")
    # A container's repr is bounded while it is written, not after.
    assert len(shown(list(range(10**6)))) <= 120


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (10**5000, "an int of about 5001 digits"),
        (-(10**5000), "an int of about 5001 digits"),
        ([10**5000], "a value of type list that repr() cannot write"),
    ],
    ids=["10**5000", "-10**5000", "list holding 10**5000"],
)
def test_a_value_repr_cannot_write_is_described(value, expected):
    assert shown(value) == expected


def test_an_object_whose_repr_raises_is_named_by_its_type():
    assert shown(Unprintable()).startswith("<Unprintable instance at 0x")
