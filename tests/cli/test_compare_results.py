"""``opik-semantic-metrics compare-results``: paired tests of two result files, and bad files."""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path

import pytest

from opik_semantic_metrics.cli.main import main
from opik_semantic_metrics.compare.stats import bootstrap_interval, compare_systems
from tests.cli.cli_files import write_lines, write_text_files

MINILM = ["-m", "all-MiniLM-L6-v2", "--device", "cpu"]


@pytest.fixture(scope="module")
def text_files(tmp_path_factory, stsb_pairs) -> dict[str, Path]:
    return write_text_files(tmp_path_factory.mktemp("cli"), stsb_pairs)


@pytest.fixture(scope="module")
def result_files(tmp_path_factory, text_files) -> dict[str, str]:
    """Two systems' bert-score --json results on the same 12 lines."""
    folder = tmp_path_factory.mktemp("results")
    paths = {}
    for name, candidates in (("good", "candidates"), ("other", "references_2")):
        arguments = ["bert-score", "-c", str(text_files[candidates])]
        arguments += ["-r", str(text_files["references_1"]), "--json", *MINILM]
        output = io.StringIO()
        with contextlib.redirect_stdout(output):
            assert main(arguments) == 0
        path = folder / f"{name}.json"
        path.write_text(output.getvalue(), encoding="utf-8")
        paths[name] = str(path)
    return paths


def _f1(path: str) -> list[float]:
    return [row["f1"] for row in json.loads(open(path, encoding="utf-8").read())["scores"]]


