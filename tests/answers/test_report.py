"""The markdown report: from plain tuples and from a real Opik run, the same numbers."""

from __future__ import annotations

import dataclasses

import opik
import pandas
import pytest

from opik_semantic_metrics import AnswerMatch
from opik_semantic_metrics.answers.report import markdown_report, summarize
from opik_semantic_metrics.answers.tiers import AnswerMatcher

SCOPE_GOLD = "Seller reports Scope 1, buyer reports Scope 2"
SCOPE_VERBOSE = (
    "The selling organization reports the direct emissions from generating the electricity "
    "under scope 1, and the purchasing organization reports the emissions associated with "
    "the purchased electricity under scope 2."
)
RANK = "Rank the three largest emitters."

# output, gold, answer_format, question -> the method each must get (keywords at 0.5)
RUN = [
    ("Paris", "Paris", "Str", "Where was the agreement signed?", "exact"),
    ("82.0", "82%", "Float", "What share of sites was audited?", "numeric"),
    ("12.80", "12.8", "Float", None, "numeric"),
    ('["SSP1", "SSP2", "SSP3"]', "['SSP1', 'SSP2', 'SSP3']", "List", None, "list"),
    ("net-zero", "netzero", "Str", None, "normalized"),
    ("kwh", "kWh", "Str", None, "normalized"),
    ("Fail to answer", "Not answerable", "None", None, "not_answerable"),
    ("Not answerable", "No", "Str", "Is the target verified?", "no_match"),
    (SCOPE_VERBOSE, SCOPE_GOLD, "Str", "Who reports what?", "semantic"),
    ("28%", "82%", "Float", None, "no_match"),
    ("['C', 'B', 'A']", "['A', 'B', 'C']", "List", RANK, "no_match"),
    ("42", "42", "Int", None, "exact"),
    (None, "5", "Int", None, "no_match"),
    ("The capital of France is Paris.", "Paris", "Str", None, "contains"),
    ({"not": "an answer"}, "x | y", "Str", None, None),  # fails to score
]


@pytest.fixture(scope="module")
def matcher() -> AnswerMatcher:
    return AnswerMatcher(semantic="keywords", semantic_threshold=0.5)


@pytest.fixture(scope="module")
def tuples() -> list[tuple]:
    return [row[:4] for row in RUN]


def test_summary_counts_each_tier_cumulatively(matcher, tuples):
    summary = summarize(tuples, matcher=matcher)
    assert [item.method for item in summary.items] == [row[4] for row in RUN]
    assert summary.correct_through == {
        "exact": 2,
        "normalized": 4,
        "contains": 5,
        "numeric": 7,
        "list": 8,
        "not_answerable": 9,
        "semantic": 10,
    }
    assert summary.method_counts == {
        "exact": 2,
        "normalized": 2,
        "contains": 1,
        "numeric": 2,
        "list": 1,
        "not_answerable": 1,
        "semantic": 1,
        "no_match": 4,
        "failed": 1,
    }
    assert [item.index for item in summary.flipped_by("numeric")] == [1, 2]
    assert len(summary.scored) == 14 and [item.index for item in summary.failed] == [14]
    assert "got dict" in summary.failed[0].reason
    assert summary.semantic == "keywords"


