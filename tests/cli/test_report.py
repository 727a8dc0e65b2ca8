"""``opik-semantic-metrics report``: result files turned into one HTML report."""

from __future__ import annotations

import html
import json
import statistics

import pytest

from opik_semantic_metrics.cli.main import main
from tests.cli.cli_files import write_lines

SYSTEMS = {
    "bart": [0.91, 0.84, 0.77, 0.88, 0.69, 0.93],
    "t5": [0.81, 0.86, 0.71, 0.79, 0.66, 0.90],
    "lead3": [0.55, 0.61, 0.48, 0.70, 0.52, 0.66],
}


@pytest.fixture
def result_files(tmp_path) -> list[str]:
    """One file of numbers, and two JSON files as the scoring commands' --json writes."""
    paths = [str(write_lines(tmp_path / "bart.txt", [str(v) for v in SYSTEMS["bart"]]))]
    for name in ("t5", "lead3"):
        document = {
            "metric": "semantic_match",
            "model": "sentence-transformers/all-MiniLM-L6-v2",
            "dtype": "float32",
            "scores": [
                {"line": line, "score": value, "status": "scored"}
                for line, value in enumerate(SYSTEMS[name], start=1)
            ],
        }
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(document), encoding="utf-8")
        paths.append(str(path))
    return paths


def test_the_report_holds_each_systems_mean_and_every_pair(capsys, tmp_path, result_files):
    pytest.importorskip("matplotlib")
    output = tmp_path / "out" / "report.html"
    arguments = ["report", *result_files, "--names", *SYSTEMS, "-o", str(output)]
    assert main([*arguments, "--resamples", "200", "--title", "Summaries <3 systems>"]) == 0
    assert capsys.readouterr().out == f"Wrote {output}: 3 systems on 6 lines.\n"
    page = output.read_text(encoding="utf-8")
    assert "<h1>Summaries &lt;3 systems&gt;</h1>" in page
    for name, scores in SYSTEMS.items():
        assert f"{statistics.mean(scores):.4f}" in page, name
    # Every pair of the three systems, each compared once.
    for pair in ("bart", "t5"), ("bart", "lead3"), ("t5", "lead3"):
        assert pair[0] in page and pair[1] in page
    assert page.count("<tr>") >= 3 + 3 + 3  # files, means and pairs, with their headers
    assert html.escape("sentence-transformers/all-MiniLM-L6-v2") in page
    assert page.count('src="data:image/png;base64,') == 1


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda files, out: [files[0], "-o", out], "two or more result files"),
        (lambda files, out: [*files, "-o", out.replace(".html", ".png")], "a .html file"),
        (lambda files, out: [*files, "--names", "a", "b", "-o", out], "--names gives 2 names"),
        (lambda files, out: [*files, "--names", "a", "a", "a", "-o", out], "different names"),
        (lambda files, out: [*files, "-o", files[0] + "/r.html"], "is a file, not a folder"),
        (lambda files, out: [*files, "--score", "nope", "-o", out], "has no score 'nope'"),
    ],
    ids=["one-file", "not-html", "names", "same-names", "under-a-file", "unknown-score"],
)
def test_a_report_that_cannot_be_made_is_one_line(capsys, tmp_path, result_files, change, expected):
    output = str(tmp_path / "report.html")
    assert main(["report", *change(result_files, output)]) == 2
    captured = capsys.readouterr()
    [line] = captured.err.splitlines()
    assert line.startswith("opik-semantic-metrics: error: ") and expected in line
    assert not (tmp_path / "report.html").exists()


def test_files_of_different_lengths_are_refused(capsys, tmp_path, result_files):
    short = write_lines(tmp_path / "short.txt", ["0.5"])
    output = tmp_path / "report.html"
    assert main(["report", result_files[0], str(short), "-o", str(output)]) == 2
    assert f"{short} has 1 score but {result_files[0]} has 6" in capsys.readouterr().err
    assert not output.exists()
