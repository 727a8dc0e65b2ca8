"""What the command imports: never Opik; for ``--help``, not even PyTorch.

Importing Opik takes seconds (with bert_score installed, Opik imports it, pandas and
matplotlib), and PyTorch seconds more; the commands score, compare and draw without
Opik, and ``--help`` needs neither. Each case runs in a fresh interpreter, since this
test session has long imported both.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.probe import run_json_probe

ROOT = Path(__file__).resolve().parents[2]
COMET_MODEL = ROOT / "tests" / "fixtures" / "comet" / "regression-xlmr"

#: Runs the command's ``main`` on each argument list of argv[1] (a JSON list) in this
#: one interpreter, and prints, per run, its exit status and which of the watched
#: modules were imported by then.
_PROBE = """
import contextlib, io, json, sys
from opik_semantic_metrics.cli.main import main
watched = ("opik", "torch", "litellm", "ray")
report = []
for arguments in json.loads(sys.argv[1]):
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        try:
            status = main(arguments)
        except SystemExit as stop:
            status = stop.code
    if "--json" in arguments:
        # Written beside the candidates, for a later `compare-results` run.
        open(arguments[arguments.index("-c") + 1] + ".json", "w").write(output.getvalue())
    report.append({"status": status, "imported": [m for m in watched if m in sys.modules]})
print(json.dumps(report))
"""


def _probe(runs: list[list[str]]) -> list[dict]:
    return run_json_probe(_PROBE, [json.dumps(runs)], ROOT / "src", timeout=600)


COMMANDS = (
    "bert-score",
    "comet-score",
    "semantic-match",
    "answer-match",
    "compare-results",
    "heatmap",
    "report",
    "score-dataset",
)


def test_help_and_version_import_neither_opik_nor_torch():
    runs = [["--help"], ["--version"], *([command, "--help"] for command in COMMANDS)]
    for arguments, result in zip(runs, _probe(runs), strict=True):
        assert result == {"status": 0, "imported": []}, arguments


def test_the_commands_help_lists_every_command():
    from opik_semantic_metrics.cli.main import build_parser

    listed = build_parser().format_help()
    assert all(f"    {command}" in listed for command in COMMANDS)


def test_a_dataset_of_another_kind_is_refused_before_ray_or_a_model_loads(tmp_path):
    text = tmp_path / "hyps.txt"
    text.write_text("A cat.\n", encoding="utf-8")
    out = str(tmp_path / "out.parquet")
    runs = [
        ["score-dataset", str(text), "--out", out],
        ["answer-match", "-c", str(text), "-r", str(text)],
    ]
    results = _probe(runs)
    # 24.7 s in before, with a Ray cluster started, to refuse the .txt file.
    assert results[0] == {"status": 2, "imported": []}
    # Matching answers loads no model library either.
    assert results[1] == {"status": 0, "imported": []}


@pytest.mark.slow
def test_importing_the_package_imports_no_metric_until_one_is_asked_for():
    code = (
        "import sys, opik_semantic_metrics as package\n"
        "before = 'opik' in sys.modules or 'torch' in sys.modules\n"
        "from opik_semantic_metrics import BERTScore\n"
        "from opik_semantic_metrics.metrics.bertscore import BERTScore as defined\n"
        "print(before, BERTScore is defined, 'opik' in sys.modules, 'COMET' in dir(package))"
    )
    completed = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
        timeout=300,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.split() == ["False", "True", "True", "True"]


def test_unknown_names_are_attribute_errors():
    import opik_semantic_metrics

    with pytest.raises(AttributeError, match="no attribute 'BERTscore'"):
        opik_semantic_metrics.BERTscore  # noqa: B018


@pytest.mark.slow
def test_scoring_comparing_and_drawing_never_import_opik(tmp_path, minilm_path, stsb_pairs):
    pytest.importorskip("matplotlib")
    candidates, references = tmp_path / "candidates", tmp_path / "references"
    sources, other = tmp_path / "sources", tmp_path / "other"
    pairs = stsb_pairs[:3]
    candidates.write_text("".join(first + "\n" for first, _, _ in pairs), encoding="utf-8")
    references.write_text("".join(second + "\n" for _, second, _ in pairs), encoding="utf-8")
    sources.write_text("Der Hund bellt.\nDie Katze schläft.\nEs regnet.\n", encoding="utf-8")
    other.write_text("".join(second + "\n" for _, second, _ in stsb_pairs[10:13]), "utf-8")
    model = ["-m", str(minilm_path), "--device", "cpu"]
    aligned = ["-r", str(references)]
    comet = ["-s", str(sources), "-t", str(candidates), *aligned, "-m", str(COMET_MODEL)]
    runs = [
        ["bert-score", "-c", str(candidates), *aligned, *model, "--json"],
        ["bert-score", "-c", str(other), *aligned, *model, "--json"],
        ["compare-results", f"{candidates}.json", f"{other}.json", "--resamples", "50"],
        ["comet-score", *comet, "--device", "cpu"],
        ["heatmap", "-c", str(candidates), *aligned, "-o", str(tmp_path / "h.png"), *model],
        ["semantic-match", "-c", str(candidates), *aligned, "--fit", *model],
        ["answer-match", "-c", str(candidates), *aligned],
    ]
    results = _probe(runs)
    for arguments, result in zip(runs, results, strict=True):
        assert result["status"] == 0, arguments
        assert "opik" not in result["imported"], arguments
        assert "litellm" not in result["imported"], arguments
    assert "torch" in results[0]["imported"]  # the probe sees what the commands import
    assert (tmp_path / "h.png").stat().st_size > 0


def test_comet_scores_default_model_is_the_engines():
    # Written out in the command's module so that its --help need not import PyTorch.
    from opik_semantic_metrics.cli import comet
    from opik_semantic_metrics.comet.checkpoint import DEFAULT_MODEL

    assert comet.DEFAULT_MODEL == DEFAULT_MODEL