def test_markdown_report(matcher, tuples):
    report = markdown_report(tuples, matcher=matcher, title="Baseline")
    lines = report.splitlines()
    assert lines[0] == "## Baseline"
    assert "14 items scored, 1 failed to score (listed at the end)." in lines[2]
    table = lines[lines.index("| Matching | Correct | Accuracy | Gain |") :][:9]
    assert table[2:] == [
        "| Strict: exact match | 2 | 14.3% |  |",
        "| + normalised text | 4 | 28.6% | +2 |",
        "| + gold found in the output | 5 | 35.7% | +1 |",
        "| + numbers within tolerance | 7 | 50.0% | +2 |",
        "| + lists | 8 | 57.1% | +1 |",
        "| + not answerable | 9 | 64.3% | +1 |",
        "| + semantic (keywords) | 10 | 71.4% | +1 |",
    ]
    assert "| no_match | 4 |" in lines and "| failed | 1 |" in lines
    assert "| Float | 3 | 0.0% | 66.7% |" in lines
    assert "| Int | 2 | 50.0% | 50.0% |" in lines
    assert (
        "- Outputs that decline to answer: 2 (1 on questions that have an answer, "
        "counted wrong)." in lines
    )
    assert "- Questions that are not answerable: 1 (1 declined, counted right)." in lines
    numeric = lines.index("### Flipped to correct by numeric (2)")
    assert lines[numeric + 4] == "| 1 | What share of sites was audited? | 82% | 82.0 |"
    assert "### Flipped to correct by semantic (1)" in lines
    assert "### Still wrong (4)" in lines
    failed = lines[lines.index("### Failed to score (1)") + 4]
    assert failed.startswith("| 14 |  | x \\| y | {'not': 'an answer'} | Expected the output")


def test_long_lists_are_cut(matcher):
    rows = [(str(n), str(n + 1), "Int") for n in range(30)]
    report = markdown_report(rows, matcher=matcher, max_listed=5)
    assert "### Still wrong (30)" in report and "...and 25 more." in report


def test_a_negative_max_listed_is_refused(matcher):
    with pytest.raises(ValueError, match="max_listed of 0 or more, got -1"):
        markdown_report([("1", "2", "Int")], matcher=matcher, max_listed=-1)


def test_without_semantic_the_row_says_off():
    report = markdown_report([("a", "a")])
    assert "| + semantic (off) | 1 | 100.0% | +0 |" in report
    assert "Accuracy per answer format" not in report  # no formats known


def test_report_from_a_real_opik_run_equals_the_report_from_tuples(matcher, tuples):
    items = [
        {"id_": index, "prediction": output, "answer": gold, "answer_format": fmt, "question": q}
        for index, (output, gold, fmt, q) in enumerate(tuples)
    ]
    run = opik.evaluate_on_dict_items(
        items=items,
        task=lambda item: {"output": item["prediction"]},
        scoring_metrics=[
            AnswerMatch(semantic="keywords", semantic_threshold=0.5, name="qa", track=False)
        ],
        scoring_key_mapping={"reference": "answer"},
        scoring_threads=4,
    )
    # In whatever order Opik's threads finished them: numbered in dataset order anyway.
    shuffled = run.test_results[::-1]
    from_opik = summarize(shuffled, metric_name="qa")
    from_tuples = summarize(tuples, matcher=matcher)
    assert from_opik.correct_through == from_tuples.correct_through
    assert from_opik.method_counts == from_tuples.method_counts
    assert from_opik.semantic == "keywords"
    for got, expected in zip(from_opik.items, from_tuples.items, strict=True):
        # A failed item too shows what it was given; only its reason's wording differs.
        assert dataclasses.replace(got, reason="") == dataclasses.replace(expected, reason="")
    [failed] = from_opik.failed
    assert (failed.index, failed.answer_format) == (len(tuples) - 1, "Str")
    assert failed.output == "{'not': 'an answer'}" and failed.reference == "x | y"
    from_opik_report = markdown_report(shuffled, metric_name="qa")
    from_tuples_report = markdown_report(tuples, matcher=matcher)
    assert from_opik_report.split("### Failed")[0] == from_tuples_report.split("### Failed")[0]
    with pytest.raises(ValueError, match="no score named 'answer_match'"):
        summarize(shuffled)


@pytest.mark.parametrize(
    ("results", "message"),
    [
        ([("a",)], r"\(output, reference"),
        (["a, b"], r"\(output, reference"),
        ([("a", "b", "Str", "q", "extra")], r"\(output, reference"),
    ],
)
def test_bad_rows_raise_value_error(results, message):
    with pytest.raises(ValueError, match=message):
        summarize(results)


