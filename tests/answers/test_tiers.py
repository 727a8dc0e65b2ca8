"""AnswerMatcher: options, flags, the model-free semantic tier, and the bad-input matrix."""

from __future__ import annotations

import difflib
import math

import numpy
import pandas
import pytest
import torch

from opik_semantic_metrics.answers.lists import MAX_LIST_ITEMS, python_value
from opik_semantic_metrics.answers.tiers import (
    DEFAULT_ABSTENTIONS,
    METHODS,
    AnswerMatcher,
    keyword_coverage,
)
from opik_semantic_metrics.errors import InputError, ScorerError

SCOPE_GOLD = "Seller reports Scope 1, buyer reports Scope 2"
SCOPE_VERBOSE = (
    "The selling organization reports the direct emissions from generating the electricity "
    "under scope 1, and the purchasing organization reports the emissions associated with "
    "the purchased electricity under scope 2."
)
MEGABYTE = 1_000_000


@pytest.fixture(scope="module")
def matcher() -> AnswerMatcher:
    return AnswerMatcher()


# --- results explain themselves ---------------------------------------------------------


def test_result_carries_normal_forms_numbers_and_reason(matcher):
    result = matcher.match("82.0", "82%", answer_format="Float")
    assert result.method == "numeric" and result.matched
    assert (result.output_number, result.reference_number) == ("82", "82%")
    assert (result.output_normalized, result.reference_normalized) == ("82.0", "82 %")
    assert result.reason == "Numbers equal within ±0.01: 82 and 82%."
    assert result.method in METHODS


@pytest.mark.parametrize(
    ("output", "reference"),
    [("1e-3", "1e3"), (".5", "5"), ("- 5", "5"), ("10\u00b2", "102"), ("\u20a95", "\u20bd5")],
)
def test_different_numbers_do_not_match_as_text(matcher, output, reference):
    result = matcher.match(output, reference, answer_format="Float")
    assert (result.matched, result.method) == (False, "no_match")


@pytest.mark.parametrize(
    ("output", "reference", "matched"),
    [
        # A sentence's number keeps its unit, currency and sign: they must agree.
        ("It weighs 12 kg.", "12 t", False),
        ("Answer: 12 t", "12 kg", False),
        ("The cost was €5.", "$5", False),
        ("Revenue was 5 million euros.", "$5 million", False),
        ("The change was -$5 million.", "$5 million", False),
        ("It weighs 12 kg.", "12 kg", True),
        ("The answer is 12.", "12 kg", True),  # a dropped unit, as in a short answer
        ("It cost $5 in total.", "$5", True),
        ("About 82 percent of sites were audited.", "82%", True),
        ("82 percent of sites", "82%", True),  # a phrase after the number, not a unit
        ("82% of sites", "82%", True),
        ("12 in", "12 cm", False),  # one word after the number is its unit
        # A bound or a negation is not the number.
        ("Not 5", "5", False),
        ("It is less than 5.", "5", False),
        ("82% or more", "82%", False),
        ("There were at least 3 sites.", "3", False),
    ],
)
def test_a_number_in_a_sentence_is_read_with_its_unit_and_bounds(
    matcher, output, reference, matched
):
    result = matcher.match(output, reference, answer_format="Float")
    assert result.matched is matched, result.reason


@pytest.mark.parametrize(
    ("output", "reference"),
    [
        ("1e99999", "1"),
        ("1e10000", "1"),
        ("1e-12345", "12345"),
        ("1_000", "1"),
        ("1920x1080", "1920"),
        ("0x10", "0"),
    ],
)
def test_a_number_that_cannot_be_read_in_full_is_not_its_first_digits(matcher, output, reference):
    result = matcher.match(output, reference, answer_format="Float")
    assert (result.matched, result.output_number) == (False, None)


def test_a_huge_number_is_shown_briefly(matcher):
    result = matcher.match("0.5", "1e9999", answer_format="Float")
    assert result.reference_number == "1e+9999"
    assert result.reason == "No match: numbers differ: 0.5 and 1e+9999 (tolerance ±0.01)."


