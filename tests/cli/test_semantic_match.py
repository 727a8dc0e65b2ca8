"""``opik-semantic-metrics semantic-match``: the SemanticMatch metric's scores over files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from opik_semantic_metrics.cli.main import main
from tests.cli.cli_files import write_lines, write_text_files

MINILM = ["-m", "all-MiniLM-L6-v2", "--device", "cpu"]


@pytest.fixture(scope="module")
def text_files(tmp_path_factory, stsb_pairs) -> dict[str, Path]:
    return write_text_files(tmp_path_factory.mktemp("cli"), stsb_pairs)


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


@pytest.mark.slow
@pytest.mark.parametrize("fit", [False, True], ids=["unfitted", "fit"])
def test_scores_are_the_metrics_scores(capsys, text_files, fit):
    from opik_semantic_metrics import SemanticMatch

    candidates, references = text_files["candidates"], text_files["references_1"]
    options = ["--fit"] if fit else []
    assert main(["semantic-match", "-c", str(candidates), "-r", str(references),
                 *options, "--json", *MINILM]) == 0  # fmt: skip
    result = json.loads(capsys.readouterr().out)
    metric = SemanticMatch(model="all-MiniLM-L6-v2", device="cpu", track=False)
    if fit:
        metric.fit(_lines(references))
    expected = metric.score_batch(_lines(candidates), _lines(references))
    assert [s["line"] for s in result["scores"]] == list(range(1, 13))
    assert [s["score"] for s in result["scores"]] == pytest.approx(
        [e.value for e in expected], abs=1e-6
    )
    assert result["fitted"] is fit and result["metric"] == "semantic_match"
    assert result["mean"] == pytest.approx(sum(e.value for e in expected) / 12, abs=1e-6)


@pytest.mark.slow
def test_the_table_shows_each_line_and_the_mean(capsys, text_files):
    arguments = ["-c", str(text_files["short"]), "-r", str(text_files["short"]), *MINILM]
    assert main(["semantic-match", *arguments]) == 0
    lines = capsys.readouterr().out.splitlines()
    header = ["line", "score", "word", "sentence", "paragraph", "flags", "status"]
    assert lines[0].split() == header
    rows = [line.split() for line in lines[2:7]]
    # Each text against itself: snapped to 1.0, as the flags and their legend say.
    assert lines[7].startswith("snapped: ")
    assert [row[0] for row in rows] == ["1", "2", "3", "4", "5"]
    assert all(row[1] == "1.000000" and row[-1] == "scored" for row in rows)
    assert all(row[-2] == "snapped" for row in rows)
    assert lines[-1].endswith("(unfitted: see --fit) SemanticMatch: 1.000000")


def test_unaligned_files_and_a_corpus_too_small_to_fit_are_one_line(capsys, tmp_path):
    one = write_lines(tmp_path / "one.txt", ["A cat."])
    two = write_lines(tmp_path / "two.txt", ["A cat.", "A dog."])
    assert main(["semantic-match", "-c", str(one), "-r", str(two), *MINILM]) == 2
    assert "has 2 lines but" in capsys.readouterr().err
    assert main(["semantic-match", "-c", str(one), "-r", str(one), "--fit", *MINILM]) == 2
    error = capsys.readouterr().err
    assert error.startswith("opik-semantic-metrics: error: ") and len(error.splitlines()) == 1
    assert "--fit needs two or more different non-blank lines in" in error
    assert f"{one} (it has 1 different line)" in error


@pytest.mark.slow
def test_the_table_shows_the_penalties_the_reason_gives(capsys, tmp_path):
    import re

    from opik_semantic_metrics import SemanticMatch

    # Issue 54, item 5: word 0.84, sentence 0.77, paragraph 0.76, score 0.44, and only
    # --json showed the changed-number penalty that took the score down.
    candidate, reference = "The train leaves at 5 pm from platform 2.", "The train leaves at 6 pm."
    candidates = write_lines(tmp_path / "c.txt", [candidate, "The cat is not on the mat."])
    references = write_lines(tmp_path / "r.txt", [reference, "The cat is on the mat."])
    assert main(["semantic-match", "-c", str(candidates), "-r", str(references), *MINILM]) == 0
    lines = capsys.readouterr().out.splitlines()
    metric = SemanticMatch(model="all-MiniLM-L6-v2", device="cpu", track=False)
    for row, (output, gold) in zip(
        lines[2:4],
        [(candidate, reference), ("The cat is not on the mat.", "The cat is on the mat.")],
        strict=True,
    ):
        reason = metric.score(output=output, reference=gold).reason
        penalties = re.findall(r"\(-([0-9.]+)\)", reason)
        assert penalties, reason
        shown = re.findall(r"(?:numbers|negation) -([0-9.]+)", row)
        assert shown == penalties, (row, reason)
    assert "numbers -" in lines[2] and "negation -" in lines[3]
    assert any(line.startswith("numbers: numbers in the candidate") for line in lines)


def test_the_default_model_is_the_engines():
    # Written out in the command's module so that its --help need not import PyTorch.
    from opik_semantic_metrics.cli import semantic_match
    from opik_semantic_metrics.semantic.settings import DEFAULTS

    assert DEFAULTS.model == semantic_match.DEFAULT_MODEL
