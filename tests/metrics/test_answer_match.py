"""The Opik AnswerMatch metric: results, metadata, semantic scorers, bad input, Opik's engine."""

from __future__ import annotations

import math

import numpy
import opik
import pytest
import torch
from opik.evaluation.metrics import LevenshteinRatio
from opik.evaluation.metrics.score_result import ScoreResult
from opik.exceptions import MetricComputationError

from opik_semantic_metrics import AnswerMatch, BERTScore
from opik_semantic_metrics.metrics.answer_match import (
    BERTSCORE_MINILM_F1_THRESHOLD,
    METADATA_TEXT_LIMIT,
)

SCOPE_GOLD = "Seller reports Scope 1, buyer reports Scope 2"
SCOPE_VERBOSE = (
    "The selling organization reports the direct emissions from generating the electricity "
    "under scope 1, and the purchasing organization reports the emissions associated with "
    "the purchased electricity under scope 2."
)


@pytest.fixture(scope="module")
def metric() -> AnswerMatch:
    return AnswerMatch(track=False)


@pytest.fixture(scope="module")
def bertscore() -> BERTScore:
    return BERTScore(model="all-MiniLM-L6-v2", device="cpu", track=False)


def test_score_is_one_score_result_with_the_method(metric):
    result = metric.score(output="82.0", reference="82%", answer_format="Float")
    assert isinstance(result, ScoreResult) and not result.scoring_failed
    assert (result.name, result.value) == ("answer_match", 1.0)
    meta = result.metadata
    assert meta["method"] == "numeric" and meta["matched"] is True
    assert (meta["output_number"], meta["reference_number"]) == ("82", "82%")
    assert (meta["output_normalized"], meta["reference_normalized"]) == ("82.0", "82 %")
    assert (meta["output"], meta["reference"], meta["answer_format"]) == ("82.0", "82%", "Float")
    assert meta["semantic"] is None and "semantic_score" not in meta
    assert meta["tolerance"] == 0.01
    assert result.reason == "Numbers equal within ±0.01: 82 and 82%."


@pytest.mark.parametrize(("given", "canonical"), [(" float", "Float"), (float("nan"), None)])
def test_metadata_holds_the_answer_format_in_its_canonical_spelling(metric, given, canonical):
    # So that a report groups "float" and "Float" together, and NaN (pandas' empty cell)
    # is unknown, not a value JSON cannot hold.
    result = metric.score(output="82.0", reference="82%", answer_format=given)
    assert result.metadata["answer_format"] == canonical and result.value == 1.0


def test_no_match_scores_zero_and_flags_abstentions(metric):
    result = metric.score(output="Not answerable", reference="No", answer_format="Str")
    assert result.value == 0.0
    assert result.metadata["method"] == "no_match"
    assert result.metadata["output_abstained"] is True
    assert result.metadata["flags"] == ["output_abstained"]


def test_the_question_comes_from_input_or_question(metric):
    kwargs = {"output": "['C', 'B', 'A']", "reference": "['A', 'B', 'C']"}
    assert metric.score(**kwargs).value == 1.0
    assert metric.score(**kwargs, input="Rank the emitters.").value == 0.0
    assert metric.score(**kwargs, input={"messages": []}, question="Rank them.").value == 0.0
    assert metric.score(**kwargs, input="Which emitters?", question="Rank them.").value == 1.0


def test_settings_reach_the_matcher():
    metric = AnswerMatch(tolerance=0.5, ordered=True, percent_as_fraction=True, track=False)
    assert metric.score(output="13.2", reference="12.8").value == 1.0
    assert metric.score(output="0.82", reference="82%").value == 1.0
    assert metric.score(output="['B', 'A']", reference="['A', 'B']").value == 0.0
    assert AnswerMatch(name="qa", track=False).score(output="a", reference="a").name == "qa"