def test_no_match_reason_says_what_differed(matcher):
    assert (
        "numbers differ: 28% and 82%" in matcher.match("28%", "82%", answer_format="Float").reason
    )
    listed = matcher.match("['SSP1']", "['SSP1', 'SSP2']", answer_format="List")
    assert "1 of 2 gold items matched" in listed.reason
    assert listed.ordered is False


def test_abstention_on_an_answerable_question_is_flagged(matcher):
    result = matcher.match("Not answerable", "No", answer_format="Str")
    assert not result.matched and result.output_abstained and not result.gold_not_answerable
    assert "output_abstained" in result.flags
    assert "declines to answer but the question has an answer" in result.reason


def test_answer_on_an_unanswerable_question_is_flagged(matcher):
    result = matcher.match("Paris", None)
    assert not result.matched and result.gold_not_answerable and not result.output_abstained
    assert "not answerable but the output gives an answer" in result.reason


def test_a_long_answer_that_mentions_an_abstention_phrase_is_an_answer(matcher):
    answer = "The figure is not mentioned in the summary, " + "but the annex gives it " * 10
    assert not matcher.match(answer, "42").output_abstained
    assert matcher.match("The amount is not mentioned.", "42").output_abstained


# --- options ---------------------------------------------------------------------------


def test_tolerance_options():
    assert AnswerMatcher(tolerance=0.5).match("13.2", "12.8").matched
    assert AnswerMatcher(tolerance=numpy.float64(0.5)).match("13.2", "12.8").matched
    assert AnswerMatcher(relative_tolerance=numpy.float32(0.25)).match("1.2", "1").matched
    assert not AnswerMatcher(tolerance=0.0).match("12.81", "12.8").matched
    relative = AnswerMatcher(tolerance=0.0, relative_tolerance=0.05)
    assert relative.match("1040", "1000").matched
    assert not relative.match("1060", "1000").matched


def test_relative_tolerance_is_relative_to_the_larger_number():
    # As documented: |a - b| <= relative_tolerance * max(|a|, |b|). 5% of 1052 is 52.6
    # and 5% of 1000 is 50, so the difference 52 matches only against the larger.
    relative = AnswerMatcher(tolerance=0.0, relative_tolerance=0.05)
    for output, reference in [("1052", "1000"), ("1000", "1052"), ("-1000", "-1052")]:
        result = relative.match(output, reference, answer_format="Int")
        assert result.matched and result.method == "numeric", (output, reference)
        assert "or 5.00% of the larger: " in result.reason
    assert not relative.match("1053", "1000").matched  # 52.65 < 53


def test_percent_as_fraction_only_when_asked():
    assert not AnswerMatcher().match("0.82", "82%", answer_format="Float").matched
    result = AnswerMatcher(percent_as_fraction=True).match("0.82", "82%", answer_format="Float")
    assert result.matched and result.method == "numeric"


@pytest.mark.parametrize(
    ("ordered", "question", "expected"),
    [
        (None, None, True),
        (None, "Which is first?", False),
        (None, "List the top 3 risks.", False),
        (None, "What sequence of steps is described?", False),
        (None, "Which risks are ranked highest?", False),
        (None, "Which border regions?", True),  # "order" inside a word does not count
        (None, "Which topics?", True),  # nor does "top"
        (True, None, False),
        (False, "Rank them.", True),
    ],
)
def test_list_order(ordered, question, expected):
    result = AnswerMatcher(ordered=ordered).match(
        "['C', 'B', 'A']", "['A', 'B', 'C']", question=question
    )
    assert result.matched is expected
    assert result.ordered is (not expected)


def test_custom_abstentions():
    matcher = AnswerMatcher(abstentions=["no idea"])
    assert matcher.match("No idea.", None).method == "not_answerable"
    assert matcher.match("Not answerable", None).method == "no_match"


def test_abstentions_from_a_generator_are_read_once():
    matcher = AnswerMatcher(abstentions=(phrase for phrase in ["no idea"]))
    assert matcher.abstentions == ("no idea",)
    assert matcher.match("No idea.", None).method == "not_answerable"


