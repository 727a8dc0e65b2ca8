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
    [error] = capsys.readouterr().err.splitlines()
    assert error.startswith("opik-semantic-metrics: error: ") and "Number" in error
    # Issue 54, item 8: the bad value was named, but not its line.
    assert f"{formats} line 6: expected an answer format, one of Str, Int, Float" in error


#: Text answers that no rule-based tier matches, and the semantic tier may.
SEMANTIC_CASES = [
    ("A feline is resting on the rug.", "A cat sits on the mat."),
    ("Emissions fell because of the new wind farms.", "Wind power reduced emissions."),
    ("Berlin", "Paris"),
    ("The board approved the merger.", "The weather was sunny."),
]


@pytest.mark.slow
def test_the_semantic_tier_from_the_command_line_gives_the_metrics_verdicts(capsys, tmp_path):
    from opik_semantic_metrics import AnswerMatch, BERTScore

    answers = write_lines(tmp_path / "a.txt", [answer for answer, _ in SEMANTIC_CASES])
    gold = write_lines(tmp_path / "g.txt", [reference for _, reference in SEMANTIC_CASES])
    arguments = ["-c", str(answers), "-r", str(gold), "--json"]
    assert main(["answer-match", *arguments, "--semantic-model", "all-MiniLM-L6-v2"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["semantic_model"] == "all-MiniLM-L6-v2"
    assert result["semantic_threshold"] == 0.55
    semantic = BERTScore(model="all-MiniLM-L6-v2", device="cpu", track=False)
    metric = AnswerMatch(semantic=semantic, track=False)
    methods = []
    for (answer, reference), line in zip(SEMANTIC_CASES, result["scores"], strict=True):
        expected = metric.score(answer, reference)
        assert line["method"] == expected.metadata["method"]
        assert line["score"] == expected.value
        assert line["semantic_score"] == pytest.approx(expected.metadata["semantic_score"])
        methods.append(line["method"])
    # The tier ran and decided both ways: it is on, and it is no rubber stamp.
    assert "semantic" in methods and "no_match" in methods
    # Without the option, the same lines: no semantic tier, no model.
    assert main(["answer-match", *arguments]) == 0
    plain = json.loads(capsys.readouterr().out)
    assert "semantic" not in [line["method"] for line in plain["scores"]]
    # A stricter threshold of one's own.
    strict = ["--semantic-model", "all-MiniLM-L6-v2", "--semantic-threshold", "0.99"]
    assert main(["answer-match", *arguments, *strict]) == 0
    assert "semantic" not in [
        line["method"] for line in json.loads(capsys.readouterr().out)["scores"]
    ]


def test_the_semantic_threshold_is_the_metrics_default():
    # Written out in the command's module so that the command imports no Opik.
    from opik_semantic_metrics.cli import answer_match
    from opik_semantic_metrics.metrics.answer_match import BERTSCORE_MINILM_F1_THRESHOLD

    assert answer_match.MINILM_THRESHOLD == BERTSCORE_MINILM_F1_THRESHOLD


def test_gold_lines_read_as_acceptable_answers_with_a_separator(capsys, tmp_path):
    answers = write_lines(tmp_path / "answers.txt", ["It was Rudolf Nureyev.", "Baryshnikov"])
    gold = write_lines(tmp_path / "gold.txt", ["Nuriev / Rudolf Nureyev", "Nuriev / Nureyev"])
    arguments = ["answer-match", "-c", str(answers), "-r", str(gold), "--json"]
    assert main([*arguments, "--acceptable-separator", "/"]) == 0
    scores = json.loads(capsys.readouterr().out)["scores"]
    assert [(row["score"], row["matched_answer"]) for row in scores] == [
        (1.0, "Rudolf Nureyev"),
        (0.0, None),
    ]
    # Without the separator each line is one gold answer, which the first output lacks.
    assert main(arguments) == 0
    assert [row["score"] for row in json.loads(capsys.readouterr().out)["scores"]] == [0.0, 0.0]
