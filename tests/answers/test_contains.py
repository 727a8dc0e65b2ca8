"""The contains tier, free abstentions, the scale-word rule and the table of tiers.

Expected values are what a grader would decide for each pair (the issue's examples among
them), not outputs of this code.
"""

from __future__ import annotations

import pytest

from opik_semantic_metrics.answers import tiers
from opik_semantic_metrics.answers.abstentions import declines
from opik_semantic_metrics.answers.contains import clauses
from opik_semantic_metrics.answers.lists import split_plain_list
from opik_semantic_metrics.answers.normalize import normal_forms, prepare
from opik_semantic_metrics.answers.numbers import scale_named
from opik_semantic_metrics.answers.tiers import METHODS, TIERS, AnswerMatcher


@pytest.fixture(scope="module")
def matcher() -> AnswerMatcher:
    return AnswerMatcher()


# --- the table of tiers ----------------------------------------------------------------


def test_the_tiers_are_the_matchers_table_in_order():
    assert TIERS == (
        "exact",
        "normalized",
        "contains",
        "numeric",
        "list",
        "not_answerable",
        "semantic",
    )
    assert (*TIERS, "no_match") == METHODS
    # The rule tiers are the table, in order; the semantic tier runs after all of them,
    # on every acceptable answer at once.
    table = AnswerMatcher._TIER_TABLE
    assert [method for method, _ in table] == list(TIERS[:-1])
    assert all(callable(tier) for _, tier in table)


def test_a_tier_removed_from_the_table_is_no_longer_tried(monkeypatch):
    # The table drives match(): without the contains entry, the first example
    # falls back to "No match", as it did before the tier existed.
    matcher = AnswerMatcher()
    assert matcher.match("The capital of France is Paris.", "Paris").method == "contains"
    without = tuple(entry for entry in AnswerMatcher._TIER_TABLE if entry[0] != "contains")
    monkeypatch.setattr(AnswerMatcher, "_TIER_TABLE", without)
    assert matcher.match("The capital of France is Paris.", "Paris").method == "no_match"
    assert tiers.TIERS[2] == "contains"  # the module's tuple is read once, at import


# --- contains: found -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("output", "gold", "answer_format"),
    [
        ("The capital of France is Paris.", "Paris", None),  # the example
        ("The capital of France is Paris.", "Paris", "Str"),
        ("It is Paris, not London.", "Paris", "Str"),  # the negation is on London
        ("Paris. It is not London.", "Paris", "Str"),
        ("Not London. Paris.", "Paris", "Str"),
        ("It was the Paris Agreement.", "The Paris Agreement", "Str"),
        ("The company has set a net zero target for 2050.", "net-zero", "Str"),
        ("Answer: **GHG Protocol**", "GHG Protocol", "Str"),
        ("Exports go through the Port of Santos, Brazil's largest port.", "Port of Santos", "Str"),
        ("AC/DC played.", "AC/DC", "Str"),  # a gold with its own slash
        (
            "Answer: Seller reports Scope 1, buyer reports Scope 2.",
            "Seller reports Scope 1, buyer reports Scope 2",
            "Str",
        ),  # a long gold found whole, across a comma
        ("In 2022, 82% of sites were audited.", "82%", "Float"),  # a year is another kind
        ("In 2020, 82% of 120 sites were audited.", "82%", "Float"),  # so is a count of sites
        ("Approximately 12.80 tCO2e, according to page 7.", "12.8 tCO2e", "Float"),
        ("46 sites hold ISO 14001 certification.", "46", "Int"),  # ISO 14001 is a label
        ("The figure is 2050. It covers fiscal year 2022.", "2050", "Int"),
        ("Water use fell by 15% compared with the baseline.", "15%", "Float"),
        ("Yes, the company has a net-zero target.", "Yes", "Str"),
        ("No, the company does not report Scope 3 emissions.", "No", "Str"),
        ("**Yes**, it is.", "Yes", "Str"),
    ],
)
def test_the_gold_found_in_a_longer_output_matches(matcher, output, gold, answer_format):
    result = matcher.match(output, gold, answer_format=answer_format)
    assert (result.matched, result.method) == (True, "contains"), result.reason