def test_a_value_repr_cannot_write_is_a_failed_item_not_a_crash(matcher):
    # An int past Python's limit on digits written as text (4,300 by default).
    summary = summarize([(10**5000, "5", "Int"), ("5", "5", "Int")], matcher=matcher)
    failed, scored = summary.items
    assert failed.output == "an int of about 5001 digits" and failed.method is None
    assert failed.reason.startswith("Expected the output to be a number of at most")
    assert scored.method == "exact"
    with pytest.raises(ValueError, match=r"got a value of type tuple that repr\(\) cannot write"):
        summarize([(10**5000,)])


@pytest.mark.parametrize("through_the_metric", [False, True])
def test_an_item_whose_semantic_scorer_fails_is_listed_as_failed(through_the_metric):
    # The README promises it for Opik runs; from tuples the scorer's own RuntimeError (or,
    # through AnswerMatch, a MetricComputationError) ended the whole report.
    def flaky(output, reference):
        raise RuntimeError("model server down")

    matcher = AnswerMatcher(semantic=flaky, semantic_threshold=0.5)
    if through_the_metric:
        matcher = AnswerMatch(semantic=flaky, semantic_threshold=0.5, track=False).matcher
    summary = summarize([("a large city", "a big town", "Str"), ("5", "5", "Int")], matcher=matcher)
    failed, scored = summary.items
    assert (
        failed.method is None and "flaky failed: RuntimeError: model server down" in failed.reason
    )
    assert scored.method == "exact"


def test_a_text_utf8_cannot_write_is_shown_escaped(matcher):
    # An unpaired surrogate: bytes that are not UTF-8, decoded with "surrogateescape".
    report = markdown_report([("caf\udce9", "caf\u00e9", "Str"), ("\ud800", "x")], matcher=matcher)
    report.encode("utf-8")  # a report can be printed and written to a file
    assert "| 0 |  | caf\u00e9 | 'caf\\udce9' | Expected the output to be valid Unicode" in report
    assert "| 1 |  | x | '\\ud800' |" in report


def test_pandas_empty_cells_from_an_opik_run_are_reported(matcher):
    # Nullable and Arrow-backed pandas columns give pd.NA for an empty cell.
    items = [
        {"output": "82", "reference": "82%", "answer_format": pandas.NA},
        {"output": pandas.NA, "reference": "5", "answer_format": "Int"},
    ]
    run = opik.evaluate_on_dict_items(
        items=items,
        task=lambda item: {"output": item["output"]},
        scoring_metrics=[AnswerMatch(track=False)],
    )
    summary = summarize(run.test_results)
    assert [(item.answer_format, item.method) for item in summary.items] == [
        (None, "numeric"),
        ("Int", "no_match"),
    ]
    assert summary == summarize(
        [(row["output"], row["reference"], row["answer_format"]) for row in items]
    )


def test_answer_formats_are_counted_in_their_canonical_spelling(matcher):
    summary = summarize([("5", "5", "float"), ("6", "5", "Float"), ("a", "a", "STR")])
    assert [item.answer_format for item in summary.items] == ["Float", "Float", "Str"]


def test_mixed_inputs_raise_value_error(matcher, tuples):
    run = opik.evaluate_on_dict_items(
        items=[{"answer": "a", "prediction": "a"}],
        task=lambda item: {"output": item["prediction"]},
        scoring_metrics=[AnswerMatch(track=False)],
        scoring_key_mapping={"reference": "answer"},
    )
    with pytest.raises(ValueError, match="mix"):
        summarize([*run.test_results, ("a", "a")])
    assert summarize(run.test_results).correct_through["exact"] == 1


def test_an_empty_run():
    summary = summarize([])
    assert summary.items == () and summary.correct_through["semantic"] == 0
    report = markdown_report([])
    assert "| Strict: exact match | 0 | n/a |  |" in report
    assert "Accuracy per answer format" not in report  # a table with no rows otherwise