def test_numpy_settings_are_read_as_python_values():
    # NumPy bools and floats, as a sweep over np.linspace or a config array gives them.
    matcher = AnswerMatcher(
        ordered=numpy.True_,
        percent_as_fraction=numpy.True_,
        semantic="keywords",
        semantic_threshold=numpy.float32(0.5),
    )
    assert (matcher.ordered, matcher.percent_as_fraction) == (True, True)
    assert matcher.semantic_threshold == 0.5
    assert matcher.match("82%", "0.82", answer_format="Float").matched


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"tolerance": -0.1}, "tolerance"),
        ({"tolerance": math.nan}, "tolerance"),
        ({"tolerance": "0.01"}, "tolerance"),
        ({"relative_tolerance": math.inf}, "relative_tolerance"),
        # Ints past a float's range: math.isfinite would raise OverflowError.
        pytest.param({"tolerance": 10**400}, "tolerance", id="tolerance=10**400"),
        pytest.param(
            {"relative_tolerance": 10**400}, "relative_tolerance", id="relative_tolerance=10**400"
        ),
        ({"ordered": "yes"}, "ordered"),
        ({"abstentions": []}, "abstention"),
        ({"abstentions": "not answerable"}, "abstentions"),
        ({"abstentions": ["ok", ""]}, "abstentions"),
        # "-" normalises to nothing, and made every output with a word an abstention.
        ({"abstentions": ["Not answerable", "-"]}, "abstention phrase to hold a word"),
        ({"abstentions": ["?!"]}, "abstention phrase to hold a word"),
        ({"semantic": "bertscore"}, "semantic"),
        ({"semantic": 3}, "semantic"),
        ({"semantic": len}, "semantic_threshold"),
        ({"semantic": "keywords", "semantic_threshold": 1.5}, r"\(0, 1\]"),
        ({"semantic": len, "semantic_threshold": math.nan}, "finite"),
        pytest.param(
            {"semantic": "keywords", "semantic_threshold": 10**400},
            "finite",
            id="keywords-threshold=10**400",
        ),
        pytest.param(
            {"semantic": len, "semantic_threshold": 10**400}, "finite", id="threshold=10**400"
        ),
        # Past Python's limit on an int's digits written as text: the message still names it.
        pytest.param(
            {"semantic": len, "semantic_threshold": 10**5000},
            "finite number, got an int of about 5001 digits",
            id="threshold=10**5000",
        ),
        pytest.param(
            {"ordered": 10**5000}, "got an int of about 5001 digits", id="ordered=10**5000"
        ),
        pytest.param(
            {"relative_tolerance": 10**5000},
            "relative_tolerance` to be a finite number >= 0, got an int of about 5001 digits",
            id="relative_tolerance=10**5000",
        ),
        # bool("no") is True: the option was switched on.
        pytest.param(
            {"percent_as_fraction": "no"},
            "`percent_as_fraction` to be True or False, got 'no'",
            id="percent_as_fraction='no'",
        ),
        # A share of the larger number: 5 meant as 5% let 1 match -3.
        ({"relative_tolerance": 5}, "`relative_tolerance` to be a fraction below 1"),
        ({"relative_tolerance": 1.0}, "`relative_tolerance` to be a fraction below 1"),
        ({"ordered": "False"}, "`ordered` to be True or False, got 'False'"),
        # A generator was used up by the check, then reported as empty.
        pytest.param(
            {"abstentions": None}, "`abstentions` to be a list of non-empty strings, got None"
        ),
        pytest.param({"abstentions": 5}, "`abstentions` to be a list of non-empty strings"),
        # A threshold without a scorer was ignored: tier 6 stayed off without a word.
        ({"semantic_threshold": 0.8}, "`semantic_threshold` is read only with a `semantic`"),
    ],
)
def test_bad_settings_raise_value_error(kwargs, message):
    with pytest.raises(ValueError, match=message):
        AnswerMatcher(**kwargs)


def test_default_abstentions_include_the_seeds():
    assert {"not answerable", "fail to answer"} <= set(DEFAULT_ABSTENTIONS)


# --- semantic tier without a model ------------------------------------------------------