def test_the_number_found_is_reported(matcher):
    result = matcher.match("In 2022, 82.0% of sites were audited.", "82%", answer_format="Float")
    assert result.method == "contains" and result.output_number == "82%"
    assert result.reason == "The gold number 82% is found in the output as 82%."


# --- contains: the guards ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("output", "gold", "answer_format", "flag"),
    [
        # A negation on the gold answer.
        ("It is not Paris.", "Paris", "Str", "gold_negated"),
        ("Not Paris", "Paris", None, "gold_negated"),
        ("Paris is not correct.", "Paris", "Str", "gold_negated"),
        ("Paris is incorrect.", "Paris", "Str", "gold_negated"),
        ("The answer isn't Paris.", "Paris", "Str", "gold_negated"),
        ("Not Paris, but London.", "Paris", "Str", "gold_negated"),
        ("Paris? No.", "Paris", "Str", "gold_negated"),  # a later clause that says no
        ("Paris - wrong.", "Paris", "Str", "gold_negated"),
        ("Paris. That is not correct.", "Paris", "Str", "gold_negated"),
        ("82%? No.", "82%", "Float", None),
        ("It is not true that offsets are excluded.", "offsets are excluded", "Str",
         "gold_negated"),
        ("82% is not correct.", "82%", "Float", None),  # the sentence's number, negated
        ("It isn't 82%.", "82%", "Float", "gold_negated"),
        ("It is less than 5 in total.", "5", "Int", "gold_negated"),  # a bound
        # A second answer of the same kind beside it.
        ("Paris or London", "Paris", "Str", "second_answer"),
        ("Either Paris or Lyon.", "Paris", "Str", "second_answer"),
        ("London or Paris", "Paris", "Str", "second_answer"),
        ("Paris and London", "Paris", "Str", "second_answer"),
        ("Paris & London", "Paris", "Str", "second_answer"),
        ("Paris/London", "Paris", "Str", "second_answer"),
        ("Paris, London", "Paris", "Str", "second_answer"),
        ("It could be Paris or perhaps Lyon.", "Paris", "Str", "second_answer"),
        ("12 or 15", "15", "Int", None),  # two numbers: no single one either
        ("It rose from 75% to 82%.", "82%", "Float", "second_answer"),
        ("There were 12 sites in 2019 and 15 sites in 2020.", "15 sites", "Int",
         "second_answer"),
        ("In 2019 and 2020", "2020", "Int", "second_answer"),  # two years for a year
        ("Yes and no", "Yes", "Str", "gold_negated"),
        ("No information is given in the document.", "No", "Str", None),  # an abstention
    ],
)  # fmt: skip
def test_a_guard_rejects_the_gold_found(matcher, output, gold, answer_format, flag):
    result = matcher.match(output, gold, answer_format=answer_format)
    assert (result.matched, result.method) == (False, "no_match"), result.reason
    if flag is not None:
        assert flag in result.flags, result.reason


def test_a_long_output_is_searched_in_its_lead_only(matcher):
    # An answer in prose states its answer first; a gold found only after the first 80
    # words is mentioned, not asserted.
    passage = "The city hosts many offices and museums and has long been a centre. " * 7
    result = matcher.match(passage + "Paris is one of them.", "Paris", answer_format="Str")
    assert (result.matched, result.method) == (False, "no_match")
    assert "output_too_long" in result.flags
    # The same gold in the first sentence of the same long output is the answer.
    result = matcher.match("Paris is the city. " + passage, "Paris", answer_format="Str")
    assert (result.matched, result.method) == (True, "contains")
    # Within 40 words (or 4 per gold word) the whole output is searched.
    short = "word " * 30 + "Paris."
    assert matcher.match(short, "Paris").method == "contains"
    gold = " ".join(f"term{n}" for n in range(15))
    assert matcher.match("filler " * 40 + gold, gold).method == "contains"