def test_relative_tolerance_reaches_the_matcher():
    # 1052 against 1000 differs by 52: within 5% of the larger (52.6), not of 1000 (50),
    # and far outside the default absolute 0.01.
    relative = AnswerMatch(tolerance=0.0, relative_tolerance=0.05, track=False)
    assert AnswerMatch(track=False).score(output="1052", reference="1000").value == 0.0
    for output, reference in [("1052", "1000"), ("1000", "1052")]:
        result = relative.score(output=output, reference=reference, answer_format="Int")
        assert (result.value, result.metadata["method"]) == (1.0, "numeric")
    assert relative.score(output="1053", reference="1000").value == 0.0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"tolerance": -1}, "tolerance"),
        pytest.param({"tolerance": 10**400}, "tolerance", id="tolerance=10**400"),
        pytest.param(
            {"semantic": "keywords", "semantic_threshold": 10**400},
            "semantic_threshold",
            id="keywords-threshold=10**400",
        ),
        ({"semantic": "bertscore"}, "semantic"),
        ({"semantic": 42}, "semantic"),
        ({"semantic": len}, "semantic_threshold"),
        # The class, not an instance: every Str item failed on the unbound score().
        ({"semantic": AnswerMatch, "semantic_threshold": 0.5}, "pass an instance"),
    ],
)
def test_bad_settings_raise_value_error(kwargs, message):
    with pytest.raises(ValueError, match=message):
        AnswerMatch(**{"track": False, **kwargs})


# --- the semantic tier with real scorers ----------------------------------------------


def test_bertscore_on_minilm_matches_the_seeds_verbose_answer(bertscore):
    metric = AnswerMatch(semantic=bertscore, track=False)
    assert metric.matcher.semantic_threshold == BERTSCORE_MINILM_F1_THRESHOLD
    result = metric.score(output=SCOPE_VERBOSE, reference=SCOPE_GOLD, answer_format="Str")
    f1 = bertscore.score(output=SCOPE_VERBOSE, reference=SCOPE_GOLD)[0].value
    assert (result.value, result.metadata["method"]) == (1.0, "semantic")
    assert result.metadata["semantic_score"] == pytest.approx(f1, abs=1e-6)
    assert result.metadata["semantic"] == "bertscore"
    assert f"semantic score {f1:.3f} reaches the threshold 0.5" in result.reason


@pytest.mark.parametrize(
    ("output", "gold", "flag"),
    [
        # same topic, wrong fact: below the threshold
        ("The largest category is emissions from employee commuting.",
         "Emissions from purchased goods and services", None),
        # scores above the threshold, stopped by a guard
        ("Both the seller and the buyer report the electricity emissions under scope 3.",
         SCOPE_GOLD, "gold_number_missing"),
        ("Carbon pricing has no effect on the company's revenue.",
         "Carbon pricing increases operating costs", "negation_mismatch"),
        ("not bad", "bad", "negation_mismatch"),
        # Digits inside words, and numbers the gold lacks (F1 0.80, 0.87, 0.81, 0.88).
        ("SSP2", "SSP1", "gold_number_missing"),
        ("Q2", "Q1", "gold_number_missing"),
        ("Scope2", "Scope1", "gold_number_missing"),
        ("Scope 1 and Scope 3", "Scope 1", "output_number_extra"),
        # An option letter (F1 0.56): exactly or not at all.
        ("B", "A", "single_letter"),
    ],
)  # fmt: skip
def test_bertscore_does_not_match_wrong_answers(bertscore, output, gold, flag):
    metric = AnswerMatch(semantic=bertscore, track=False)
    result = metric.score(output=output, reference=gold, answer_format="Str")
    assert result.value == 0.0
    if flag is None:
        assert result.metadata["semantic_score"] < BERTSCORE_MINILM_F1_THRESHOLD
    elif flag == "single_letter":
        assert "single letters is matched exactly" in result.reason
        assert result.metadata["semantic_score"] is None
        assert bertscore.score(output=output, reference=gold)[0].value >= 0.5
    else:
        assert flag in result.metadata["flags"] and result.metadata["semantic_score"] is None


def test_earlier_tiers_decide_before_the_model(bertscore):
    metric = AnswerMatch(semantic=bertscore, track=False)
    result = metric.score(output="net-zero", reference="netzero", answer_format="Str")
    assert result.metadata["method"] == "normalized" and result.metadata["semantic_score"] is None


