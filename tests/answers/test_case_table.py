"""The case table: gold, prediction, answer format, question -> matched?, by which tier.

The seed analysis's examples come first (its gap table and sections, in its order), then
more cases that must match, then cases that must NOT match. Tier 6 (semantic) is off
here, as it is by default; ``test_tiers.py`` and ``tests/metrics/test_answer_match.py``
cover it. Expected values are the behaviour the issue and the seed ask for, not outputs
of this code.
"""

from __future__ import annotations

import pytest

from opik_semantic_metrics.answers.tiers import AnswerMatcher

SCOPE_GOLD = "Seller reports Scope 1, buyer reports Scope 2"
SCOPE_VERBOSE = (
    "The selling organization reports the direct emissions from generating the electricity "
    "under scope 1, and the purchasing organization reports the emissions associated with "
    "the purchased electricity under scope 2."
)
RANK = "Rank the three largest emitters."

# fmt: off
CASES = [
    # gold, prediction, answer_format, question, matched, method
    # --- the seed analysis, in its order ---
    ("82%", "82.0", "Float", None, True, "numeric"),  # gap 1: missing % sign
    (SCOPE_GOLD, SCOPE_VERBOSE, "Str", None, False, "no_match"),  # gap 2: semantic tier off
    ("['SSP1', 'SSP2', 'SSP3']", '["SSP1", "SSP2", "SSP3"]', "List", None, True, "list"),  # 3
    ("['SSP1', 'SSP2']", '["SSP1", "SSP2"]', "List", None, True, "list"),  # gap 3 table
    ("netzero", "net-zero", "Str", None, True, "normalized"),  # gaps 4 and 5
    ("netzero carbon", "net-zero carbon", "Str", None, True, "normalized"),
    ("Net Zero", "net zero", "Str", None, True, "normalized"),  # capitalisation
    ("answer", "  answer \n", "Str", None, True, "exact"),  # gap 6: whitespace
    ("°C", "C", None, None, True, "normalized"),  # gap 7: units
    ("kWh", "kwh", None, None, True, "normalized"),
    ("No", "Not answerable", "Str", None, False, "no_match"),  # gap 8 (flagged)
    ("12.8", "12.80", "Float", None, True, "numeric"),  # gap 9: precision
    ("['A', 'B', 'C']", "['C', 'B', 'A']", "List", None, True, "list"),  # gap 10: unordered
    ("['A', 'B', 'C']", "['C', 'B', 'A']", "List", RANK, False, "no_match"),  # ordered
    ("Not answerable", "Not answerable", "None", None, True, "exact"),  # tier 1 of the seed
    ("Not answerable", "Fail to answer", "None", None, True, "not_answerable"),
    (None, "Not answerable", "None", None, True, "not_answerable"),  # gold None
    # --- more that must match ---
    ("82%", "82", "Float", None, True, "numeric"),
    ("82%", "82.00%", "Float", None, True, "numeric"),
    ("82%", "82 percent", "Float", None, True, "normalized"),
    ("82%", "The share is 82 percent.", "Float", None, True, "contains"),
    ("12.8", "approximately 12.8 tCO2e", "Float", None, True, "contains"),
    ("12.8", "12.81", "Float", None, True, "numeric"),  # exactly the tolerance away
    ("0.5", ".5", "Float", None, True, "numeric"),
    ("1200", "1.2e3", "Int", None, True, "numeric"),
    ("1,200,000", "1.2 million", "Int", None, True, "numeric"),
    ("3,420", "3420", "Int", None, True, "normalized"),  # separators go in normal form
    ("-5", "\u22125", "Int", None, True, "normalized"),  # Unicode minus
    ("+7", "7", "Int", None, True, "normalized"),  # a plus sign is punctuation
    ("25°C", "25 degrees Celsius", None, None, True, "normalized"),
    ("25 °C", "25C", None, None, True, "normalized"),
    ("12 kWh", "12 kilowatt-hours", None, None, True, "normalized"),
    ("40 MWh", "40 megawatt hours", None, None, True, "normalized"),
    # A unit's spelling after a number that is not written as the gold's ("25.0").
    ("25°C", "25.0 degrees Celsius", "Float", None, True, "numeric"),
    ("100.0 kWh", "100 kilowatt hours", "Float", None, True, "numeric"),
    ("1000.0 kWh", "1,000 kilowatt hours", "Float", None, True, "numeric"),
    # The unit ends at the first stop word, in a whole answer as in a sentence.
    ("12 sites", "12 sites were audited", "Int", None, True, "contains"),
    ("12 kg", "12 kg of flour", "Float", None, True, "contains"),
    ("5", "It is equal to 5", "Int", None, True, "contains"),
    ("$5", "$ 5", None, None, True, "normalized"),
    ("U.S.", "US", "Str", None, True, "normalized"),
    ("Paris Agreement", "The Paris Agreement", "Str", None, True, "normalized"),
    ("co-operation", "cooperation", "Str", None, True, "normalized"),
    ("net zero", "net-zero", "Str", None, True, "normalized"),  # hyphen as a space
    ("\u201cquoted\u201d", '"quoted"', "Str", None, True, "normalized"),  # curly quotes
    ("Yes", "yes.", "Str", None, True, "normalized"),
    ("\ufb01nance", "finance", "Str", None, True, "normalized"),  # NFKC ligature
    ("CO\u2082", "CO2", "Str", None, True, "normalized"),  # NFKC subscript
    ("don't know", "dont know", "Str", None, True, "normalized"),
    ("['SSP1', 'SSP2', 'SSP3']", "SSP1, SSP2 and SSP3", "List", None, True, "list"),
    ("['SSP1', 'SSP2', 'SSP3']", "SSP1, SSP2, and SSP3.", "List", None, True, "list"),
    ("SSP1; SSP2", "SSP2, SSP1", "List", None, True, "list"),
    ("[1.5, 2]", "[1.50, 2.0]", "List", None, True, "list"),
    ("['82%', '14%']", "[82, 14]", "List", None, True, "list"),
    ("['Net-zero', 'Scope 3']", "['scope 3', 'netzero']", "List", None, True, "list"),
    ("['SSP1']", "SSP1", None, None, True, "list"),
    ("['Research and Development', 'Sales']", "Research and Development, Sales", "List", None,
     True, "list"),
    ("['A', 'B']", "- A\n- B", "List", None, True, "list"),
    ("['A', 'B']", "[A, B]", "List", None, True, "list"),  # unquoted, read as plain
    ("[2019, 2020, 2021]", "2019, 2020, 2021", "List", "List them in chronological order.",
     True, "list"),
    ("['A', 'B', 'C']", "['C', 'B', 'A']", "List", "What do we do in order to comply?", True,
     "list"),  # "in order to" is not about order
    ("[['a', 1], ['b', 2]]", "[['b', 2], ['a', 1.0]]", "List", None, True, "list"),  # nested
    ("Not answerable", "The question cannot be answered from the document.", "None", None, True,
     "not_answerable"),
    (None, "I don't know.", None, None, True, "not_answerable"),
    ("Unanswerable", "Not answerable", None, None, True, "not_answerable"),
    # --- must NOT match ---
    ("82%", "28%", "Float", None, False, "no_match"),
    ("1.3%", "13%", "Float", None, False, "no_match"),
    ("['SSP1', 'SSP2', 'SSP3']", "['SSP1', 'SSP2']", "List", None, False, "no_match"),  # missing
    ("['SSP1', 'SSP2']", "['SSP1', 'SSP2', 'SSP3']", "List", None, False, "no_match"),  # extra
    ("SSP1, SSP2, SSP3", "SSP1 and SSP3", "List", None, False, "no_match"),
    ("['A', 'B', 'C']", "['A', 'B', 'B']", "List", None, False, "no_match"),  # multiset
    ("['A', 'B']", "['A B']", "List", None, False, "no_match"),  # structure, not text
    ("bad", "not bad", "Str", None, False, "no_match"),
    ("12.8", "12.82", "Float", None, False, "no_match"),  # outside the tolerance
    ("82%", "0.82", "Float", None, False, "no_match"),  # percent-as-fraction is off
    ("5", "-5", "Int", None, False, "no_match"),
    ("$5", "\u20ac5", None, None, False, "no_match"),  # currencies differ
    ("12 kg", "12 t", None, None, False, "no_match"),  # units differ
    ("82%", "82 kg", "Float", None, False, "no_match"),
    ("19.5 million", "19.5", "Float", None, False, "no_match"),  # scale word counts
    ("1,200", "1.2", "Int", None, False, "no_match"),
    ("2020", "In 2019 and 2020", "Int", None, False, "no_match"),  # two numbers
    ("1-2", "12", None, None, False, "no_match"),  # a hyphen between digits separates
    ("Scope 1", "Scope 2", "Str", None, False, "no_match"),
    ("A", "An", "Str", None, False, "no_match"),  # single words keep their article
    ("Vitamin A", "Vitamin", "Str", None, False, "no_match"),  # only a leading one goes
    ("net zero", "zero net", "Str", None, False, "no_match"),
    ("Yes", "No", "Str", None, False, "no_match"),
    ("Paris", "Not answerable", "Str", None, False, "no_match"),  # abstention on an answer
    ("Not answerable", "42", "None", None, False, "no_match"),  # answer on no answer
    (None, "Paris", None, None, False, "no_match"),
    ("['SSP1', 'SSP2']", "SSP1 or SSP2", "List", None, False, "no_match"),
    # A number the sentence bounds or negates is not its answer.
    ("5", "It isn't 5", "Int", None, False, "no_match"),
    ("5", "It is not equal to 5", "Int", None, False, "no_match"),
    ("5", "up to 5", "Int", None, False, "no_match"),
    ("5", "a maximum of 5", "Int", None, False, "no_match"),
    ("5", "5 at most", "Int", None, False, "no_match"),
    ("5", "5 minimum", "Int", None, False, "no_match"),
    ("5", "The value is >5", "Int", None, False, "no_match"),
    # A bound alone: read as punctuation, ">5" was "5" in normal form.
    ("5", ">5", "Int", None, False, "no_match"),
    ("5", "\u2264 5", None, None, False, "no_match"),
    ("-5", "> -5", None, None, False, "no_match"),
    ("5", "5+", "Int", None, False, "no_match"),
    ("> 5", ">5", None, None, True, "normalized"),
    ("5 years", "It took 5+ years", "Int", None, False, "no_match"),
]
# fmt: on


def _case_id(case: tuple) -> str:
    gold, prediction, answer_format = (str(value)[:20] for value in case[:3])
    return f"{gold}|{prediction}|{answer_format}"


def test_the_table_has_60_cases_beyond_the_seeds_own():
    seed_cases = 17
    assert len(CASES) - seed_cases >= 60
    assert sum(not matched for *_, matched, _ in CASES) >= 25


@pytest.fixture(scope="module")
def matcher() -> AnswerMatcher:
    return AnswerMatcher()


@pytest.mark.parametrize(
    ("gold", "prediction", "answer_format", "question", "matched", "method"),
    CASES,
    ids=[_case_id(case) for case in CASES],
)
def test_case(matcher, gold, prediction, answer_format, question, matched, method):
    result = matcher.match(prediction, gold, answer_format=answer_format, question=question)
    assert (result.matched, result.method) == (matched, method), result.reason
    assert result.reason
