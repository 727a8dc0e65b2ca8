"""The two flip checks: a negation on one side only, numbers the reference does not state."""

from __future__ import annotations

from decimal import Decimal

import pytest

from opik_semantic_metrics.semantic.flips import (
    aligned_sentences,
    changed_numbers,
    negates,
    negation_flip,
    numbers_in,
    sentences,
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


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The talks failed. Dr. Smith left early! Will he return?",
         ("The talks failed.", "Dr. Smith left early!", "Will he return?")),
        ('He said "stop." Then he left.', ('He said "stop."', "Then he left.")),
        ("Yes. I can do it.", ("Yes. I can do it.",)),  # a one-word piece joins the next
        ("U.S. troops left. They came home.", ("U.S. troops left.", "They came home.")),
        ("It rose 3.5 percent", ("It rose 3.5 percent",)),
        # Tokenised text: a lone stop glued to the next word still ends a sentence.
        ("police say so .rio ferdinand was hit .", ("police say so .", "rio ferdinand was hit .")),
        ("Dr. Smith met the U.S. team at 3 a.m. today.",
         ("Dr. Smith met the U.S. team at 3 a.m. today.",)),
        ("A cat sat. Ok.", ("A cat sat. Ok.",)),  # a short last piece joins the one before
        ("", ()),
    ],
)  # fmt: skip
def test_sentences(text, expected):
    assert sentences(text) == expected


def test_each_output_sentence_aligns_with_the_reference_sentence_sharing_most_words():
    pairs = aligned_sentences(
        "The match was cancelled. Heavy rain fell all day. Fans went home.",
        "Heavy rain fell on Sunday. The match was called off.",
    )
    assert [(said, expected) for said, expected, _ in pairs] == [
        ("The match was cancelled.", "The match was called off."),
        ("Heavy rain fell all day.", "Heavy rain fell on Sunday."),
        ("Fans went home.", "Heavy rain fell on Sunday."),  # no shared word: the first
    ]
    assert [share for _, _, share in pairs] == pytest.approx([4 / 12, 5 / 12, 3 / 12])


def test_a_flip_in_one_sentence_of_several_counts_by_its_share_of_the_words():
    """One changed figure in one sentence of a longer text is not the error that a
    changed number in a one-line paraphrase is: the checks weigh each aligned sentence
    pair by its share of the output's words."""
    reference = "The storm killed 12 people in the north. Schools stayed closed on Monday."
    changed = "The storm killed 15 people in the north. Schools stayed closed on Monday."
    assert changed_numbers(changed, reference) == pytest.approx(8 / 13)
    assert changed_numbers(changed, reference, aligned=False) == 1.0
    negated = "The storm killed 12 people in the north. Schools did not stay closed on Monday."
    assert negation_flip(negated, reference) == pytest.approx(7 / 15)
    assert negation_flip(negated, reference, aligned=False) == 1.0
    # A number another reference sentence states is no changed number.
    moved = "Schools stayed closed for 12 days. The storm hit the north."
    assert changed_numbers(moved, reference) == 0.0


def test_one_sentence_texts_are_checked_as_whole_texts():
    for output, reference in [
        ("The meeting is at 5 pm.", "The meeting is at 3 pm."),
        ("5 men and 2 dogs.", "5 men and 3 dogs."),
        ("A man is not playing.", "A man is playing."),
        ("2 dogs.", "5 men and 2 dogs."),
    ]:
        assert changed_numbers(output, reference) == changed_numbers(
            output, reference, aligned=False
        )
        assert negation_flip(output, reference) == negation_flip(output, reference, aligned=False)


def test_a_pair_that_shares_less_than_half_its_content_words_is_not_checked():
    """A flip is the same statement with a "not" or a number changed: a sentence sharing
    less than half its content words with its counterpart has nothing to flip."""
    assert negation_flip("Nobody came to the party.", "The weather was sunny.") == 0.0
    assert (
        negation_flip("Nobody came to the party.", "The weather was sunny.", aligned=False) == 1.0
    )
    assert changed_numbers("The storm killed 12 people.", "Sales fell by 10 percent.") == 0.0
    assert (
        changed_numbers("The storm killed 12 people.", "Sales fell 10 percent.", aligned=False)
        == 1.0
    )
    # Two of three content words shared is enough.
    assert changed_numbers("The storm hit 12 towns.", "The storm hit 10 villages.") == 1.0