def test_json_comparison_equals_the_stats_module(capsys, result_files):
    good, other = result_files["good"], result_files["other"]
    assert main(["compare-results", good, other, "--names", "good", "other", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    expected = compare_systems(_f1(good), _f1(other), name_a="good", name_b="other")
    assert result["metric"] == "f1" and result["items"] == 12
    assert result["winner"] == expected.winner == "good"
    assert result["significant"] is expected.significant is True
    assert result["t_test"]["p_value"] == pytest.approx(expected.t_test.p_value)
    assert result["bootstrap"]["wins_a"] == expected.bootstrap.wins_a
    assert result["intervals"]["good"]["low"] == pytest.approx(bootstrap_interval(_f1(good)).low)


def test_text_comparison_gives_tables_and_a_verdict(capsys, result_files):
    assert (
        main(["compare-results", result_files["other"], result_files["good"], "--score", "recall"])
        == 0
    )
    out = capsys.readouterr().out
    assert "95% low" in out and "t-test p" in out
    last = out.strip().splitlines()[-1]
    assert last.startswith(f"{result_files['good']} scores significantly higher than ")
    assert "on recall" in last


def _score_files(tmp_path: Path, scores_a: list[float], scores_b: list[float]) -> tuple[Path, Path]:
    """Two plain score files, a.txt and b.txt, a score a line."""
    return (
        write_lines(tmp_path / "a.txt", [str(score) for score in scores_a]),
        write_lines(tmp_path / "b.txt", [str(score) for score in scores_b]),
    )


def test_the_verdict_writes_the_p_value_as_the_table_does(capsys, tmp_path):
    # A small p: the table said 1.1e-07 and the sentence 1.075e-07.
    scores_a = [0.5 + 0.01 * (i % 7) for i in range(40)]
    scores_b = [a - 0.05 + 0.002 * (i % 3) for i, a in enumerate(scores_a)]
    a, b = _score_files(tmp_path, scores_a, scores_b)
    assert main(["compare-results", str(a), str(b)]) == 0
    out = capsys.readouterr().out
    p_value = compare_systems(scores_a, scores_b).t_test.p_value
    assert p_value < 1e-4
    [table_row] = [
        line for line in out.splitlines() if line.startswith("score") and f"{a}  {b}" in line
    ]
    [shown] = re.findall(r"paired t-test p = (\S+),", out)
    assert shown == f"{p_value:.1e}" and shown in table_row.split()


def test_a_system_against_its_rerun_within_batching_noise_is_a_tie(capsys, tmp_path):
    a, b = _score_files(
        tmp_path, [0.5, 0.7, 0.6, 0.65], [0.5000002, 0.7000003, 0.6000001, 0.6500002]
    )
    assert main(["compare-results", str(a), str(b)]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last == "A tie: the means 0.6125000 and 0.6125002 are within 1e-06 of each other."


def test_tie_tolerance_zero_compares_exactly(capsys, tmp_path):
    scores_a, scores_b = [0.5, 0.7, 0.6, 0.65], [0.5000002, 0.7000003, 0.6000001, 0.6500002]
    a, b = _score_files(tmp_path, scores_a, scores_b)
    assert main(["compare-results", str(a), str(b), "--json", "--tie-tolerance", "0"]) == 0
    result = json.loads(capsys.readouterr().out)
    # B is ahead on every item by a hair: with no tolerance, it wins all four.
    assert result["winner"] == str(b)
    assert result["bootstrap"]["ties"] == 0
    assert result["bootstrap"]["wins_b"] == 1000
    expected = compare_systems(scores_a, scores_b, tie_tolerance=0.0, name_a=str(a), name_b=str(b))
    assert result["t_test"]["p_value"] == pytest.approx(expected.t_test.p_value)
    assert main(["compare-results", str(a), str(b), "--tie-tolerance", "1e-3"]) == 0
    assert capsys.readouterr().out.strip().splitlines()[-1].endswith("within 0.001 of each other.")


def test_plain_number_files(capsys, tmp_path):
    a, b = _score_files(tmp_path, [0.5, 0.7, 0.6, 0.65], [0.5, 0.69, 0.61, 0.66])
    assert main(["compare-results", str(a), str(b), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    expected = compare_systems([0.5, 0.7, 0.6, 0.65], [0.5, 0.69, 0.61, 0.66])
    assert result["difference"] == pytest.approx(expected.difference)
    assert result["significant"] is False


def test_json_output_is_strict_json_when_a_statistic_is_infinite(capsys, tmp_path):
    # B loses both items by 0.4: t is -inf, p 0.
    a, b = _score_files(tmp_path, [0.9, 0.8], [0.5, 0.4])
    assert main(["compare-results", str(a), str(b), "--json"]) == 0

    def refuse(constant: str) -> None:
        raise AssertionError(f"{constant} is not JSON")

    result = json.loads(capsys.readouterr().out, parse_constant=refuse)
    assert result["t_test"] == {"statistic": None, "p_value": 0.0}
    assert result["winner"] == str(a)


@pytest.mark.parametrize(
    ("a", "b", "extra", "expected"),
    [
        ("0.5\n0.6\n", "0.5\n", [], "{b} has 1 score but {a} has 2"),
        ("0.5\nabc\n", "0.5\n0.6\n", [], "{a} line 2 is not a number: 'abc'"),
        ("0.5\nnan\n", "0.5\n0.6\n", [], "{a} line 2 has no finite score"),
        ('{"no": 1}\n', "0.5\n", [], "{a} is not a result file with a 'scores' list"),
        ('{"scores": [{"x": 1}]}', "0.5\n", [], "{a}: pass --score, one of x"),
        # A --score no line has: the scores that exist, not "no 'nope' score for line 1".
        (
            '{"scores": [{"line": 1, "f1": 0.5, "precision": 0.4, "best_reference": 0, '
            '"truncated": false}]}',
            "0.5\n",
            ["--score", "nope"],
            "{a} has no score 'nope'; its scores are f1, precision, best_reference",
        ),
        ('{"scores": [{"f1": 0.5}, {"f1": null}]}', "0.5\n0.6\n", [], "{a} line 2 has no finite"),
        ('{"scores": [{"f1": 0.5}, {"r": 1}]}', "0.5\n0.6\n", [], "no 'f1' score for line 2"),
        # Python's float() reads "1_0" as 10; no result command writes that.
        ("0.5\n1_0\n", "0.5\n0.6\n", [], "{a} line 2 is not a number: '1_0'"),
        ("0.5\n0.6\n", "0.4\n0.5\n", ["--seed", "-1"], "--seed must be 0 or more, got -1"),
        (
            '{"metric": "bertscore", "scores": [{"f1": 0.5}]}',
            '{"metric": "comet", "scores": [{"f1": 0.5}]}',
            [],
            "scored by one metric, found {a}: bertscore; {b}: comet",
        ),
        ("0.5\n", "0.6\n", ["--names", "x", "x"], "different names"),
        ("0.5\n0.6\n", "0.4\n0.5\n", ["--alpha", "2"], "--alpha between 0 and 1"),
        ("0.5\n0.6\n", "0.4\n0.5\n", ["--resamples", "0"], "--resamples to be a positive"),
        # numpy's MemoryError (7.28 TiB) ended in a traceback.
        (
            "0.5\n0.6\n",
            "0.4\n0.5\n",
            ["--resamples", "1000000000000"],
            "--resamples 1000000000000 needs more memory than there is",
        ),
        ("0.5\n0.6\n", "0.4\n0.5\n", ["--tie-tolerance", "-1"], "--tie-tolerance to be a"),
        ('{"scores": [{"f1": 1%s}]}' % ("0" * 400), "0.5\n", [], "{a} line 1 has no finite"),
        ('{"scores": [{"f1": 1%s}]}' % ("0" * 5000), "0.5\n", [], "not a result file"),
        ('{"scores": ' + "[" * 100_000 + "]" * 100_000 + "}", "0.5\n", [], "not a result file"),
        ("1e308\n1e308\n", "-1e308\n-1e308\n", [], "magnitude up to 1e+150, got 1e+308"),
        (
            '{"dtype": "float32", "scores": [{"f1": 0.5}]}',
            '{"dtype": "bfloat16", "scores": [{"f1": 0.5}]}',
            [],
            "one weight type, found {a}: float32; {b}: bfloat16",
        ),
    ],
    ids=[
        "lengths",
        "not-a-number",
        "nan",
        "no-scores",
        "no-key",
        "unknown-score",
        "null",
        "no-key-on-a-line",
        "underscore-digits",
        "negative-seed",
        "two-metrics",
        "same-names",
        "alpha",
        "resamples",
        "resamples-past-memory",
        "negative-tie-tolerance",
        "int-past-float",
        "int-past-4300-digits",
        "nested-past-the-recursion-limit",
        "finite-but-overflowing",
        "two-weight-types",
    ],
)
def test_bad_result_files_are_a_clear_error(capsys, tmp_path, a, b, extra, expected):
    path_a, path_b = tmp_path / "a.txt", tmp_path / "b.txt"
    path_a.write_text(a)
    path_b.write_text(b)
    assert main(["compare-results", str(path_a), str(path_b), *extra]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    [line] = captured.err.splitlines()
    assert expected.format(a=path_a, b=path_b) in line


@pytest.mark.slow
@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (Linux)")
def test_a_full_disk_under_standard_output_is_a_clear_error(tmp_path):
    # `--json > a.json` on a full disk: the OSError from print() ended in a traceback.
    import subprocess
    import sys

    a, b = _score_files(tmp_path, [0.5, 0.7, 0.6], [0.5, 0.6, 0.61])
    with open("/dev/full", "w") as full:
        finished = subprocess.run(
            [
                sys.executable,
                "-m",
                "opik_semantic_metrics",
                "compare-results",
                str(a),
                str(b),
                "--json",
            ],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            check=False,
        )
    assert finished.returncode == 2
    assert finished.stderr.splitlines() == [
        "opik-semantic-metrics: error: [Errno 28] No space left on device"
    ]


def test_a_winner_without_significance_is_said_to_be_so(capsys, tmp_path):
    a, b = _score_files(tmp_path, [0.5, 0.7, 0.6, 0.65], [0.5, 0.69, 0.61, 0.66])
    assert main(["compare-results", str(a), str(b)]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    # B is ahead by 0.0025 on average, far inside the noise of four items.
    assert last.startswith(f"{b} scores not significantly higher than {a} on score (")


def test_the_seed_chooses_the_resamples(capsys, tmp_path):
    scores_a, scores_b = [0.5, 0.7, 0.6, 0.65, 0.3], [0.52, 0.69, 0.61, 0.62, 0.35]
    a, b = _score_files(tmp_path, scores_a, scores_b)
    bootstraps = {}
    for seed in (0, 7):
        assert main(["compare-results", str(a), str(b), "--json", "--seed", str(seed)]) == 0
        bootstraps[seed] = json.loads(capsys.readouterr().out)["bootstrap"]
        expected = compare_systems(scores_a, scores_b, seed=seed).bootstrap
        assert bootstraps[seed]["wins_a"] == expected.wins_a
    assert bootstraps[0]["wins_a"] != bootstraps[7]["wins_a"]


@pytest.mark.parametrize(
    ("type_a", "type_b"),
    [("bfloat16", "bfloat16"), ("float32", None)],
    ids=["one-type", "one-file-says-none"],
)
def test_result_files_of_one_weight_type_or_silent_on_it_are_compared(
    capsys, tmp_path, type_a, type_b
):
    documents = []
    for dtype, scores in ((type_a, [0.5, 0.6, 0.7]), (type_b, [0.4, 0.6, 0.6])):
        document = {"scores": [{"f1": score} for score in scores]}
        documents.append(document if dtype is None else {"dtype": dtype, **document})
    path_a, path_b = tmp_path / "a.json", tmp_path / "b.json"
    path_a.write_text(json.dumps(documents[0]))
    path_b.write_text(json.dumps(documents[1]))
    assert main(["compare-results", str(path_a), str(path_b), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["items"] == 3


def test_files_of_different_settings_are_compared_with_a_warning(capsys, tmp_path):
    # Other settings, or one model named two ways: worth a warning, not a refusal.
    paths = []
    for name, hash_text in (("a", "m_L6_no-idf"), ("b", "m_L6_idf")):
        document = {"hash": hash_text + "_version=0.3.12(hug_trans=5.24.0)"}
        document["scores"] = [{"f1": value} for value in (0.5, 0.6, 0.7)]
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(document))
        paths.append(str(path))
    assert main(["compare-results", *paths, "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["items"] == 3
    [warning] = captured.err.splitlines()
    assert "warning:" in warning and "different hashes (" in warning
    assert ": m_L6_no-idf; " in warning and warning.endswith("not the systems'.")


def test_json_after_blank_lines_and_one_setting_under_two_releases_are_compared(capsys, tmp_path):
    # A leading blank line once sent a JSON file to the number reader; and the package
    # versions and tokenizer class in a bert_score hash do not make two scorings different.
    hashes = (
        "m_L6_no-idf_version=0.3.12(hug_trans=4.40.2)",
        "m_L6_no-idf_version=0.3.12(hug_trans=5.24.0)_fast-tokenizer",
    )
    paths = []
    for name, hash_text, scores in (
        ("a", hashes[0], [0.5, 0.6, 0.7]),
        ("b", hashes[1], [0.4, 0.6, 0.6]),
    ):
        document = {"metric": "bertscore", "hash": hash_text, "scores": [{"f1": v} for v in scores]}
        path = tmp_path / f"{name}.json"
        path.write_text("\n\n" + json.dumps(document))
        paths.append(str(path))
    assert main(["compare-results", *paths, "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["items"] == 3
    assert captured.err == ""  # the versions and the tokenizer class are not settings


@pytest.mark.parametrize("output", [[], ["--json"]])
def test_the_former_name_compare_runs_the_same_command(capsys, tmp_path, output):
    # Scripts written for 0.1.0 call `compare`: the alias must print what compare-results does.
    a, b = _score_files(tmp_path, [0.5, 0.75, 0.25, 1.0], [0.25, 0.5, 0.25, 0.5])
    printed = {}
    for name in ("compare-results", "compare"):
        assert main([name, str(a), str(b), "--resamples", "200", "--seed", "3", *output]) == 0
        printed[name] = capsys.readouterr()
    assert printed["compare"] == printed["compare-results"]
    out = printed["compare"].out
    # The means by hand: 2.5 / 4 and 1.5 / 4.
    if output:
        assert json.loads(out)["mean_a"] == pytest.approx(0.625)
        assert json.loads(out)["mean_b"] == pytest.approx(0.375)
    else:
        assert "0.6250" in out and "0.3750" in out
        assert out.strip().splitlines()[-1].startswith(f"{a} scores ")
