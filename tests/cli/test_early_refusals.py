"""Options that cannot work are refused before a model loads or Ray starts.

Each case runs the real command in a fresh interpreter and reports, with its exit status
and error line, which of PyTorch, transformers, Ray and Opik were imported by then: a
refusal that imported none of them answered before any model could load (seconds) or any
Ray cluster start (tens of seconds). No timing is measured.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.cli_files import write_lines
from tests.probe import run_json_probe

ROOT = Path(__file__).resolve().parents[2]

#: Runs ``main`` on each argument list of argv[1] (a JSON list) in this interpreter, and
#: prints, per run, its exit status, its stderr and the watched modules imported by then.
#: argv[2], if given, is a module made unimportable first (``sys.modules[name] = None``),
#: as where its package is not installed.
_PROBE = """
import contextlib, io, json, sys
if len(sys.argv) > 2:
    sys.modules[sys.argv[2]] = None
from opik_semantic_metrics.cli.main import main
watched = ("torch", "ray", "opik")
report = []
for arguments in json.loads(sys.argv[1]):
    error = io.StringIO()
    with contextlib.redirect_stderr(error), contextlib.redirect_stdout(io.StringIO()):
        status = main(arguments)
    imported = [m for m in watched if sys.modules.get(m) is not None]
    report.append({"status": status, "error": error.getvalue(), "imported": imported})
print(json.dumps(report))
"""


def _probe(runs: list[list[str]], unimportable: str | None = None) -> list[dict]:
    extra = [unimportable] if unimportable else []
    return run_json_probe(_PROBE, [json.dumps(runs), *extra], ROOT / "src", timeout=300)


@pytest.fixture
def files(tmp_path) -> dict[str, str]:
    return {
        "candidates": str(write_lines(tmp_path / "c.txt", ["A cat sat.", "A dog ran."])),
        "references": str(write_lines(tmp_path / "r.txt", ["A cat sits.", "A dog runs."])),
        "same": str(write_lines(tmp_path / "same.txt", ["A cat sits.", "A cat sits."])),
        "dataset": str(
            write_lines(tmp_path / "rows.jsonl", ['{"output": "A cat.", "reference": "A cat."}'])
        ),
        "folder": str(tmp_path),
    }


def _refusals(files: dict[str, str]) -> list[tuple[list[str], str]]:
    """Each command line and the error it must end with."""
    pair = ["-c", files["candidates"], "-r", files["references"]]
    dataset = ["score-dataset", files["dataset"]]
    out = ["--out", str(Path(files["folder"]) / "scored.parquet")]
    minilm = ["-m", "all-MiniLM-L6-v2"]
    return [
        # Issue 54, item 3: --out x.txt became a directory named x.txt after the whole run.
        (
            [*dataset, "--out", str(Path(files["folder"]) / "x.txt")],
            "x.txt: expected a .parquet, .jsonl or .csv file, or a directory",
        ),
        # A misspelt --columns key, refused with the keys the metric reads.
        (
            [*dataset, "--columns", "refrence=reference", *out],
            "--metric bertscore reads no argument 'refrence'; its arguments are output, reference",
        ),
        (
            [*dataset, "--rescale-with-baseline", *out],
            "--rescale-with-baseline needs --lang (to find bert_score's baseline for the model)",
        ),
        # Issue 54, item 4: each of these was refused only after the model loaded.
        (
            ["bert-score", *pair, *minilm, "--rescale-with-baseline"],
            "--rescale-with-baseline needs --lang (to find bert_score's baseline for the "
            "model) or --baseline-path FILE",
        ),
        (
            ["bert-score", *pair, *minilm, "--lang", "en", "--rescale-with-baseline"],
            "no baseline for all-MiniLM-L6-v2 in --lang en; there are baselines for albert-base-v1",
        ),
        (
            ["bert-score", *pair, "--lang", "xx", "--rescale-with-baseline"],
            "no baselines for --lang xx; there are baselines for cs, de, en",
        ),
        (
            ["heatmap", *pair, *minilm, "-o", str(Path(files["candidates"]) / "pair.png")],
            "c.txt is a file, not a folder",
        ),
        (
            ["semantic-match", *pair, *minilm, "--state", str(Path(files["folder"]) / "no.json")],
            "no.json: No such file or directory",
        ),
        (
            ["semantic-match", "-c", files["candidates"], "-r", files["same"], *minilm, "--fit"],
            "--fit needs two or more different non-blank lines in",
        ),
        # Issue 54, item 8: the semantic tier from the command line, its threshold checked.
        (
            ["answer-match", *pair, "--semantic-model", "roberta-large"],
            "--semantic-model roberta-large needs --semantic-threshold",
        ),
        (
            ["answer-match", *pair, "--semantic-threshold", "0.5"],
            "--semantic-threshold needs --semantic-model",
        ),
    ]


def test_options_that_cannot_work_are_refused_before_a_model_loads_or_ray_starts(files):
    refusals = _refusals(files)
    results = _probe([arguments for arguments, _ in refusals])
    for (arguments, expected), result in zip(refusals, results, strict=True):
        assert result["status"] == 2, (arguments, result)
        [line] = result["error"].splitlines()
        assert line.startswith("opik-semantic-metrics: error: "), line
        assert expected in line, (arguments, line)
        # No Python argument names (`lang`) and no path inside the installed package.
        assert "`" not in line and "rescale_baseline" not in line, line
        assert result["imported"] == [], (arguments, result["imported"])


def test_score_dataset_without_ray_names_the_extra(files, tmp_path):
    out = str(tmp_path / "scored.parquet")
    [result] = _probe([["score-dataset", files["dataset"], "--out", out]], unimportable="ray")
    assert result["status"] == 2
    [line] = result["error"].splitlines()
    assert 'score-dataset needs the ray extra: pip install "opik-semantic-metrics[ray]"' in line
    assert not Path(out).exists()


def test_the_packaged_baselines_are_the_engines():
    # Written out in the command's module so that the check needs no PyTorch.
    from opik_semantic_metrics.bertscore import baseline
    from opik_semantic_metrics.cli import common

    assert baseline.PACKAGED_BASELINES.resolve() == common.PACKAGED_BASELINES


def test_a_baseline_that_exists_passes_the_check(tmp_path):
    from opik_semantic_metrics.cli.common import check_rescaling

    check_rescaling(True, None, None)  # roberta-large, English: bert_score's default
    check_rescaling(True, "EN", "roberta-large")
    check_rescaling(True, "en", "microsoft/deberta-xlarge-mnli")
    check_rescaling(True, None, "all-MiniLM-L6-v2", str(write_lines(tmp_path / "b.tsv", ["x"])))
    check_rescaling(False, None, "all-MiniLM-L6-v2")