def test_a_long_llm_answer_that_asserts_the_gold_matches(matcher):
    # EVOUNA's Bing Chat answer to "Who was the man behind The Chipmunks?" (72 words).
    output = (
        "The man behind The Chipmunks was\xa0Ross Bagdasarian, also known professionally by "
        "his stage name\xa0David Seville.\xa0He was an American singer, songwriter, record "
        "producer, and actor, best known for creating the cartoon band Alvin and the "
        "Chipmunks. He created the characters in 1958 and voiced all three of them, speeding "
        "up his own voice on tape."
    )
    result = matcher.match(
        output, "David Seville", question="Who was the man behind The Chipmunks?"
    )
    assert (result.matched, result.method) == (True, "contains")


@pytest.mark.parametrize(
    ("output", "gold"),
    [
        ("The answer is B.", "B"),  # an option letter would be found nearly anywhere
        ("It is the one.", "the"),
        ("All of them.", "all"),
    ],
)
def test_golds_that_mean_little_when_found_are_not_searched(matcher, output, gold):
    assert matcher.match(output, gold).method == "no_match"


def test_lists_and_single_numbers_are_left_to_their_own_tiers(matcher):
    assert matcher.match("82.0", "82%", answer_format="Float").method == "numeric"
    assert matcher.match("SSP1, SSP2 and SSP3", "['SSP1', 'SSP2', 'SSP3']").method == "list"
    # A list gold is never found piecemeal in a sentence.
    assert not matcher.match("It uses SSP1.", "['SSP1', 'SSP2']", answer_format="List").matched


def test_no_containment_on_a_question_that_is_not_answerable(matcher):
    result = matcher.match("The answer is not answerable here.", "Not answerable")
    assert result.method == "not_answerable"


def test_clauses_split_where_a_negation_stops():
    assert clauses("It is Paris, not London; but maybe Lyon.") == [
        "it is paris",
        "not london",
        "but maybe lyon",
    ]
    assert clauses("It is 3,420 - in total.") == ["it is 3,420", "in total"]


# --- the known gaps -----------------------------------------------------------------------


def test_a_unit_after_the_golds_unit_still_counts(matcher):
    result = matcher.match("5 employees total", "5 employees", answer_format="Int")
    assert result.matched and result.method == "numeric"
    assert not matcher.match("5 employees total", "6 employees", answer_format="Int").matched


def test_digits_separated_by_commas_are_a_list_unless_thousands():
    assert split_plain_list("10,20,30") == (("10", "20", "30"),)
    assert split_plain_list("3,420") == (("3,420",),)
    assert AnswerMatcher().match("10,20,30", "[10, 20, 30]", answer_format="List").matched
    assert not AnswerMatcher().match("10,20,30", "[10, 20]", answer_format="List").matched


@pytest.mark.parametrize(
    ("text", "prepared"),
    [
        ("<b>5</b>", "5"),
        ("<strong>Paris</strong>", "paris"),
        ('<span class="x">82%</span>', "82%"),
        ("a<br/>b", "a b"),
        ("5 < 6 > 4", "5 < 6 > 4"),  # bounds stay
        ("<5", "<5"),
        ("&gt;5 &amp; R&D", ">5 & r&d"),
    ],
)
def test_markup_tags_are_dropped(text, prepared):
    assert prepare(text) == prepared


def test_markup_no_longer_reads_as_a_bound(matcher):
    assert normal_forms("<b>5</b>").joined == "5"
    assert matcher.match("<b>5</b>", "5", answer_format="Int").method == "normalized"
    assert not matcher.match("<b>&gt;5</b>", "5", answer_format="Int").matched


def test_an_answer_beside_what_the_source_lacks_is_an_answer(matcher):
    result = matcher.match("Paris. The population is not mentioned.", "Paris")
    assert (result.matched, result.method, result.output_abstained) == (True, "contains", False)
    assert "output_abstained" not in result.flags
    # On a question without an answer it still declines (it says the source lacks it).
    declined = matcher.match("The population is not mentioned.", None)
    assert declined.method == "not_answerable" and declined.output_abstained


# --- free abstentions --------------------------------------------------------------------


