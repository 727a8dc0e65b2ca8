"""The text vocabulary's one home, and the tables that were wrong before it.

The word lists stood in five modules, and two scale tables disagreed: SemanticMatch's
flip check read "hundred" and not "bn", AnswerMatch's numbers "bn" and not "hundred".
Each test of a fix below failed on the lists as they were. Expected values are what a
reader of the texts decides, not outputs of this code.
"""

from __future__ import annotations

import ast
from decimal import Decimal
from pathlib import Path

import pytest

import opik_semantic_metrics
from opik_semantic_metrics.answers.abstentions import declines
from opik_semantic_metrics.answers.numbers import find_single_number, parse_number, scale_named
from opik_semantic_metrics.answers.tiers import AnswerMatcher
from opik_semantic_metrics.semantic.cleaning import NEGATIONS, stop_words_of
from opik_semantic_metrics.semantic.flips import changed_numbers, negates, numbers_in
from opik_semantic_metrics.semantic.stopwords import ENGLISH_STOP_WORDS as OLD_HOME
from opik_semantic_metrics.vocabulary import (
    CONTRACTION_STEMS,
    ENGLISH_STOP_WORDS,
    NEGATIONS_AS_WRITTEN,
    NEGATIONS_IN_NORMAL_FORM,
    SCALE_WORDS,
)

PACKAGE = Path(opik_semantic_metrics.__file__).parent


def _imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


@pytest.fixture(scope="module")
def matcher() -> AnswerMatcher:
    return AnswerMatcher()


# --- one home, below both metrics -------------------------------------------------------


def test_the_vocabulary_imports_nothing_of_the_package():
    imported = _imported_modules(PACKAGE / "vocabulary.py")
    assert not [name for name in imported if name.startswith("opik_semantic_metrics")]


@pytest.mark.parametrize("path", sorted((PACKAGE / "answers").glob("*.py")), ids=str)
def test_answer_match_reads_no_word_list_of_semantic_match(path):
    imported = _imported_modules(path)
    assert not [name for name in imported if name.startswith("opik_semantic_metrics.semantic")]


def test_the_old_stop_word_module_is_the_same_list():
    assert OLD_HOME is ENGLISH_STOP_WORDS


def test_semantic_match_keeps_its_40_negating_stop_words():
    # NLTK's negating stop words, written out by hand: the cleaning keeps exactly these.
    negating_stop_words = {
        "no", "nor", "not", "ain", "aren", "aren't", "couldn", "couldn't", "didn", "didn't",
        "doesn", "doesn't", "don", "don't", "hadn", "hadn't", "hasn", "hasn't", "haven",
        "haven't", "isn", "isn't", "mightn", "mightn't", "mustn", "mustn't", "needn",
        "needn't", "shan", "shan't", "shouldn", "shouldn't", "wasn", "wasn't", "weren",
        "weren't", "won", "won't", "wouldn", "wouldn't",
    }  # fmt: skip
    assert negating_stop_words == NEGATIONS
    assert len(stop_words_of("keep_negations")) == 179 - 40


def test_the_two_forms_of_the_negations_differ_only_by_apostrophes_and_stems():
    # The normal form deletes apostrophes; NLTK's split stems ("isn") are only as written.
    as_written = {word.replace("'", "") for word in NEGATIONS_AS_WRITTEN - CONTRACTION_STEMS}
    assert as_written == NEGATIONS_IN_NORMAL_FORM
    assert "can" not in CONTRACTION_STEMS  # "can" is a word of its own


# --- the scale table: one for both metrics ----------------------------------------------


def test_one_scale_table():
    assert SCALE_WORDS == {
        "hundred": 100, "thousand": 1000, "million": 10**6, "billion": 10**9,
        "bn": 10**9, "trillion": 10**12,
    }  # fmt: skip


def test_semantic_match_reads_bn():
    # Fixed: "bn" was no scale word in the flip check, so "26 bn" read as 26.
    assert numbers_in("Sales were 3 bn dollars.") == {Decimal(3 * 10**9)}
    assert (
        changed_numbers("Revenue rose to 26 bn dollars.", "Revenue rose to 26 billion dollars.")
        == 0.0
    )


def test_answer_match_reads_hundred(matcher):
    # Fixed: "hundred" was no scale word in AnswerMatch, so "5 hundred" read as 5 "hundred".
    number = parse_number("5 hundred")
    assert number is not None
    assert (number.value, number.unit, number.scaled) == (Decimal(500), "", True)
    assert str(find_single_number("They employ 5 hundred people.")) == "500 people"
    assert matcher.match("5 hundred", "500", answer_format="Int").matched


def test_a_question_about_the_hundred_largest_names_no_scale():
    # Meant: "hundred" is no scale a figure is reported in.
    assert scale_named("What share of the hundred largest firms report Scope 3?") is None
    assert scale_named("How many, in millions?") == 10**6


# --- the negations: one list, its named variants ----------------------------------------


@pytest.mark.parametrize(
    "output",
    [
        "It is nowhere near Paris.",
        "The answer ain't Paris.",
        "It mustn't be Paris.",
        "It shan't be Paris.",
    ],
)
def test_every_negation_denies_the_gold_found(matcher, output):
    # Fixed: AnswerMatch's list lacked "nowhere" and these contractions.
    result = matcher.match(output, "Paris", answer_format="Str")
    assert (result.matched, "gold_negated" in result.flags) == (False, True), result.reason


@pytest.mark.parametrize(
    "text", ["It wouldn't be 5.", "There won't be 12 sites.", "It hasn't 3 wheels."]
)
def test_every_negated_auxiliary_bounds_the_number_after_it(text):
    # Fixed: only some negated auxiliaries made the number after them no answer.
    assert find_single_number(text) is None


def test_a_negation_after_a_number_is_no_unit():
    # Fixed: "never" after a number read as its unit, where "not" did not.
    assert parse_number("5 never") is None
    assert parse_number("5 not") is None


def test_a_negated_verb_of_fact_declines_and_one_of_obligation_does_not():
    assert declines("It ain't stated in the report.")  # fixed: "ain't" was missing
    assert declines("The report doesn't say.")
    # Meant: a modal of obligation says what the report may do, not what it says.
    assert not declines("The report needn't say more.")
    assert not declines("The report shouldn't state it.")


def test_semantic_match_reads_every_contraction_as_written():
    assert negates("It ain't so.") and negates("It mightn\u2019t rain.")
    assert not negates("Nothingness is a word.")
