"""Golds written as several answers: alternatives, a note in brackets, items."""

from __future__ import annotations

import pytest

from opik_semantic_metrics.answers.gold_parts import NO_PARTS, GoldParts, gold_parts
from opik_semantic_metrics.answers.tiers import AnswerMatcher


@pytest.fixture(scope="module")
def matcher() -> AnswerMatcher:
    return AnswerMatcher()


@pytest.mark.parametrize(
    ("gold", "parts"),
    [
        ("Akrotiri or Dhekelia", GoldParts(("Akrotiri", "Dhekelia"))),
        ("Pygmies (short height)", GoldParts(("Pygmies",))),
        ("(Robert) Boyle", GoldParts(("Boyle",))),
        ("Michel (Albert) Roux", GoldParts(("Michel Roux",))),
        ("Brazil, Colombia and Ecuador", GoldParts((), ("Brazil", "Colombia", "Ecuador"))),
        ("1973, 1974, 1977", GoldParts((), ("1973", "1974", "1977"))),
        ("(Half a point for each) - 400 and 800m", GoldParts(("400 and 800m",), ("400", "800m"))),
        ("approximately 1,000", GoldParts(("1,000",))),
        ("approximately 1000", GoldParts(("1000",))),  # no comma to hint at parts
        ("About 300 km", GoldParts(("300 km",))),
        ("Nile River", GoldParts(("Nile",))),
        ("the Pacific Ocean", GoldParts(("the Pacific",))),
        ("Mexico City", NO_PARTS),  # "Mexico" is not "Mexico City"
        ("over 1,000", NO_PARTS),  # a bound changes the answer
        ("Paris", NO_PARTS),
        ("3,420", NO_PARTS),
        # Parts of more than six words are prose, not alternatives or items.
        ("It was the one with the red door or the house on the hill by the sea", NO_PARTS),
    ],
)
def test_gold_parts(gold, parts):
    assert gold_parts(gold) == parts


@pytest.mark.parametrize(
    ("output", "gold", "question"),
    [
        ("The Sovereign Base Areas of the UK on Cyprus are Akrotiri and Dhekelia.",
         "AKROTIRI or DHEKELIA", "Name either of the Sovereign Base Areas of the UK on Cyprus?"),
        ("The family of birds 'Columbidae' covers pigeons.", "PIGEONS or DOVES", None),
        ("The key attribute of the Pygmies relates to their short stature.",
         "Pygmies (short height)", None),
        # Every item, in any order.
        ("The Equator crosses three South American countries: Ecuador, Colombia, and Brazil.",
         "Brazil, Colombia and Ecuador", "Which three South American countries does the "
         "Equator cross?"),
        ("Green, white, and orange.", "Green, White, Orange", None),  # "and orange" opens
        ("Green, white and orange", "Green, White, Orange", None),  # "white and orange"
        ("Red Rum won the Grand National in the years 1973, 1974, and 1977.",
         "1973, 1974, 1977", "In which three years did Red Rum win the Grand National?"),
        ("The setting is a small town in Northern California called Bodega Bay.",
         "Bodega Bay, California", None),
        # A rounding word and a place's generic word are not the answer.
        ("There are about 1,000 species.", "approximately 1,000", None),
        ("The longest river is the Nile.", "Nile River", None),
    ],
)  # fmt: skip
def test_a_part_of_the_gold_is_found(matcher, output, gold, question):
    result = matcher.match_any(output, [gold], question=question)
    assert (result.matched, result.method, result.matched_answer) == (True, "contains", gold)


@pytest.mark.parametrize(
    ("output", "gold", "question"),
    [
        # Not every item.
        ("The Equator crosses Ecuador and Colombia.", "Brazil, Colombia and Ecuador", None),
        ("Green and white", "Green, White, Orange", None),
        ("Red Rum won in 1973 and 1974.", "1973, 1974, 1977", None),
        # An item negated.
        ("It crosses Ecuador and Colombia, but not Brazil.", "Brazil, Colombia and Ecuador",
         None),
        # A bound is another answer than a rounded figure.
        ("There are over 1,000 species.", "approximately 1,000", None),
        ("It is about 1,200.", "approximately 1,000", None),
        ("The capital is Mexico.", "Mexico City", None),
        # Another answer, not an alternative.
        ("The family Columbidae covers parrots.", "PIGEONS or DOVES", None),
        # A gold found whole but beside a second answer: its items are not looked for.
        ("purchased goods and services or business travel", "purchased goods and services",
         None),
        # An alternative that the question names is no answer.
        ("EE was originally branded as Orange and T-Mobile.", "EE (telecommunications)",
         "The major UK mobile network EE was originally branded?"),
    ],
)  # fmt: skip
def test_a_part_that_is_not_the_answer_is_refused(matcher, output, gold, question):
    result = matcher.match_any(output, [gold], question=question)
    assert not result.matched, result.reason