def test_keyword_coverage_of_the_seeds_verbose_answer_is_partial():
    # The seed's keyword rule does not match its own example: "seller" and "buyer" are
    # written "selling organization" and "purchasing organization".
    matcher = AnswerMatcher(semantic="keywords")
    result = matcher.match(SCOPE_VERBOSE, SCOPE_GOLD, answer_format="Str")
    assert (result.matched, result.semantic_score) == (False, 0.5)
    half = AnswerMatcher(semantic="keywords", semantic_threshold=0.5)
    assert half.match(SCOPE_VERBOSE, SCOPE_GOLD, answer_format="Str").method == "semantic"


def test_keywords_match_a_verbose_answer_that_holds_every_gold_word():
    matcher = AnswerMatcher(semantic="keywords")
    result = matcher.match(
        "The seller reports its direct emissions under Scope 1; the buyer reports the "
        "purchased electricity under Scope 2.",
        SCOPE_GOLD,
        answer_format="Str",
    )
    assert result.method == "semantic" and result.semantic_score == 1.0


def test_keyword_coverage_counts_prefixes_of_output_words():
    assert keyword_coverage(["reports", "emissions"], ["report", "emission", "scope"]) == 2 / 3
    assert keyword_coverage(["anything"], ["a", "of", "the"]) is None


@pytest.mark.parametrize(
    ("gold", "output", "answer_format", "flag"),
    [
        ("bad", "not bad", "Str", "negation_mismatch"),
        ("The board approved the plan", "The board never approved the plan", "Str",
         "negation_mismatch"),
        ("Reported under Scope 1", "Reported under Scope 2", "Str", "gold_number_missing"),
    ],
)  # fmt: skip
def test_semantic_guards(gold, output, answer_format, flag):
    always = AnswerMatcher(semantic=lambda output, reference: 1.0, semantic_threshold=0.5)
    result = always.match(output, gold, answer_format=answer_format)
    assert not result.matched and flag in result.flags and result.semantic_score is None


@pytest.mark.parametrize(
    ("gold", "output", "answer_format"),
    [
        ("82%", "28%", "Str"),  # a number gold
        ("82%", "eighty-three", None),
        ("Paris", "Lyon", "Int"),
        ("Paris", "Lyon", "Float"),
        ("['A']", "['B']", None),  # a list gold
        ("Paris", "Lyon", "List"),
        ("Paris", "Not answerable", "Str"),  # an abstention
        (None, "Paris", "Str"),  # not answerable
        ("Paris", "!!!", "Str"),  # nothing left in normal form
    ],
)
def test_semantic_tier_stays_out_of_what_it_cannot_judge(gold, output, answer_format):
    calls = []

    def scorer(output: str, reference: str) -> float:
        calls.append((output, reference))
        return 1.0

    matcher = AnswerMatcher(semantic=scorer, semantic_threshold=0.5)
    assert not matcher.match(output, gold, answer_format=answer_format).matched
    assert calls == []


def test_a_plain_callable_scorer():
    def ratio(output: str, reference: str) -> float:
        return difflib.SequenceMatcher(None, output.lower(), reference.lower()).ratio()

    matcher = AnswerMatcher(semantic=ratio, semantic_threshold=0.8)
    close = matcher.match(
        "Sustainability committe", "Sustainability committee", answer_format="Str"
    )
    assert close.method == "semantic" and close.semantic_score == pytest.approx(
        ratio("Sustainability committe", "Sustainability committee")
    )
    assert not matcher.match("Audit committee", "Sustainability committee").matched


@pytest.mark.parametrize(
    "returned",
    [
        math.nan,
        math.inf,
        "0.9",
        pytest.param(10**400, id="10**400"),
        # Past Python's limit on an int's digits written as text: the message must not fail.
        pytest.param(10**5000, id="10**5000"),
    ],
)
def test_a_scorer_returning_a_non_number_is_a_scorer_error(returned):
    matcher = AnswerMatcher(semantic=lambda output, reference: returned, semantic_threshold=0.5)
    with pytest.raises(
        ScorerError, match=r"semantic scorer <lambda> returned .*not a finite score"
    ):
        matcher.match("a large city", "a big town", answer_format="Str")


