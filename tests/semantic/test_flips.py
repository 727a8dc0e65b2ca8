"""The two flip checks: a negation on one side only, numbers the reference does not state."""

from __future__ import annotations

from decimal import Decimal

import pytest

from opik_semantic_metrics.semantic.flips import (
    changed_numbers,
    negates,
    negation_flip,
    numbers_in,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("A man is not playing the guitar.", True),
        ("The store isn't open.", True),
        ("The store isn\u2019t open.", True),  # a typographic apostrophe
        ("He never remembered.", True),
        ("There is no cat on the sofa.", True),
        ("Nobody came; nothing happened.", True),
        ("You cannot park here.", True),
        ("NOT on Sundays!", True),
        ("A man is playing the guitar.", False),
        ("Notes on knowledge and nothingness.", False),  # words that only start alike
        ("", False),
    ],
)
def test_negates(text, expected):
    assert negates(text) is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The car costs 13,000 dollars.", {"13000"}),
        ("Magnitude 4.1, then 4.10.", {"4.1"}),
        ("The train leaves at 9:45.", {"9", "45"}),
        ("Take 10mg twice a day.", {"10", "2"}),
        ("Three men and a dozen eggs.", {"3", "12"}),
        ("About 26 million people.", {"26000000"}),
        ("A million reasons.", {"1000000"}),
        ("Between 1.5-2 km.", {"1.5", "2"}),
        ("Seventy-two.", set()),  # a hyphenated number word is no word of the list
        ("No numbers here.", set()),
    ],
)
def test_numbers_in(text, expected):
    assert {format(number, "f") for number in numbers_in(text)} == expected


def test_numbers_in_compares_values_not_spellings():
    assert numbers_in("3 men, 3.0 metres") == {Decimal(3)}
    assert numbers_in("5,000 people") == numbers_in("5000 people") == numbers_in("5 thousand")


@pytest.mark.parametrize(
    ("output", "reference", "expected"),
    [
        ("A man is not playing.", "A man is playing.", 1.0),
        ("A man is playing.", "A man isn't playing.", 1.0),
        ("He didn't come.", "He never came.", 0.0),  # both negate
        ("He came.", "He arrived.", 0.0),
    ],
)
def test_negation_flip(output, reference, expected):
    assert negation_flip(output, reference) == expected


@pytest.mark.parametrize(
    ("output", "reference", "expected"),
    [
        ("The meeting is at 5 pm.", "The meeting is at 3 pm.", 1.0),
        ("Three men play football.", "3 men are playing football.", 0.0),
        ("5 men and 2 dogs.", "5 men and 3 dogs.", 0.5),
        ("2 dogs.", "5 men and 2 dogs.", 0.0),  # a number left out is no flip
        ("The bridge is long.", "The bridge is 200 metres long.", 0.0),
        ("The bridge is 200 metres long.", "The bridge is long.", 0.0),  # nothing to check
    ],
)
def test_changed_numbers(output, reference, expected):
    assert changed_numbers(output, reference) == expected
