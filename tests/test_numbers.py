"""The package's one rule for numbers, through every public entry point that reads them.

A number is an int or a float, Python's or NumPy's; a bool, Python's or NumPy's, is none;
NaN, the infinities and an int past a float's range are not finite. Each entry point
below once had its own test, and they disagreed: the statistics read ``True`` as 1.0 and
crashed with ``OverflowError`` on ``10**400``, the calibration crashed on it too.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from opik.exceptions import MetricComputationError

from opik_semantic_metrics import AnswerMatch, SemanticMatch
from opik_semantic_metrics.answers.tiers import AnswerMatcher
from opik_semantic_metrics.cli.main import main
from opik_semantic_metrics.comet.checkpoint import parse_hparams
from opik_semantic_metrics.compare.corpus import collect_item_scores, compare_results
from opik_semantic_metrics.compare.correlation import summary_level, system_level
from opik_semantic_metrics.compare.stats import (
    bootstrap_interval,
    compare_systems,
    paired_bootstrap,
    paired_t_test,
)
from opik_semantic_metrics.inputs import as_real_number, finite_numbers, read_numbers
from opik_semantic_metrics.semantic.idf import SmoothedIdf

#: Values no list of scores may hold, with how the refusal writes each.
NOT_FINITE_NUMBERS = [
    pytest.param(True, "True", id="bool"),
    pytest.param(np.True_, "True", id="numpy-bool"),
    pytest.param(math.nan, "nan", id="nan"),
    pytest.param(np.float32("nan"), "nan", id="numpy-nan"),
    pytest.param(math.inf, "inf", id="inf"),
    pytest.param(-np.inf, "-inf", id="numpy-minus-inf"),
    pytest.param(10**400, "1000000000", id="int-past-float"),
]


def _refusal(name: str, item: str, shown: str) -> str:
    return (
        rf"Expected `{name}` to hold finite numbers only \(no NaN, inf or bool\); "
        rf"{item} is {shown}"
    )


# --- the primitives ---------------------------------------------------------------------


def test_numbers_of_every_kind_are_read_as_their_floats():
    # Dyadic values: each is exact as float16, float32 and float64.
    values = finite_numbers(
        [0.5, np.float32(0.25), np.float16(0.125), np.int64(3), 7, 2**70, torch.tensor(0.75)],
        "scores",
    )
    assert values.dtype == np.float64
    assert values.tolist() == [0.5, 0.25, 0.125, 3.0, 7.0, 2.0**70, 0.75]
    assert finite_numbers(np.array([[1, 2], [3, 4]], dtype=np.int8), "grid").tolist() == [
        [1.0, 2.0],
        [3.0, 4.0],
    ]
    assert finite_numbers(torch.tensor([0.5, 0.25]), "scores").tolist() == [0.5, 0.25]


@pytest.mark.parametrize(("value", "shown"), NOT_FINITE_NUMBERS)
def test_a_list_of_scores_is_refused_at_its_first_value_that_breaks_the_rule(value, shown):
    with pytest.raises(ValueError, match=_refusal("scores", "score 1", shown)):
        finite_numbers([0.5, value, math.nan], "scores", "score")
    with pytest.raises(ValueError, match=_refusal("grid", r"value \(1, 0\)", shown)):
        finite_numbers([[0.5, 0.25], [value, 0.5]], "grid")


def test_arrays_of_bools_or_text_are_no_scores():
    with pytest.raises(ValueError, match=_refusal("scores", "value 0", "True")):
        finite_numbers(np.array([True, False]), "scores")
    with pytest.raises(ValueError, match=_refusal("scores", "value 0", "True")):
        finite_numbers(torch.tensor([1.0, 0.0]) > torch.tensor([0.5, 0.5]), "scores")
    # NumPy would parse the text as 0.5.
    with pytest.raises(ValueError, match=_refusal("scores", "value 0", "'0.5'")):
        finite_numbers(["0.5"], "scores")
    with pytest.raises(ValueError, match=_refusal("scores", "value 0", "'0.5'")):
        finite_numbers(np.array(["0.5"]), "scores")
    with pytest.raises(ValueError, match="`scores` to be a list of numbers, got float"):
        finite_numbers(0.5, "scores")


def test_a_caller_may_word_its_own_refusal():
    values, refused = read_numbers([[0.5, 0.25], [np.float32(1.0), 2]], "grid")
    assert (values.tolist(), refused) == ([[0.5, 0.25], [1.0, 2.0]], None)
    assert read_numbers([0.5, np.True_], "scores")[1] == "1 is True"
    assert read_numbers([[0.5, 0.25], [math.inf, 2]], "grid")[1] == "(1, 0) is inf"


@pytest.mark.parametrize(
    ("value", "number"),
    [
        (0.5, 0.5),
        (np.float32(0.25), 0.25),
        (np.int64(-3), -3.0),
        (torch.tensor(0.75), 0.75),
        (np.array(2), 2.0),
        (10**400, math.inf),
        (-(10**400), -math.inf),
        (True, None),
        (np.False_, None),
        (torch.tensor(True), None),
        (torch.tensor([0.5]), None),
        ("0.5", None),
        (None, None),
    ],
)
def test_a_single_score_is_a_number_or_none(value, number):
    assert as_real_number(value) == number


# --- the statistics and the comparisons -------------------------------------------------


@pytest.mark.parametrize(("value", "shown"), NOT_FINITE_NUMBERS)
def test_the_statistics_refuse_what_is_no_finite_number(value, shown):
    good = [0.5, 0.25, 0.75]
    bad = [0.5, value, 0.75]
    with pytest.raises(ValueError, match=_refusal("scores_a", "score 1", shown)):
        compare_systems(bad, good)
    with pytest.raises(ValueError, match=_refusal("scores_b", "score 1", shown)):
        paired_t_test(good, bad)
    with pytest.raises(ValueError, match=_refusal("scores_b", "score 1", shown)):
        paired_bootstrap(good, bad, resamples=10)
    with pytest.raises(ValueError, match=_refusal("scores", "score 1", shown)):
        bootstrap_interval(bad, resamples=10)
    grid = [[0.5, 0.25, 0.75], [0.25, value, 0.5]]
    for level in (system_level, summary_level):
        with pytest.raises(ValueError, match=_refusal("human", r"score \(1, 1\)", shown)):
            level([[0.5, 0.25, 0.75], [0.25, 0.5, 0.5]], grid)


def test_numpy_and_torch_scores_give_what_python_floats_give():
    a, b = [0.75, 0.5, 0.875, 0.625], [0.5, 0.5, 0.25, 0.375]
    expected = compare_systems(a, b, resamples=50)
    assert compare_systems(np.array(a, dtype=np.float32), b, resamples=50) == expected
    assert compare_systems([np.float32(x) for x in a], torch.tensor(b), resamples=50) == expected
    assert compare_systems(list(torch.tensor(a)), b, resamples=50) == expected
    interval = bootstrap_interval([np.float16(0.5), np.int64(1)], resamples=20)
    assert (interval.mean, interval.count) == (0.75, 2)


@pytest.mark.parametrize(
    ("value", "kind"),
    [(True, "bool"), (np.True_, "bool"), (torch.tensor(True), "Tensor"), ("0.5", "str")],
)
def test_a_plain_list_of_scores_holds_numbers_only(value, kind):
    with pytest.raises(
        ValueError, match=rf"list of numbers, got {kind}\w* at position 1"
    ):  # np.True_ is numpy.bool (NumPy 2) or numpy.bool_ (NumPy 1)
        collect_item_scores([0.5, value])


def test_a_plain_list_of_scores_reads_numpy_and_tensor_values():
    collected = collect_item_scores([np.float32(0.25), torch.tensor(0.5), np.int64(1), 10**400])
    assert collected.scores == {"0": 0.25, "1": 0.5, "2": 1.0, "3": math.inf}
    # Read, then refused where they are compared: not finite.
    with pytest.raises(ValueError, match=_refusal("scores_a", "score 3", "inf")):
        compare_results([0.25, 0.5, 1.0, 10**400], [0.25, 0.5, 1.0, 0.5])
    with pytest.raises(ValueError, match=_refusal("scores_b", "score 0", "nan")):
        compare_results([0.25, 0.5], [math.nan, 0.5])


def test_a_result_file_holds_numbers_only(capsys, tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.txt"
    b.write_text("0.5\n0.25\n")
    for written, expected in [
        ("true", f"{a} has no 'f1' score for line 2"),
        ('"0.5"', f"{a} has no 'f1' score for line 2"),
        ("1e400", f"{a} line 2 has no finite score (inf)"),
        ("-1e400", f"{a} line 2 has no finite score (-inf)"),
        ("1" + "0" * 400, f"{a} line 2 has no finite score (1000000000"),
    ]:
        a.write_text('{"scores": [{"f1": 0.5}, {"f1": ' + written + "}]}")
        assert main(["compare-results", str(a), str(b)]) == 2
        captured = capsys.readouterr()
        [line] = captured.err.splitlines()
        assert expected in line


# --- settings, model scores and files ----------------------------------------------------


@pytest.mark.parametrize(("value", "shown"), NOT_FINITE_NUMBERS)
def test_a_tolerance_is_a_finite_number(value, shown):
    with pytest.raises(ValueError, match=rf"`tolerance` to be a finite number >= 0, got {shown}"):
        AnswerMatcher(tolerance=value)
    with pytest.raises(ValueError, match="`relative_tolerance` to be a finite number >= 0"):
        AnswerMatch(relative_tolerance=value, track=False)


def test_numpy_and_torch_tolerances_are_their_numbers():
    assert str(AnswerMatcher(tolerance=np.float32(0.25)).tolerance) == "0.25"
    assert str(AnswerMatcher(tolerance=np.int64(2)).tolerance) == "2"
    assert str(AnswerMatcher(tolerance=torch.tensor(0.5)).tolerance) == "0.5"


@pytest.mark.parametrize(
    ("scores", "where", "shown"),
    [
        ([0.5, math.nan], "item 1", "nan"),
        ([math.inf], "the item", "inf"),
        ([np.float32(0.5), np.float32("-inf")], "item 1", "-inf"),
    ],
)
def test_a_model_score_that_is_no_number_fails_the_call(scores, where, shown):
    with pytest.raises(
        MetricComputationError,
        match=rf"^AnswerMatch: the model gave {where} the score {shown}, which is no number",
    ):
        AnswerMatch(track=False).check_scores(scores)


def test_finite_model_scores_pass():
    AnswerMatch(track=False).check_scores([0.5, np.float32(0.25), 0.0, -1.0])


@pytest.fixture(scope="module")
def semantic_match() -> SemanticMatch:
    return SemanticMatch(track=False, device="cpu")


@pytest.mark.parametrize(("value", "shown"), NOT_FINITE_NUMBERS)
def test_human_scores_are_finite_numbers(semantic_match, value, shown):
    count = 4
    human = [1.0, 2.0, value, 3.0]
    with pytest.raises(ValueError, match=_refusal("human_scores", "human score 2", shown)):
        semantic_match.calibrate(["A cat."] * count, ["A dog."] * count, human)
    with pytest.raises(ValueError, match=r"a pair in `human_scores`, got shape \(4, 2\)"):
        semantic_match.calibrate(["A cat."] * count, ["A dog."] * count, np.ones((4, 2)))


def test_a_count_in_a_file_is_no_bool():
    with pytest.raises(ValueError, match="layer to be 'mix' or an integer, got True"):
        parse_hparams("regression_metric", {"layer": True}, {})
    assert parse_hparams("regression_metric", {"layer": 7}, {}).layer == 7
    with pytest.raises(ValueError, match="`num_documents` to be an integer"):
        SmoothedIdf.from_json({"num_documents": True, "weights": {}})


def test_a_count_of_ray_actors_is_a_positive_integer():
    pytest.importorskip("ray")
    from opik_semantic_metrics.distributed import plan_resources

    for bad in (True, 0, 2.0, "2"):
        with pytest.raises(ValueError, match="`num_actors` to be a positive integer"):
            plan_resources({"CPU": 8.0}, bad, None, 0)  # type: ignore[arg-type]
    # NumPy's ints are ints, as for every other count.
    plan = plan_resources({"CPU": 8.0}, np.int64(2), None, 0)  # type: ignore[arg-type]
    assert plan.num_actors == 2 and type(plan.num_actors) is int


@pytest.mark.parametrize(("value", "shown"), NOT_FINITE_NUMBERS)
def test_plotted_scores_are_finite_numbers(value, shown):
    pytest.importorskip("matplotlib")
    from opik_semantic_metrics.report.plots import score_distributions, score_scatter

    with pytest.raises(
        ValueError, match=rf"'a' has NaN or infinite 'f1' scores, .*; score 1 is {shown}"
    ):
        score_distributions({"f1": {"a": [0.5, value], "b": [0.25, 0.5]}})
    with pytest.raises(
        ValueError, match=rf"'a' has NaN or infinite 'f1' points, .*; value \(1, 0\) is {shown}"
    ):
        score_scatter({"f1": {"a": [(0.5, 0.25), (value, 0.5)]}}, x_label="human")