def test_a_scorer_that_raises_is_a_scorer_error_naming_it():
    def flaky(output, reference):
        raise RuntimeError("model server down")

    matcher = AnswerMatcher(semantic=flaky, semantic_threshold=0.5)
    with pytest.raises(ScorerError, match="scorer flaky failed: RuntimeError: model server down"):
        matcher.match("a large city", "a big town", answer_format="Str")


def test_a_scorer_that_cannot_judge_returns_none_and_nothing_matches():
    matcher = AnswerMatcher(semantic=lambda output, reference: None, semantic_threshold=0.5)
    result = matcher.match("a large city", "a big town", answer_format="Str")
    assert (result.matched, result.method) == (False, "no_match")
    assert "semantic_unreadable" in result.flags and result.semantic_score is None


# --- bad input --------------------------------------------------------------------------


def test_an_answer_format_that_repr_cannot_write_is_an_input_error(matcher):
    with pytest.raises(InputError, match="got an int of about 5001 digits"):
        matcher.match("1", "1", answer_format=10**5000)


@pytest.mark.parametrize(
    ("output", "flag"),
    [(None, "output_missing"), (math.nan, "output_not_finite"), (-math.inf, "output_not_finite")],
)
def test_no_output_is_a_defined_no_match(matcher, output, flag):
    result = matcher.match(output, "82%", answer_format="Float")
    assert (result.matched, result.method) == (False, "no_match")
    assert flag in result.flags and "no answer to compare" in result.reason
    assert not matcher.match(output, None).matched  # even where the gold is not answerable


@pytest.mark.parametrize(
    "output",
    # pandas' empty cells (nullable and Arrow-backed columns) and blank text, as None;
    # zero-width and control characters are blank too (a stray U+200B in a cell).
    [pandas.NA, pandas.NaT, "", "  \n", "\u200b", "\ufeff \x00"],
)
def test_an_empty_cell_or_blank_output_is_a_missing_answer(matcher, output):
    result = matcher.match(output, "82%", answer_format="Float")
    assert (result.matched, result.method) == (False, "no_match")
    assert "output_missing" in result.flags and "no answer to compare" in result.reason
    assert not matcher.match(output, output).matched  # a blank output never matches


@pytest.mark.parametrize(
    "reference", [None, math.nan, pandas.NA, pandas.NaT, "", " ", "\u200b\u2060"]
)
def test_missing_gold_means_not_answerable(matcher, reference):
    result = matcher.match("Not answerable", reference)
    assert result.method == "not_answerable" and result.gold_not_answerable
    wrong = matcher.match("82", reference, answer_format="Int")
    assert not wrong.matched and wrong.gold_not_answerable


@pytest.mark.parametrize(
    ("output", "reference", "method"),
    [
        (82, "82%", "numeric"),
        (82.0, "82", "numeric"),
        ("82", 82, "exact"),
        (0.1, "0.10", "numeric"),
        (3420, "3,420", "normalized"),
        (True, "true", "normalized"),
        (["SSP1", "SSP2"], "['SSP1', 'SSP2']", "exact"),
        (("SSP2", "SSP1"), "SSP1, SSP2", "list"),
        (["82%", 14], [82, "14"], "list"),
        ([], "[]", "exact"),
    ],
)
def test_numbers_and_python_lists_are_answers(matcher, output, reference, method):
    result = matcher.match(output, reference, answer_format="List" if method == "list" else None)
    assert (result.matched, result.method) == (True, method)


@pytest.mark.parametrize(
    ("output", "reference", "answer_format", "method"),
    [
        # NumPy 2's repr of a float64 ("np.float64(0.5)") is not a number's text.
        (numpy.float64(0.5), "0.5", None, "exact"),
        ("0.5", numpy.float64(0.5), None, "exact"),
        (numpy.int64(3420), "3,420", None, "normalized"),
        (numpy.float32(82.0), "82%", "Float", "numeric"),
        (numpy.bool_(True), "true", None, "normalized"),
        (numpy.array(["SSP1", "SSP2"]), "['SSP1', 'SSP2']", None, "exact"),
        # Its text is written from the values read, under NumPy 1 and 2 alike.
        ([numpy.float64(0.5), numpy.int64(2)], "[0.5, 2]", "List", "exact"),
        (torch.tensor(2.5), "2.5", None, "exact"),
    ],
)
def test_numpy_and_torch_values_are_read_as_python_values(
    matcher, output, reference, answer_format, method
):
    result = matcher.match(output, reference, answer_format=answer_format)
    assert (result.matched, result.method) == (True, method)