@pytest.mark.parametrize(
    ("output", "reference"),
    [
        # Amharic "hello world" and "I like coffee": every word [UNK] to MiniLM (F1 1.0).
        (
            "\u1230\u120b\u121d \u1208\u12d3\u1208\u121d",
            "\u1261\u1293 \u12a5\u12c8\u12f3\u1208\u1201",
        ),
        # A word of over 100 characters is [UNK] too, whatever it holds.
        ("a" * 600, "a" * 600 + "b"),
        ("The answer is \u1230\u120b\u121d", "The answer is \u1261\u1293"),
    ],
)
def test_no_semantic_match_where_bertscore_reads_a_word_as_unknown(bertscore, output, reference):
    [f1, _, _] = bertscore.score(output=output, reference=reference)
    assert f1.value > 0.99  # BERTScore itself cannot tell them apart
    assert f1.metadata["candidate_unknown_tokens"] >= 1
    assert f1.metadata["reference_unknown_tokens"] >= 1
    result = AnswerMatch(semantic=bertscore, track=False).score(
        output=output, reference=reference, answer_format="Str"
    )
    assert (result.value, result.metadata["method"]) == (0.0, "no_match")
    assert "semantic_unreadable" in result.metadata["flags"]
    assert "cannot read a word" in result.reason


def test_a_semantic_match_stands_where_every_word_is_known(bertscore):
    [f1, _, _] = bertscore.score(output="A domestic cat.", reference="A house cat.")
    assert (f1.metadata["candidate_unknown_tokens"], f1.metadata["reference_unknown_tokens"]) == (
        0,
        0,
    )
    result = AnswerMatch(semantic=bertscore, track=False).score(
        output="A domestic cat.", reference="A house cat.", answer_format="Str"
    )
    assert (result.value, result.metadata["method"]) == (1.0, "semantic")


def test_bertscore_with_other_settings_needs_a_threshold(stsb_pairs):
    idf_bertscore = BERTScore(model="all-MiniLM-L6-v2", device="cpu", idf=True, track=False)
    with pytest.raises(ValueError, match="semantic_threshold"):
        AnswerMatch(semantic=idf_bertscore, track=False)
    # Not fitted, this BERTScore fails on every call: the failure names the scorer.
    metric = AnswerMatch(semantic=idf_bertscore, semantic_threshold=0.5, track=False)
    with pytest.raises(MetricComputationError, match=r"semantic scorer bertscore failed.*fit_idf"):
        metric.score(output=SCOPE_VERBOSE, reference=SCOPE_GOLD, answer_format="Str")
    idf_bertscore.fit_idf([second for _, second, _ in stsb_pairs])
    result = metric.score(output=SCOPE_VERBOSE, reference=SCOPE_GOLD, answer_format="Str")
    f1 = idf_bertscore.score(output=SCOPE_VERBOSE, reference=SCOPE_GOLD)[0].value
    assert result.metadata["semantic_score"] == pytest.approx(f1, abs=1e-6)
    assert result.metadata["semantic_threshold"] == 0.5
    assert result.value == (1.0 if f1 >= 0.5 else 0.0)


def test_keyword_coverage_mode():
    metric = AnswerMatch(semantic="keywords", track=False)
    result = metric.score(output=SCOPE_VERBOSE, reference=SCOPE_GOLD, answer_format="Str")
    assert result.value == 0.0 and result.metadata["semantic_score"] == 0.5
    assert result.metadata["semantic_threshold"] == 1.0
    result = metric.score(
        output="Sellers report it under Scope 1, buyers report it under Scope 2.",
        reference="Scope 1 for sellers, Scope 2 for buyers",
        answer_format="Str",
    )
    assert result.metadata["method"] == "semantic" and result.metadata["semantic_score"] == 1.0


def test_a_metric_returning_one_score_result_in_0_1():
    # LevenshteinRatio is shaped like SemanticMatch: score(output=, reference=) -> ScoreResult.
    metric = AnswerMatch(
        semantic=LevenshteinRatio(track=False), semantic_threshold=0.9, track=False
    )
    result = metric.score(output="Sustainability comittee", reference="Sustainability committee")
    assert result.metadata["method"] == "semantic"
    assert result.metadata["semantic"] == "levenshtein_ratio_metric"
    expected = LevenshteinRatio(track=False).score(
        output="Sustainability comittee", reference="Sustainability committee"
    )
    assert result.metadata["semantic_score"] == expected.value


