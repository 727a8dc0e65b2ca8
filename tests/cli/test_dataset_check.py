"""``score-dataset`` refuses a dataset it could not score before Ray starts."""

from __future__ import annotations

import json

import pytest

from opik_semantic_metrics.cli.common import CliError
from opik_semantic_metrics.cli.dataset_check import REQUIRED_ARGUMENTS, check_dataset_input


def test_a_missing_path_or_a_text_file_is_refused(tmp_path):
    with pytest.raises(CliError, match=r"missing\.parquet does not exist"):
        check_dataset_input(tmp_path / "missing.parquet", "bertscore", {})
    text = tmp_path / "hyps.txt"
    text.write_text("A cat.\n", encoding="utf-8")
    with pytest.raises(CliError, match=r"hyps\.txt: expected a Parquet .* found \.txt"):
        check_dataset_input(text, "bertscore", {})


def test_a_directory_of_mixed_or_no_files_is_refused(tmp_path):
    with pytest.raises(CliError, match="found no file"):
        check_dataset_input(tmp_path, "bertscore", {})
    (tmp_path / "a.csv").write_text("output,reference\nA,B\n", encoding="utf-8")
    (tmp_path / "b.jsonl").write_text('{"output": "A", "reference": "B"}\n', encoding="utf-8")
    with pytest.raises(CliError, match=r"found \.csv, \.jsonl"):
        check_dataset_input(tmp_path, "bertscore", {})
    (tmp_path / "b.jsonl").unlink()
    (tmp_path / "_SUCCESS").write_text("", encoding="utf-8")  # Spark's marker is skipped
    check_dataset_input(tmp_path, "bertscore", {})


@pytest.mark.parametrize(
    ("header", "metric", "columns", "message"),
    [
        ("mt,gold", "bertscore", {}, "No column for output, reference in .*mt, gold"),
        ("mt,ref", "comet", {"output": "mt"}, "No column for input in"),
        ("mt,ref", "semantic-match", {"output": "hyp"}, "no column 'hyp' \\(for 'output'\\)"),
    ],
)
def test_a_missing_column_is_named_with_the_files_columns(
    tmp_path, header, metric, columns, message
):
    for suffix in (".csv", ".jsonl"):
        path = tmp_path / f"rows{suffix}"
        names = header.split(",")
        if suffix == ".csv":
            path.write_text(f"{header}\nA cat.,A cat.\n", encoding="utf-8")
        else:
            path.write_text(json.dumps(dict.fromkeys(names, "A cat.")) + "\n", encoding="utf-8")
        with pytest.raises(CliError, match=message):
            check_dataset_input(path, metric, columns)


def test_mapped_columns_and_a_parquet_schema_pass(tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    pa = pytest.importorskip("pyarrow")
    path = tmp_path / "rows.parquet"
    pq.write_table(pa.table({"src": ["a"], "mt": ["b"], "ref": ["c"]}), path)
    check_dataset_input(path, "comet", {"input": "src", "output": "mt", "reference": "ref"})
    with pytest.raises(CliError, match="No column for input"):
        check_dataset_input(path, "comet", {"output": "mt"})
    broken = tmp_path / "broken.parquet"
    broken.write_text("not parquet", encoding="utf-8")
    with pytest.raises(CliError, match="cannot be read as Parquet"):
        check_dataset_input(broken, "bertscore", {})


def test_the_required_arguments_are_the_catalogs():
    # The early check and --metric's choices read one catalog (a new metric in it appears
    # in both: tests/test_catalog.py); these are the metrics' documented row arguments.
    from opik_semantic_metrics.cli.score_dataset import METRICS

    assert set(REQUIRED_ARGUMENTS) == set(METRICS)
    assert REQUIRED_ARGUMENTS == {
        "bertscore": ("output", "reference"),
        "semantic-match": ("output", "reference"),
        "comet": ("input", "output"),
        "answer-match": ("output", "reference"),
    }