@pytest.mark.parametrize(
    "array", [numpy.zeros(10**6), torch.zeros(2, 10**6)], ids=["numpy", "torch 2-d"]
)
def test_a_huge_array_is_refused_from_its_first_values_only(matcher, array):
    # Converting millions of values to Python would take seconds and gigabytes, only for
    # the list to be refused: enough of them to be refused are converted.
    assert python_value(array) == [0.0] * (MAX_LIST_ITEMS + 1)
    with pytest.raises(InputError, match=f"more than {MAX_LIST_ITEMS} values"):
        matcher.match(array, "[1]", answer_format="List")
    assert python_value(numpy.zeros((2, 3))) == [[0.0] * 3] * 2  # small ones keep their shape


@pytest.mark.parametrize(
    "answer",
    [[10**5000], [10**400], (10**400, "a"), ("a", [10**61])],
    ids=["10**5000", "10**400", "tuple", "nested"],
)
def test_a_list_holding_a_number_of_too_many_digits_is_an_input_error(matcher, answer):
    # As an int of that size alone: no answer's number has that many digits (and repr()
    # cannot even write an int of over 4,300).
    with pytest.raises(InputError, match="a number of more than 60 digits"):
        matcher.match(answer, "[1]")


@pytest.mark.parametrize(
    "tensor",
    [torch.empty(3, device="meta"), torch.tensor([1.0, 2.0]).to_sparse()],
    ids=["meta", "sparse"],
)
def test_a_tensor_whose_values_cannot_be_read_is_an_input_error(matcher, tensor):
    with pytest.raises(InputError, match="Tensor whose values cannot be read"):
        matcher.match(tensor, "[1, 2]")


def test_a_numpy_nan_output_is_a_defined_no_match(matcher):
    result = matcher.match(numpy.float64("nan"), "1")
    assert (result.matched, result.flags) == (False, ("output_not_finite",))


def test_list_literal_integers_of_too_many_digits_are_compared_as_text(matcher):
    # A text is always an answer: its list reading fails, and it is read as text.
    output = "[" + "1" * 401 + "]"
    result = matcher.match(output, "[1]", answer_format="List")
    assert (result.matched, result.method) == (False, "no_match")
    assert matcher.match(output, output, answer_format="List").matched


@pytest.mark.parametrize(
    ("output", "reference", "message"),
    [
        ({"answer": 1}, "1", "output to be a string, a number, a list or None, got dict"),
        ({1, 2}, "1", "got set"),
        (b"82", "82", "got bytes"),
        (memoryview(b"82"), "82", "got memoryview"),
        (["\ud800"], ["\ud800"], "Expected a list item to be valid Unicode text"),
        ("x", numpy.array(["a", "caf\udce9"]), "Expected a list item to be valid Unicode text"),
        (object(), "x", "got object"),
        ("x", {"a": 1}, "reference to be a string, a number, a list or None, got dict"),
        ("x", math.inf, "got the number inf"),
        ("x", 10**70, "at most 60 digits"),
        ([{"a": 1}], "x", "elements other than"),
        ([[[[["deep"]]]]], "x", "nested deeper than 4"),
        (list(range(500)), "x", "more than 200 values"),
    ],
)
def test_what_is_not_an_answer_is_an_input_error(matcher, output, reference, message):
    with pytest.raises(InputError, match=message):
        matcher.match(output, reference)


@pytest.mark.parametrize(
    "answer_format", ["str", " FLOAT ", "none", None, "", " ", float("nan"), pandas.NA]
)
def test_answer_formats_are_read_case_insensitively(matcher, answer_format):
    # NaN, NA: pandas reads an empty cell, and the text "None", as NaN (NA in nullable columns).
    assert matcher.match("a", "a", answer_format=answer_format).matched