def test_a_plain_callable():
    def shared_words(output: str, reference: str) -> float:
        words = set(reference.lower().split())
        return len(words & set(output.lower().split())) / len(words)

    metric = AnswerMatch(semantic=shared_words, semantic_threshold=0.75, track=False)
    result = metric.score(output="the audit committee of the board", reference="audit committee")
    assert (result.value, result.metadata["semantic"]) == (1.0, "shared_words")


@pytest.mark.parametrize(
    ("returned", "message"),
    [
        (math.nan, "returned nan"),
        # Only a BERTScore result can say its model cannot judge; None is no score.
        (None, "returned None"),
        ([], r"returned \[\]"),
        ("high", "returned 'high'"),
        (True, "returned True"),
        (ScoreResult(name="x", value=0.0, scoring_failed=True), "returned ScoreResult"),
        # Past a float's range: math.isfinite would raise OverflowError.
        pytest.param(10**400, "returned 1000", id="10**400"),
        # Past Python's digit limit for int-to-text: even repr() raises.
        pytest.param(10**5000, "returned an int of about 5001 digits", id="10**5000"),
        # NumPy 2 writes np.float32(inf), NumPy 1 inf.
        (numpy.float32("inf"), r"returned (np.float32\()?inf\)?, not a finite score"),
        (torch.tensor([0.9, 0.8]), r"returned tensor\(\[0.9"),
    ],
)
def test_a_scorer_returning_no_score_is_a_metric_computation_error(returned, message):
    metric = AnswerMatch(
        semantic=lambda output, reference: returned, semantic_threshold=0.5, track=False
    )
    with pytest.raises(MetricComputationError, match=message):
        metric.score(output="a large city", reference="a big town", answer_format="Str")


@pytest.mark.parametrize(
    "returned",
    [
        numpy.float32(0.9),
        torch.tensor(0.9),
        numpy.float64(0.9),
        [torch.tensor(0.9, dtype=torch.float64)],
        ScoreResult(name="x", value=numpy.float32(0.9)),  # type: ignore[arg-type]
    ],
    ids=["numpy.float32", "0-d tensor", "numpy.float64", "list of a tensor", "ScoreResult"],
)
def test_a_scorer_returning_a_numpy_or_torch_number_is_a_score(returned):
    metric = AnswerMatch(
        semantic=lambda output, reference: returned, semantic_threshold=0.5, track=False
    )
    result = metric.score(output="a large city", reference="a big town", answer_format="Str")
    assert (result.value, result.metadata["method"]) == (1.0, "semantic")
    score = result.metadata["semantic_score"]
    assert type(score) is float and score == pytest.approx(0.9)


def test_a_scorer_that_raises_is_a_metric_computation_error():
    metric = AnswerMatch(
        semantic=lambda output, reference: 1 / 0, semantic_threshold=0.5, track=False
    )
    with pytest.raises(MetricComputationError, match="failed: ZeroDivisionError"):
        metric.score(output="a large city", reference="a big town", answer_format="Str")


# --- bad input -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("output", "flag"),
    [(None, "output_missing"), (math.nan, "output_not_finite"), (math.inf, "output_not_finite")],
)
def test_no_output_scores_zero(metric, output, flag):
    result = metric.score(output=output, reference="82%")
    assert result.value == 0.0 and not result.scoring_failed
    assert flag in result.metadata["flags"]


def test_numbers_are_answers(metric):
    assert metric.score(output=82, reference="82%").metadata["method"] == "numeric"
    assert metric.score(output="82.0", reference=82).value == 1.0
    assert metric.score(output="Not answerable", reference=None).value == 1.0


def test_numpy_answers_are_scored_and_shown_as_python_values(metric):
    result = metric.score(output=numpy.int64(82), reference=numpy.array(["82%"])[0])
    assert result.value == 1.0 and result.metadata["method"] == "numeric"
    assert (result.metadata["output"], result.metadata["reference"]) == (82, "82%")
    listed = metric.score(output=numpy.array([0.5, 2.0]), reference="[0.5, 2]")
    assert listed.value == 1.0 and listed.metadata["output"] == "[0.5, 2.0]"


