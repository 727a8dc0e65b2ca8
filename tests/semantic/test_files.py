"""The loader for the seed's folder of answer files."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from opik_semantic_metrics.errors import InputError
from opik_semantic_metrics.semantic.engine import SemanticMatchEngine
from opik_semantic_metrics.semantic.files import (
    read_answer_file,
    read_answer_folder,
    score_answer_folder,
)

FOLDER = Path(__file__).parents[1] / "fixtures" / "semantic_answers"


def test_the_folder_is_read_by_file_name_with_list_answers_kept():
    files = read_answer_folder(FOLDER)
    assert [file.name for file in files] == ["list", "short", "true_false"]
    answers = files[0]
    assert answers.references[0] == ("fever", "cough", "shortness of breath")
    assert answers.responses == ("Fever, cough and shortness of breath", "Aspirin")


def test_scores_fit_on_every_reference_and_average_each_file():
    engine = SemanticMatchEngine("all-MiniLM-L6-v2", device="cpu")
    scores = score_answer_folder(engine, FOLDER)
    files = read_answer_folder(FOLDER)
    # The same by hand: fit a fresh engine on all 10 references, score each file.
    expected_engine = SemanticMatchEngine("all-MiniLM-L6-v2", device="cpu")
    expected_engine.fit([ref for file in files for ref in file.references])
    assert engine.state == expected_engine.state
    assert engine.state.idf.num_documents == 10
    for file, score in zip(files, scores, strict=True):
        results = expected_engine.score(file.responses, file.references)
        assert score.name == file.name and score.count == len(results)
        assert score.mean == pytest.approx(sum(r.score for r in results) / len(results))
    by_name = {score.name: score for score in scores}
    true_false = [r.score for r in by_name["true_false"].results]
    assert true_false[0] == 1.0 and true_false[3] == 1.0  # "True"/"True", "no"/"No"
    assert true_false[1] < 0.5  # "True" for "False"
    # "true." for "True": the same words (word and sentence levels 1), and only the raw-text
    # level sees the full stop.
    dotted = by_name["true_false"].results[2]
    assert dotted.word == pytest.approx(1.0, abs=1e-6)
    assert dotted.sentence == pytest.approx(1.0, abs=1e-6)
    assert dotted.paragraph < 1.0 and true_false[2] < 1.0
    assert true_false[2] > true_false[1]
    short = by_name["short"].results
    assert short[3].status == "empty_output" and short[3].score == 0.0
    assert short[1].score > short[2].score  # a paraphrase above a wrong answer


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("not json", "cannot read it as JSON"),
        ("[1, 2]", "expected a JSON object"),
        (json.dumps({"inputs": ["a"]}), "`inputs` and `responses` to be lists"),
        (json.dumps({"inputs": ["a", "b"], "responses": ["a"]}), "2 inputs but 1 responses"),
        (json.dumps({"inputs": ["a"], "responses": [None]}), "response 0 is NoneType"),
        (json.dumps({"inputs": [["a", 3]], "responses": ["a"]}), "reference 0 to hold only"),
        (json.dumps({"inputs": [{"answer": "a"}], "responses": ["a"]}), "got dict"),
        ("[" * 100_000 + "]" * 100_000, "cannot read it as JSON"),  # json's parser recurses
    ],
    ids=["not-json", "array", "no-responses", "unaligned", "none", "bad-list", "dict", "deep"],
)
def test_malformed_files_raise_input_error_naming_the_file(tmp_path, content, message):
    path = tmp_path / "broken.json"
    path.write_text(content)
    with pytest.raises(InputError, match=message) as error:
        read_answer_file(path)
    assert str(error.value).startswith("broken.json: ")


def test_a_folder_without_answer_files_is_refused(tmp_path):
    with pytest.raises(InputError, match=r"holds no \.json"):
        read_answer_folder(tmp_path)
    with pytest.raises(InputError, match="is not a folder"):
        read_answer_folder(tmp_path / "missing")


def test_an_empty_file_has_no_mean(tmp_path):
    shutil.copy(FOLDER / "short.json", tmp_path)
    (tmp_path / "empty.json").write_text(json.dumps({"inputs": [], "responses": []}))
    engine = SemanticMatchEngine("all-MiniLM-L6-v2", device="cpu")
    empty, short = score_answer_folder(engine, tmp_path)
    assert (empty.name, empty.count, empty.mean) == ("empty", 0, None)
    assert short.count == 4