@pytest.mark.parametrize(
    "output",
    [
        "The report does not say.",  # the three
        "This cannot be determined from the document.",
        "The document provides no information on this.",
        "The document doesn't specify the number of employees.",
        "The provided context does not contain this information.",
        "I could not find this in the report.",
        "The answer is not stated in the document.",
        "There is no mention of this in the report.",
        "It is not in the document.",
        "The report is silent on this.",
        "Not enough information to answer.",
        "Unknown.",
        "N/A",
        "I'm not sure.",
    ],
)
def test_freely_phrased_abstentions_are_not_answerable(matcher, output):
    assert declines(output)
    result = matcher.match(output, None)
    assert (result.matched, result.method, result.output_abstained) == (
        True,
        "not_answerable",
        True,
    )
    assert matcher.match(output, "Not answerable", answer_format="None").matched
    wrong = matcher.match(output, "Paris", answer_format="Str")
    assert not wrong.matched and wrong.output_abstained


@pytest.mark.parametrize(
    "output",
    [
        "No, the company does not report Scope 3 emissions.",
        "Paris is not the largest city.",
        "The report does not include Scope 3 emissions.",
        "The company has no data centres.",
        "It was caused by an unknown supplier in the northern region last year.",
        "The company did not meet its 2020 target.",
        "It does not actually contain any almonds.",
        "42",
    ],
)
def test_an_answer_holding_a_negation_is_no_abstention(matcher, output):
    assert not declines(output)
    result = matcher.match(output, None)
    assert (result.matched, result.output_abstained) == (False, False)


def test_free_abstentions_can_be_turned_off():
    strict = AnswerMatcher(abstention_patterns=False)
    assert strict.match("The report does not say.", None).method == "no_match"
    assert strict.match("Not answerable", None).method == "not_answerable"
    with pytest.raises(ValueError, match="abstention_patterns"):
        AnswerMatcher(abstention_patterns="yes")  # type: ignore[arg-type]


def test_free_abstentions_count_in_the_report():
    from opik_semantic_metrics.answers.report import markdown_report

    rows = [
        ("The report does not say.", None, "None"),
        ("This cannot be determined from the document.", "Paris", "Str"),
        ("No, the company does not report Scope 3.", "No", "Str"),
    ]
    lines = markdown_report(rows).splitlines()
    assert (
        "- Outputs that decline to answer: 2 (1 on questions that have an answer, "
        "counted wrong)." in lines
    )
    assert "- Questions that are not answerable: 1 (1 declined, counted right)." in lines


# --- a number with a scale word ----------------------------------------------------------


@pytest.mark.parametrize(
    ("output", "gold", "question", "matched"),
    [
        # The question names the scale: a bare number is read in it.
        ("26 million", "26", "How many people, in millions, live there?", True),
        ("26,000,000", "26", "How many people, in millions, live there?", True),
        ("26", "26 million", "How many people, in millions, live there?", True),
        (
            "The forest covers 322 million ha.",
            "322",
            "How many million hectares of forest are protected?",
            True,
        ),
        ("322 million ha", "322", "How many million hectares are protected?", True),
        ("4.2 billion", "4.2", "What was revenue in billions of euros?", True),
        # A different scale, or a different number, is still wrong.
        ("26 billion", "26", "How many people, in millions, live there?", False),
        ("27 million", "26", "How many people, in millions, live there?", False),
        # No scale in the question: a number is what it says.
        ("26 million", "26", "How many people live there?", False),
        ("26 million", "26", None, False),
        ("26 million", "26000000", None, True),
        # Two scales named: none is assumed.
        ("26 million", "26", "Is it in thousands or millions?", False),
    ],
)
def test_a_scale_word_against_a_bare_number(matcher, output, gold, question, matched):
    result = matcher.match(output, gold, answer_format="Float", question=question)
    assert result.matched is matched, result.reason


def test_the_scale_rule_explains_itself(matcher):
    refused = matcher.match("26 million", "26", answer_format="Float")
    assert "a scale word counts unless the question names that scale" in refused.reason
    accepted = matcher.match(
        "26 million", "26", answer_format="Float", question="How many, in millions?"
    )
    assert "read at the question's scale, x1,000,000" in accepted.reason


def test_scale_named():
    assert scale_named("How many thousand tonnes?") == 1000
    assert scale_named("What was revenue (bn)?") == 10**9
    assert scale_named("How many?") is None
    assert scale_named(None) is None
    assert scale_named("thousands or millions?") is None
