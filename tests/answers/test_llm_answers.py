"""AnswerMatch on answers as LLMs write them: sentences and paragraphs around the answer,
several acceptable answers, numbers in words, and what people still refuse.

The sentences are written for these tests in the manner of EVOUNA's TriviaQA answers
(chat models and Bing Chat answering trivia questions); each label is what a person
grading the answer would say, fixed before the matcher ran.
"""

from __future__ import annotations

import pytest

from opik_semantic_metrics.answers.tiers import AnswerItem, AnswerMatcher
from opik_semantic_metrics.errors import InputError


@pytest.fixture(scope="module")
def matcher() -> AnswerMatcher:
    return AnswerMatcher()


LEAD = (
    "The ballet dancer who asked for asylum in France while touring with the Kirov "
    "Ballet in June 1961 was Rudolf Nureyev. "
)
EXPLANATION = (
    "He slipped away from his minders at the airport and went on to dance with the "
    "Royal Ballet for many years, becoming one of the most celebrated performers of the "
    "century and a director of the Paris Opera Ballet in the 1980s. "
)


@pytest.mark.parametrize(
    ("output", "golds", "question", "expected"),
    [
        # The answer in a long paragraph's first sentence: right, however long it goes on.
        (LEAD + EXPLANATION * 2, ["Nureyev", "Rudolf Nureyev"], None, True),
        # The gold only mentioned deep in a paragraph that answers something else.
        (EXPLANATION * 3 + "Nureyev admired him.", ["Nureyev"], None, False),
        # Bing Chat's footnote numbers glued to words.
        ("The physicist is Antoine Henri Becquerel1. He found radioactivity2.",
         ["Antoine Henri Becquerel"], None, True),
        # A digit in the gold is never taken for a footnote.
        ("The scenario used is SSP1.", ["SSP1"], None, True),
        ("The scenario used is SSP2.", ["SSP1"], None, False),
        # Accents, derived words, possessives.
        ("Sasha Fierce is the alter ego of Beyoncé.", ["Beyonce"], None, True),
        ("James Rodriguez is Colombian.", ["Colombia"], None, True),
        ("Mark McGwire broke Roger Maris's record.", ["Roger Maris"], None, True),
        # A word the question holds is context, not a second answer or a negation.
        ("China and North Korea.", ["North Korea"],
         "The Yalu river is a border between China and which neighbour?", True),
        ("China and North Korea.", ["North Korea"], None, False),
        ("George Eliot lived with him but never married him.", ["George Eliot"],
         "Which writer lived with George Lewes but never married him?", True),
        ("George Eliot never married.", ["George Eliot"], None, False),
        # "No 1" is a chart position, not a negation.
        ("Culture Club had a No 1 hit with Karma Chameleon.", ["Culture Club"], None, True),
        # A negation on another word of the sentence does not reject the gold.
        ("The only letter that does not appear in any state's name is the letter 'Q'.",
         ["Q"], None, True),
        # What people refuse: hedges between candidates, a negated gold, a stated answer
        # that is another, a chat model's refusal.
        ("It is either Rudolf Nureyev or Mikhail Baryshnikov.", ["Rudolf Nureyev"], None, False),
        ("Rudolf Nureyev or Mikhail Baryshnikov", ["Rudolf Nureyev"], None, False),
        ("It was not Rudolf Nureyev but Mikhail Baryshnikov.", ["Rudolf Nureyev"], None, False),
        ("Nureyev is often named, but the answer is Baryshnikov.", ["Nureyev"], None, False),
        ("As an AI language model, I do not have access to real-time information. "
         "However, reports from the period describe several dancers, among them Rudolf "
         "Nureyev, who toured that summer, and the press at the time wrote about defections "
         "of artists from the Soviet Union in general terms without naming them all.",
         ["Rudolf Nureyev"], None, False),
        # An "and" that adds a detail in a sentence is not a second answer.
        ("Man Ray was famous in the field of photography and surrealism.", ["Photography"],
         None, True),
        ("Photography and painting", ["Photography"], None, False),
    ],
)  # fmt: skip
def test_llm_answers_graded_as_a_person_would(matcher, output, golds, question, expected):
    result = matcher.match_any(output, golds, question=question)
    assert result.matched is expected, result.reason


@pytest.mark.parametrize(
    ("output", "gold", "expected"),
    [
        ("Spiders have eight legs.", "8", True),
        ("eight", "8", True),
        ("8", "eight", True),
        ("two thousand", "2000", True),
        ("1,000", "one thousand", True),
        ("It opened in 1830.", "one thousand, eight hundred and thirty", True),
        ("Forty-two.", "42", True),
        ("Spiders have six legs.", "8", False),
        ("eight nine", "89", False),  # not one number in English order
        ("The one who came last.", "1", False),  # "one" in running text is a pronoun
    ],
)
def test_numbers_in_words_are_numbers(matcher, output, gold, expected):
    assert matcher.match(output, gold).matched is expected