def test_metadata_keeps_long_texts_short(metric):
    result = metric.score(output="word " * 200_000, reference="x" * 1_000)
    for key in ("output", "reference", "output_normalized", "reference_normalized"):
        assert len(result.metadata[key]) <= METADATA_TEXT_LIMIT
    assert result.metadata["output"].endswith("…")


# --- Opik's engine ----------------------------------------------------------------------


def _scores_inside_opik(metric: AnswerMatch, items: list[dict]) -> dict[int, ScoreResult]:
    """Each item's score by its ``id_``, from Opik's engine with 4 scoring threads."""
    result = opik.evaluate_on_dict_items(
        items=items,
        task=lambda item: {"output": item["prediction"]},
        scoring_metrics=[metric],
        scoring_key_mapping={"reference": "answer", "input": "question"},
        scoring_threads=4,
    )
    return {
        tr.test_case.dataset_item_content["id_"]: tr.score_results[0] for tr in result.test_results
    }


# --- the gold found in the output, free abstentions, scale words ---------------------------


@pytest.mark.parametrize(
    ("kwargs", "value", "method", "flag"),
    [
        ({"output": "The capital of France is Paris.", "reference": "Paris"}, 1.0, "contains",
         None),
        ({"output": "It is not Paris.", "reference": "Paris"}, 0.0, "no_match", "gold_negated"),
        ({"output": "Paris is not correct.", "reference": "Paris"}, 0.0, "no_match",
         "gold_negated"),
        ({"output": "Paris or London", "reference": "Paris"}, 0.0, "no_match", "second_answer"),
        ({"output": "It rose from 75% to 82%.", "reference": "82%", "answer_format": "Float"},
         0.0, "no_match", "second_answer"),
        ({"output": "In 2022, 82% of sites were audited.", "reference": "82%",
          "answer_format": "Float"}, 1.0, "contains", None),
        ({"output": "The report does not say.", "reference": None}, 1.0, "not_answerable",
         "output_abstained"),
        ({"output": "This cannot be determined from the document.", "reference": "Paris"}, 0.0,
         "no_match", "output_abstained"),
        ({"output": "322 million ha", "reference": "322", "answer_format": "Float",
          "input": "How many million hectares are protected?"}, 1.0, "numeric", None),
        ({"output": "322 million ha", "reference": "322", "answer_format": "Float"}, 0.0,
         "no_match", None),
    ],
)  # fmt: skip
def test_the_contains_tier_guards_abstentions_and_scales_through_the_metric(
    metric, kwargs, value, method, flag
):
    result = metric.score(**kwargs)
    assert (result.value, result.metadata["method"]) == (value, method), result.reason
    if flag is not None:
        assert flag in result.metadata["flags"]


def test_free_abstentions_can_be_turned_off_in_the_metric():
    metric = AnswerMatch(abstention_patterns=False, track=False)
    assert metric.score(output="The report does not say.", reference=None).value == 0.0
    assert metric.score(output="Not answerable", reference=None).value == 1.0


def test_the_new_tiers_run_inside_opiks_evaluation_engine(metric):
    items = [
        {"id_": 0, "prediction": "The capital of France is Paris.", "answer": "Paris"},
        {"id_": 1, "prediction": "It is not Paris.", "answer": "Paris"},
        {"id_": 2, "prediction": "The document provides no information on this.",
         "answer": None, "answer_format": "None"},
        {"id_": 3, "prediction": "26 million", "answer": "26", "answer_format": "Float",
         "question": "How many people, in millions, live in the area?"},
    ]  # fmt: skip
    by_id = _scores_inside_opik(metric, items)
    assert {i: (s.value, s.metadata["method"]) for i, s in by_id.items()} == {
        0: (1.0, "contains"),
        1: (0.0, "no_match"),
        2: (1.0, "not_answerable"),
        3: (1.0, "numeric"),
    }


# --- acceptable answers: any one of several right answers --------------------------------


