"""``score-dataset`` refuses a dataset it could not score before Ray starts."""

from __future__ import annotations

import json

import pytest

from opik_semantic_metrics.cli.common import CliError
from opik_semantic_metrics.cli.dataset_check import (
    ONE_OF_ARGUMENTS,
    OPTIONAL_ARGUMENTS,
    REQUIRED_ARGUMENTS,
    check_column_arguments,
    check_dataset_input,
)


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
        # AnswerMatch reads a reference or acceptable answers: it needs one of them.
        ("output,gold", "answer-match", {}, "No column for reference or acceptable_answers in"),
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
        "answer-match": ("output",),
    }
    # AnswerMatch needs a reference or acceptable answers, one of them.
    assert ONE_OF_ARGUMENTS == {
        "bertscore": (),
        "semantic-match": (),
        "comet": (),
        "answer-match": ("reference", "acceptable_answers"),
    }


@pytest.mark.parametrize(
    ("metric", "columns", "message"),
    [
        ("bertscore", {"refrence": "gold"}, "its arguments are output, reference\\.$"),
        ("bertscore", {"input": "src"}, "--metric bertscore reads no argument 'input'"),
        ("comet", {"source": "src"}, "its arguments are input, output, reference\\.$"),
    ],
)
def test_a_columns_key_the_metric_does_not_read_is_refused(metric, columns, message):
    with pytest.raises(CliError, match=message):
        check_column_arguments(metric, columns)


def test_every_argument_a_metric_reads_is_a_columns_key():
    for metric, required in REQUIRED_ARGUMENTS.items():
        arguments = required + OPTIONAL_ARGUMENTS[metric]
        check_column_arguments(metric, {argument: argument for argument in arguments})


@pytest.mark.parametrize("out", ["scored.parquet", "scored.JSONL", "scored.csv", "scored"])
def test_an_output_file_or_directory_is_taken(out):
    from opik_semantic_metrics.cli.score_dataset import output_path

    assert str(output_path(out)) == out


def test_an_output_of_another_suffix_is_refused_unless_it_is_a_directory(tmp_path):
    from opik_semantic_metrics.cli.score_dataset import output_path

    # It was written, after the whole run, as a directory of Parquet files named x.txt.
    with pytest.raises(CliError, match=r"--out .*x\.txt: expected a \.parquet, \.jsonl or \.csv"):
        output_path(str(tmp_path / "x.txt"))
    assert str(output_path(f"{tmp_path}/run.v2/")) == f"{tmp_path}/run.v2"
    (tmp_path / "run.v3").mkdir()
    assert output_path(str(tmp_path / "run.v3")) == tmp_path / "run.v3"