def test_any_one_acceptable_answer_matches_and_is_named(matcher):
    result = matcher.match_any("It was Rudolf Nureyev.", ["Nuriev", "Rudolf Nureyev", "Nureyev"])
    assert (result.matched, result.method, result.matched_answer) == (
        True,
        "contains",
        "Rudolf Nureyev",
    )
    missed = matcher.match_any("It was Baryshnikov.", ["Nuriev", "Rudolf Nureyev"])
    assert (missed.matched, missed.matched_answer) == (False, None)


def test_another_acceptable_answer_beside_the_gold_is_no_second_answer(matcher):
    output = "Evaporation or vaporization."
    assert matcher.match_any(output, ["evaporation", "vaporization"]).matched
    # With only one of them acceptable, the short "or vaporization" offers another answer.
    assert not matcher.match_any(output, ["evaporation"]).matched


@pytest.mark.parametrize(
    ("output", "gold", "matched"),
    [
        # In a sentence, an "or" without a hedging word names the answer twice or adds a
        # detail; EVOUNA's judges took each of these as right.
        ("The change of state from liquid to gas is called evaporation or vaporization.",
         "evaporation", True),
        ("Orange or yellow golf balls are typically used on the golf course in Antarctica "
         "to increase visibility against the white snow.", "Orange", True),
        ("Sherlock Holmes practices the science of detection or detective work.",
         "Detection", True),
        # A hedging word makes it a choice between candidates.
        ("It could be Paris or Lyon, depending on the source.", "Paris", False),
        ("The capital is probably Lyon or Paris.", "Paris", False),
        ("The answer is either Paris or Lyon.", "Paris", False),
        # A short output is a choice whatever its words, a comma before "or" too.
        ("Paris or Lyon.", "Paris", False),
        ("Paris, or Lyon", "Paris", False),
        ("It could be Paris, or maybe Lyon.", "Paris", False),
    ],
)  # fmt: skip
def test_or_in_a_sentence_is_a_hedge_only_with_a_hedging_word(matcher, output, gold, matched):
    result = matcher.match_any(output, [gold])
    assert result.matched is matched, result.reason
    if not matched:
        assert "second_answer" in result.flags


def test_match_many_is_match_any_item_by_item(matcher):
    items = [
        AnswerItem("Spiders have eight legs.", ("8",)),
        AnswerItem("It was not Paris.", ("Paris",)),
        AnswerItem("['a', 'b']", (["b", "a"],), "List"),
    ]
    results = matcher.match_many(items)
    assert [result.matched for result in results] == [True, False, True]
    assert [result.method for result in results] == ["contains", "no_match", "list"]


def test_an_item_needs_an_acceptable_answer(matcher):
    with pytest.raises(InputError, match="at least one acceptable answer"):
        matcher.match_any("Paris", [])


class CountingScorer:
    """A scorer with a batch method, recording each call: what the matcher sends it."""

    def __init__(self) -> None:
        self.batches: list[list[tuple[str, str]]] = []

    def __call__(self, output: str, reference: str) -> float:
        raise AssertionError("the matcher must score in batches when it can")

    def score_pairs(self, pairs):
        self.batches.append(list(pairs))
        return [0.9 if "feline" in output else 0.1 for output, _ in pairs]


def test_the_semantic_tier_scores_every_acceptable_answer_of_every_item_in_one_batch():
    scorer = CountingScorer()
    matcher = AnswerMatcher(semantic=scorer, semantic_threshold=0.5)
    items = [
        AnswerItem("a small feline", ("a cat", "a kitten", "a house cat")),
        AnswerItem("a large canine", ("a wolf", "a big dog")),
        AnswerItem("The capital is Paris.", ("Paris",)),  # matched by a rule: not scored
    ]
    results = matcher.match_many(items)
    assert len(scorer.batches) == 1 and len(scorer.batches[0]) == 5
    assert [(result.matched, result.method) for result in results] == [
        (True, "semantic"),
        (False, "no_match"),
        (True, "contains"),
    ]
    assert results[0].matched_answer == "a cat"


@pytest.mark.parametrize(
    ("output", "gold", "flag"),
    [
        ("Michelangelo", "Leonardo da Vinci", "other_name"),
        ("The Atlantic Ocean", "The Pacific Ocean", "other_name"),
        (
            "The meeting moved because the room was booked.",
            "The meeting moved because the CEO was travelling.",
            "gold_name_missing",
        ),
        ("Spiders have six legs.", "Spiders have eight legs.", "gold_number_missing"),
        ("The meeting did not move.", "The meeting moved.", "negation_mismatch"),
    ],
)
def test_the_semantic_tier_refuses_a_different_answer_however_close(output, gold, flag):
    always = AnswerMatcher(semantic=lambda output, reference: 1.0, semantic_threshold=0.5)
    result = always.match(output, gold)
    assert not result.matched and flag in result.flags and result.semantic_score is None