@pytest.mark.parametrize("answer_format", ["string", "Number", 3])
def test_unknown_answer_formats_are_input_errors(matcher, answer_format):
    with pytest.raises(InputError) as error:
        matcher.match("a", "a", answer_format=answer_format)
    assert str(error.value).startswith(
        "Expected `answer_format` to be one of Str, Int, Float, List, None (the string 'None': "
        "not answerable), or Python's None for unknown, got "
    )


@pytest.mark.parametrize(
    "text",
    [
        "word " * (MEGABYTE // 5),
        "1" * MEGABYTE,
        "1," * (MEGABYTE // 2),
        "a-" * (MEGABYTE // 2),
        "-" * MEGABYTE,
        "%" * MEGABYTE,
        "[" * MEGABYTE,
        "[" * (MEGABYTE // 2) + "]" * (MEGABYTE // 2),
        "['a', " * (MEGABYTE // 6) + "]",
        "not answerable " * (MEGABYTE // 15),
    ],
    ids=["words", "digits", "commas", "hyphens", "dashes", "percents", "open", "nested",
         "long-list", "abstentions"],
)  # fmt: skip
def test_megabyte_inputs_give_a_defined_answer(text):
    # Correctness only: benchmarks/answer_match_speed.py measures the time they take.
    matcher = AnswerMatcher(semantic="keywords")
    for answer_format in ("Str", "Float", "List"):
        assert not matcher.match(text, "['a', 'b']", answer_format=answer_format).matched
    assert not matcher.match("82%", text, answer_format="Float").matched
    assert matcher.match(text, text).method == "exact"


def test_megabyte_list_text_is_flagged_not_read(matcher):
    result = matcher.match("[" + "'a', " * 200_000 + "]", "['a']", answer_format="List")
    assert "list_too_long" in result.flags


def test_deeply_nested_list_text_is_flagged_not_read(matcher):
    result = matcher.match("[" * 10_000 + "]" * 10_000, "['a']", answer_format="List")
    assert "list_too_deep" in result.flags and not result.matched


def test_the_number_read_from_a_sentence_is_reported(matcher):
    result = matcher.match("It weighs 12 kg.", "12 kg", answer_format="Float")
    assert (result.matched, result.output_number, result.reference_number) == (
        True,
        "12 kg",
        "12 kg",
    )


@pytest.mark.parametrize(
    ("output", "reference", "matched"),
    [
        ("25 degrees Celsius", "25°C", True),
        ("50 per cent", "50%", True),
        # A unit's spelling is read as the unit only after a number.
        ("Celsius", "C", False),
        ("Fahrenheit", "F", False),
        ("Vitamin Celsius", "Vitamin C", False),
    ],
)
def test_unit_spellings_are_units_only_after_a_number(matcher, output, reference, matched):
    assert matcher.match(output, reference, answer_format="Str").matched is matched


@pytest.mark.parametrize(
    ("output", "reference", "matched"),
    [
        ("3/4", "3 / 4", True),
        ("½", "1/2", True),
        ("3-4", "3 4", True),  # a hyphen between digits separates, as a space does
        # An operator between digits is part of the answer.
        ("3-4", "3/4", False),
        ("2+3", "2-3", False),
        ("10-2", "10²", False),
        ("½", "1-2", False),
        ("3:1", "3-1", False),
    ],
)
def test_operators_between_digits_are_kept(matcher, output, reference, matched):
    assert matcher.match(output, reference, answer_format="Str").matched is matched


@pytest.mark.parametrize("gold", ["None", "Not answerable", None])
def test_the_none_format_marks_a_question_with_no_answer(matcher, gold):
    declined = matcher.match("Not answerable", gold, answer_format="None")
    assert declined.matched and declined.gold_not_answerable
    # (equal texts match at the exact tier before the not-answerable one)
    assert declined.method == ("exact" if gold == "Not answerable" else "not_answerable")
    answered = matcher.match("42", gold, answer_format="None")
    assert not answered.matched
    assert "the question is not answerable but the output gives an answer" in answered.reason
