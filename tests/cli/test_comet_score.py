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
from scipy import stats as scipy_stats

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


def _oracle_entry(model: str, mode: str) -> dict:
    oracle = json.loads((COMET_FIXTURES / "oracle.json").read_text(encoding="utf-8"))
    return oracle["models"][model][mode]


def _oracle(model: str, mode: str) -> list[float]:
    return _oracle_entry(model, mode)["scores"]


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


def test_lines_are_stripped_as_unbabel_comets_command_strips_them(segment_files, tmp_path):
    # Spaces around a text are tokens: unstripped, these lines scored about 1e-3 off.
    files, kept = segment_files
    padded = {}
    for key, path in files.items():
        lines = path.read_text(encoding="utf-8").splitlines()
        padded[key] = tmp_path / f"{key}.txt"
        padded[key].write_text("".join(f"  {line}\t\n" for line in lines), encoding="utf-8")
    result = _json_run(
        *("-s", str(padded["src"]), "-t", str(padded["mt"]), "-r", str(padded["ref"])),
        *("-m", str(COMET_FIXTURES / "regression-xlmr")),
    )
    expected = [_oracle("regression-xlmr", "with_reference")[i] for i in kept]
    assert [row["score"] for row in result["scores"]] == pytest.approx(expected, abs=1e-5)


def test_text_output_and_compare_results_of_two_models(capsys, segment_files, tmp_path):
    files, kept = segment_files
    base = ["-s", str(files["src"]), "-t", str(files["mt"]), "-r", str(files["ref"])]
    assert main(["comet-score", *base, "-m", str(COMET_FIXTURES / "regression-xlmr")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["line", "score"] and len(lines) == 2 + len(kept) + 1
    # The table and the system score, printed to 6 decimals: unbabel-comet's scores of
    # the lines fed in, and their mean (its system score of these lines).
    xlmr = [_oracle("regression-xlmr", "with_reference")[i] for i in kept]
    rows = [line.split() for line in lines[2:-1]]
    assert [int(line) for line, _ in rows] == list(range(1, len(kept) + 1))
    assert [float(score) for _, score in rows] == pytest.approx(xlmr, abs=1e-5)
    assert lines[-1].startswith(f"{COMET_FIXTURES / 'regression-xlmr'} (regression_metric) score:")
    assert float(lines[-1].split()[-1]) == pytest.approx(sum(xlmr) / len(xlmr), abs=1e-5)
    for name in ("regression-xlmr", "regression-bert"):
        document = _json_run(*base, "-m", str(COMET_FIXTURES / name))
        (tmp_path / f"{name}.json").write_text(json.dumps(document), encoding="utf-8")
    arguments = [str(tmp_path / "regression-xlmr.json"), str(tmp_path / "regression-bert.json")]
    assert main(["compare-results", *arguments, "--json"]) == 0
    captured = capsys.readouterr()
    comparison = json.loads(captured.out)
    # Two models' results compare scorings, not systems: compared, with a warning.
    assert "warning:" in captured.err and "different models (" in captured.err
    assert comparison["metric"] == "score" and comparison["items"] == len(kept)
    bert = [_oracle("regression-bert", "with_reference")[i] for i in kept]
    mean_xlmr, mean_bert = sum(xlmr) / len(xlmr), sum(bert) / len(bert)
    assert comparison["mean_a"] == pytest.approx(mean_xlmr, abs=1e-5)
    assert comparison["mean_b"] == pytest.approx(mean_bert, abs=1e-5)
    assert comparison["difference"] == pytest.approx(mean_xlmr - mean_bert, abs=1e-5)
    winner = arguments[0] if mean_xlmr > mean_bert else arguments[1]
    assert comparison["winner"] == winner
    # compare-results' t-test is the paired one (compare/stats.py): scipy's ttest_rel on the
    # two models' unbabel-comet scores. Relative tolerance: the p-value lies far out in
    # the tail (about 5e-9), where score differences of 1e-7 already move its last digits.
    oracle = scipy_stats.ttest_rel(xlmr, bert)
    assert comparison["t_test"]["statistic"] == pytest.approx(oracle.statistic, rel=1e-3)
    assert comparison["t_test"]["p_value"] == pytest.approx(oracle.pvalue, rel=1e-3)
    assert comparison["significant"] is bool(oracle.pvalue < 0.05)


def test_word_level_models_give_error_spans(segment_files):
    files, kept = segment_files
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
    expected = _oracle_entry("unified-bert", "with_reference")
    metadata = expected["metadata"]
    rows = result["scores"]
    assert [row["score"] for row in rows] == pytest.approx(
        [expected["scores"][i] for i in kept], abs=1e-5
    )
    spans = 0
    for row, index in zip(rows, kept, strict=True):
        theirs = metadata["error_spans"][index]
        assert [(s["text"], s["severity"], s["start"], s["end"]) for s in row["error_spans"]] == [
            (e["text"], e["severity"], e["start"], e["end"]) for e in theirs
        ]
        assert [s["confidence"] for s in row["error_spans"]] == pytest.approx(
            [e["confidence"] for e in theirs], abs=1e-5
        )
        spans += len(theirs)
    assert spans > 0  # the lines fed in do have error spans to compare
    partial_keys = {"src_scores": "src", "ref_scores": "ref", "unified_scores": "unified"}
    assert set(rows[0]["partial_scores"]) == set(partial_keys.values())
    for key, ours in partial_keys.items():
        assert [row["partial_scores"][ours] for row in rows] == pytest.approx(
            [metadata[key][i] for i in kept], abs=1e-5
        )


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        (
            ["-m", "{fixtures}/regression-xlmr"],
            "{fixtures}/regression-xlmr needs references: pass -r/--references, a file "
            "aligned with {mt}, or use a reference-free model",
        ),
        (["-r", "{short}", "-m", "{fixtures}/regression-xlmr"], "has 2 lines but"),
        (["-r", "{ref}", "-m", "{fixtures}/no-such-model"], "could not be loaded"),
    ],
    ids=["no-reference", "unequal-lines", "missing-model"],
)
def test_errors_are_one_line_and_exit_2(capsys, segment_files, tmp_path, arguments, expected):
    files, _ = segment_files
    short = tmp_path / "short.txt"
    short.write_text("one\ntwo\n", encoding="utf-8")
    values = {"fixtures": COMET_FIXTURES, "short": short, "ref": files["ref"], "mt": files["mt"]}
    filled = [argument.format(**values) for argument in arguments]
    assert main(["comet-score", "-s", str(files["src"]), "-t", str(files["mt"]), *filled]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith("opik-semantic-metrics: error: ") and expected.format(**values) in line


def test_dtype_runs_the_encoder_in_that_type_and_the_json_says_which(segment_files):
    files, _ = segment_files
    arguments = ["-s", str(files["src"]), "-t", str(files["mt"]), "-r", str(files["ref"])]
    arguments += ["-m", str(COMET_FIXTURES / "regression-xlmr")]
    exact, half = _json_run(*arguments), _json_run(*arguments, "--dtype", "bf16")
    assert (exact["dtype"], half["dtype"]) == ("float32", "bfloat16")
    exact_scores, half_scores = ([row["score"] for row in r["scores"]] for r in (exact, half))
    assert len(half_scores) == len(exact_scores) and half_scores != exact_scores