def test_acceptable_answers_any_one_matches_and_metadata_names_it(metric):
    result = metric.score(
        output="The dancer was Rudolf Nureyev.",
        acceptable_answers=["Nuriev", "Rudolf Nureyev", "Nureyev"],
    )
    assert (result.value, result.metadata["method"]) == (1.0, "contains")
    assert result.metadata["matched_answer"] == "Rudolf Nureyev"
    assert result.metadata["acceptable_answers"] == 3
    # A reference and acceptable answers together: the reference is tried first.
    both = metric.score(output="Nureyev", reference="Nureyev", acceptable_answers=["Nuriev"])
    assert (both.value, both.metadata["matched_answer"]) == (1.0, "Nureyev")
    wrong = metric.score(output="Baryshnikov", acceptable_answers=["Nuriev", "Nureyev"])
    assert (wrong.value, wrong.metadata["matched_answer"]) == (0.0, None)


@pytest.mark.parametrize(
    "answers",
    [["8", "eight"], ("8", "eight"), numpy.array(["8", "eight"]), "8"],
    ids=["list", "tuple", "numpy", "one string"],
)
def test_acceptable_answers_come_as_a_list_tuple_array_or_one_text(metric, answers):
    result = metric.score(output="Spiders have eight legs.", acceptable_answers=answers)
    assert result.value == 1.0


def test_a_python_list_reference_stays_one_list_answer(metric):
    # The MMESGBench reading: all items, in any order, not any one of them.
    assert metric.score(output="['b', 'a']", reference=["a", "b"]).value == 1.0
    assert metric.score(output="a", reference=["a", "b"]).value == 0.0
    assert metric.score(output="a", acceptable_answers=["a", "b"]).value == 1.0


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({}, "neither was given"),
        ({"acceptable_answers": []}, "neither was given"),
        ({"acceptable_answers": {"a": 1}}, "list of answers"),
        ({"acceptable_answers": ["x"] * 1001}, "at most 1000"),
    ],
)
def test_no_answer_to_compare_against_is_a_named_failure(metric, arguments, message):
    with pytest.raises(MetricComputationError, match=message):
        metric.score(output="Paris", **arguments)


def test_score_rows_reads_acceptable_answers_and_scores_semantics_in_one_batch(bertscore):
    metric = AnswerMatch(semantic=bertscore, track=False)
    calls = []
    original = bertscore.score_batch

    def counted(outputs, references):
        calls.append(len(outputs))
        return original(outputs, references)

    bertscore.score_batch = counted
    try:
        rows = metric.score_rows(
            {
                "output": ["The session was postponed because the CEO was away.", "Paris", "8"],
                "acceptable_answers": [
                    ["The meeting moved because the CEO was travelling.", "It was delayed."],
                    ["Paris", "City of Light"],
                    ["eight"],
                ],
            }
        )
    finally:
        del bertscore.score_batch
    assert [row[0].metadata["method"] for row in rows] == ["semantic", "exact", "numeric"]
    assert [row[0].value for row in rows] == [1.0, 1.0, 1.0]
    # One call of the model for both acceptable answers of the one row that reached it.
    assert calls == [2]


def test_acceptable_answers_inside_opiks_evaluation_engine(metric):
    items = [
        {"id_": 0, "prediction": "It was Rudolf Nureyev.", "answers": ["Nuriev", "Rudolf Nureyev"]},
        {"id_": 1, "prediction": "It was Baryshnikov.", "answers": ["Nuriev", "Rudolf Nureyev"]},
        {"id_": 2, "prediction": "Spiders have eight legs.", "answers": ["8"]},
    ]
    result = opik.evaluate_on_dict_items(
        items=items,
        task=lambda item: {"output": item["prediction"]},
        scoring_metrics=[metric],
        scoring_key_mapping={"acceptable_answers": "answers"},
        scoring_threads=4,
    )
    by_id = {
        tr.test_case.dataset_item_content["id_"]: tr.score_results[0] for tr in result.test_results
    }
    assert {i: s.value for i, s in by_id.items()} == {0: 1.0, 1: 0.0, 2: 1.0}
    assert by_id[0].metadata["matched_answer"] == "Rudolf Nureyev"
