"""``opik-semantic-metrics comet-score``: unbabel-comet's own scores, JSON, errors.

The oracle is ``tests/fixtures/comet/oracle.json``: unbabel-comet 2.2.7's predictions for
the tiny checkpoints beside it, recorded by ``scripts/comet_oracle.py``.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from opik_semantic_metrics.cli.main import main

COMET_FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "comet"


@pytest.fixture(scope="module")
def segment_files(tmp_path_factory) -> tuple[dict[str, Path], list[int]]:
    """The oracle's segments as line files (those with line breaks inside left out)."""
    segments = json.loads((COMET_FIXTURES / "segments.json").read_text(encoding="utf-8"))
    kept = [
        index
        for index, segment in enumerate(segments)
        if not any("\n" in text or "\r" in text for text in segment.values())
    ][:24]
    folder = tmp_path_factory.mktemp("comet")
    files = {}
    for key in ("src", "mt", "ref"):
        files[key] = folder / f"{key}.txt"
        files[key].write_text("".join(segments[i][key] + "\n" for i in kept), encoding="utf-8")
    return files, kept


def _oracle(model: str, mode: str) -> list[float]:
    oracle = json.loads((COMET_FIXTURES / "oracle.json").read_text(encoding="utf-8"))
    return oracle["models"][model][mode]["scores"]


def _json_run(*arguments: str) -> dict:
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        assert main(["comet-score", *arguments, "--json", "--device", "cpu"]) == 0
    return json.loads(output.getvalue())


@pytest.mark.parametrize(
    ("model", "mode"),
    [("regression-xlmr", "with_reference"), ("referenceless-xlmr", "without_reference")],
)
def test_scores_equal_unbabel_comet(segment_files, model, mode):
    files, kept = segment_files
    references = ["-r", str(files["ref"])] if mode == "with_reference" else []
    result = _json_run(
        "-s",
        str(files["src"]),
        "-t",
        str(files["mt"]),
        *references,
        "-m",
        str(COMET_FIXTURES / model),
    )
    expected = [_oracle(model, mode)[i] for i in kept]
    assert [row["score"] for row in result["scores"]] == pytest.approx(expected, abs=1e-5)
    assert result["mean"]["score"] == pytest.approx(sum(expected) / len(expected), abs=1e-5)
    assert [row["line"] for row in result["scores"]] == list(range(1, len(kept) + 1))
    assert result["metric"] == "comet" and result["references"] == (
        references[1] if references else None
    )


def test_text_output_and_compare_of_two_models(capsys, segment_files, tmp_path):
    files, kept = segment_files
    base = ["-s", str(files["src"]), "-t", str(files["mt"]), "-r", str(files["ref"])]
    assert main(["comet-score", *base, "-m", str(COMET_FIXTURES / "regression-xlmr")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["line", "score"] and len(lines) == 2 + len(kept) + 1
    assert lines[-1].endswith(f"(regression_metric) score: {float(lines[-1].split()[-1]):.6f}")
    for name in ("regression-xlmr", "regression-bert"):
        document = _json_run(*base, "-m", str(COMET_FIXTURES / name))
        (tmp_path / f"{name}.json").write_text(json.dumps(document), encoding="utf-8")
    arguments = [str(tmp_path / "regression-xlmr.json"), str(tmp_path / "regression-bert.json")]
    assert main(["compare", *arguments, "--json"]) == 0
    comparison = json.loads(capsys.readouterr().out)
    assert comparison["metric"] == "score" and comparison["items"] == len(kept)


def test_word_level_models_give_error_spans(segment_files):
    files, _ = segment_files
    result = _json_run(
        "-s",
        str(files["src"]),
        "-t",
        str(files["mt"]),
        "-r",
        str(files["ref"]),
        "-m",
        str(COMET_FIXTURES / "unified-bert"),
    )
    spans = [span for row in result["scores"] for span in row["error_spans"]]
    assert spans and set(spans[0]) == {"text", "severity", "confidence", "start", "end"}
    assert {"src", "ref", "unified"} <= set(result["scores"][0]["partial_scores"])


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        (["-m", "{fixtures}/regression-xlmr"], "This COMET model needs a reference"),
        (["-r", "{short}", "-m", "{fixtures}/regression-xlmr"], "has 2 lines but"),
        (["-r", "{ref}", "-m", "{fixtures}/no-such-model"], "could not be loaded"),
    ],
    ids=["no-reference", "unequal-lines", "missing-model"],
)
def test_errors_are_one_line_and_exit_2(capsys, segment_files, tmp_path, arguments, expected):
    files, _ = segment_files
    short = tmp_path / "short.txt"
    short.write_text("one\ntwo\n", encoding="utf-8")
    values = {"fixtures": COMET_FIXTURES, "short": short, "ref": files["ref"]}
    filled = [argument.format(**values) for argument in arguments]
    assert main(["comet-score", "-s", str(files["src"]), "-t", str(files["mt"]), *filled]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith("opik-semantic-metrics: error: ") and expected in line
