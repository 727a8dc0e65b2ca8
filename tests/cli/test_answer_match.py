"""``opik-semantic-metrics answer-match``: AnswerMatch's verdicts over aligned files."""

from __future__ import annotations

import json

import pytest

from opik_semantic_metrics.cli.main import main
from tests.cli.cli_files import write_lines

#: (answer, gold, format, question) and the tier each matches by, or no_match.
CASES = [
    ("82.0", "82%", "Float", "What share of the fleet is electric?", "numeric"),
    ("The capital is Paris.", "Paris", "Str", "What is the capital of France?", "contains"),
    ('["SSP1", "SSP2"]', "['SSP1', 'SSP2']", "List", "Which scenarios are used?", "list"),
    ("Not answerable", "None", "None", "What was the 2030 revenue?", "not_answerable"),
    ("Berlin", "Paris", "Str", "What is the capital of France?", "no_match"),
    ("17", "1.7 million", "Int", "How many employees are there?", "no_match"),
]


@pytest.fixture
def files(tmp_path) -> list[str]:
    names = ("answers", "gold", "formats", "questions")
    columns = list(zip(*CASES, strict=True))[:4]
    return [
        str(write_lines(tmp_path / f"{name}.txt", list(column)))
        for name, column in zip(names, columns, strict=True)
    ]


def test_verdicts_are_the_metrics(capsys, files):
    from opik_semantic_metrics import AnswerMatch

    answers, gold, formats, questions = files
    arguments = ["-c", answers, "-r", gold, "--formats", formats, "--questions", questions]
    assert main(["answer-match", *arguments, "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    metric = AnswerMatch(track=False)
    for case, line in zip(CASES, result["scores"], strict=True):
        answer, reference, answer_format, question, method = case
        expected = metric.score(answer, reference, answer_format=answer_format, question=question)
        assert line["method"] == method == expected.metadata["method"]
        assert line["score"] == expected.value == (0.0 if method == "no_match" else 1.0)
    assert result["mean"] == pytest.approx(4 / 6)


def test_the_table_and_accuracy_without_formats(capsys, files):
    answers, gold, _, _ = files
    assert main(["answer-match", "-c", answers, "-r", gold]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["line", "matched", "method"]
    assert lines[2].split() == ["1", "1", "numeric"]
    assert lines[-1].startswith("AnswerMatch: ") and " of 6 matched, accuracy " in lines[-1]


def test_two_systems_compare_by_their_json(capsys, tmp_path, files):
    answers, gold, formats, _ = files
    results = []
    for name, source in (("a", answers), ("b", gold)):
        assert main(["answer-match", "-c", source, "-r", gold, "--formats", formats, "--json"]) == 0
        results.append(write_lines(tmp_path / f"{name}.json", [capsys.readouterr().out]))
    assert main(["compare-results", str(results[0]), str(results[1]), "--resamples", "100"]) == 0
    printed = capsys.readouterr().out
    assert "0.6667" in printed and "1.0000" in printed


def test_a_bad_format_line_is_one_line(capsys, tmp_path, files):
    answers, gold, _, _ = files
    formats = write_lines(tmp_path / "bad.txt", ["Float", "Str", "List", "None", "Str", "Number"])
    assert main(["answer-match", "-c", answers, "-r", gold, "--formats", str(formats)]) == 2
    error = capsys.readouterr().err
    assert error.startswith("opik-semantic-metrics: error: ") and "Number" in error