@pytest.mark.parametrize(
    ("output", "gold"),
    [
        ("It was painted by da Vinci.", "Leonardo da Vinci"),  # half the gold's names
        ("The session was postponed because the CEO was away.",
         "The meeting moved because the CEO was travelling."),
        ("Spiders stand on eight legs.", "Spiders have 8 legs."),  # 8 in words
    ],
)  # fmt: skip
def test_the_semantic_tier_still_judges_the_same_answer_put_otherwise(output, gold):
    always = AnswerMatcher(semantic=lambda output, reference: 1.0, semantic_threshold=0.5)
    assert always.match(output, gold).method == "semantic"


@pytest.mark.parametrize(
    ("output", "gold"),
    [
        # A negation past "and" is said of something else (EVOUNA, GPT-3.5).
        ("The green V on food products means it is suitable for vegetarians and does not "
         "contain any animal ingredients.", "suitable for vegetarians"),
        # "It does not contain any almonds" states a fact; it does not decline to answer.
        ("Disaronno is an Italian liqueur that is amber in colour and has a characteristic "
         "almond taste, although it does not actually contain any almonds. According to the "
         "company, its primary flavour comes from an infusion of apricot kernel oil with "
         "burnt sugar and the pure essence of seventeen selected herbs and fruits. So, the "
         "flavour of Disaronno comes from apricot kernels.", "apricot"),
        # An output that reads as a number ("10 pin bowling") is still searched for a text.
        ("Ten-pin bowling", "Bowling"),
        # A letter named as a letter.
        ("The only letter of the alphabet that does not appear in any of the names of the "
         "50 American states is the letter\xa0Q.", "Q"),
        # A second number in another sentence is a detail of the answer.
        ("Anne Bancroft was born on September 17, 1931\xa0. That means she was born in the "
         "1930s.", "1930s"),
    ],
)  # fmt: skip
def test_an_asserted_answer_with_a_detail_matches(matcher, output, gold):
    result = matcher.match_any(output, [gold])
    assert (result.matched, result.method) == (True, "contains"), result.reason


@pytest.mark.parametrize(
    ("output", "gold"),
    [
        ("Vegetarians is not right, it is vegans.", "vegetarians"),
        ("It is not suitable for vegetarians and contains gelatine.", "suitable for vegetarians"),
        ("The letters P and Q.", "Q"),
        ("She was born in 1931 or 1932.", "1931"),
        ("He was born in 1931. Or was it 1932?", "1931"),
    ],
)  # fmt: skip
def test_the_detail_rules_still_refuse(matcher, output, gold):
    result = matcher.match_any(output, [gold])
    assert not result.matched, result.reason


@pytest.mark.parametrize(
    ("output", "gold"),
    [
        # Ordinals in words and in digits.
        ("Abraham Lincoln was the sixteenth president.", "16th"),
        ("He was the 21st president.", "twenty-first"),
        ("It was his hundredth goal.", "100th"),
        # Units spelled out and abbreviated.
        ("The summit is 8,848 metres above sea level.", "8848 m"),
        ("It is about 5 km long.", "5 kilometres"),
        ("The tower is 1,063 feet tall.", "1063 ft"),
        ("It holds the record at 5.97 meters (19 feet, 7 inches).", "5.97 m"),
        # Names written short.
        ("The highest peak is Mt. Everest.", "Mount Everest"),
        ("He was born in St. Louis, Missouri.", "Saint Louis"),
        ("It was first adopted in the U.S. in 1913.", "United States"),
        ("The USA", "United States of America"),
        ("It was invented in the UK.", "United Kingdom"),
    ],
)  # fmt: skip
def test_ordinals_units_and_short_names_are_found(matcher, output, gold):
    result = matcher.match_any(output, [gold])
    assert result.matched, result.reason


@pytest.mark.parametrize(
    ("output", "gold"),
    [
        ("Let us know what you think.", "United States"),  # "us", the pronoun
        ("It took one second.", "2nd"),  # a time, not an ordinal
        ("It is 5 miles long.", "5 km"),  # another unit
        ("He was the seventeenth president.", "16th"),
        ("He lives on Baker St.", "Saint"),
    ],
)  # fmt: skip
def test_ordinals_units_and_short_names_keep_apart_what_differs(matcher, output, gold):
    result = matcher.match_any(output, [gold])
    assert not result.matched, result.reason
