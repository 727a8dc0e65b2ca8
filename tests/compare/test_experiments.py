"""Collecting Opik test results into per-item scores, summarising and running experiments."""

from __future__ import annotations

import math
import random
from typing import Any

import opik
import pytest
from opik import id_helpers
from opik.config import OpikConfig
from opik.evaluation import test_case, test_result
from opik.evaluation.metrics import Equals, base_metric
from opik.evaluation.metrics.score_result import ScoreResult

from opik_semantic_metrics import BERTScore
from opik_semantic_metrics.compare.experiments import (
    ExperimentRunner,
    ExperimentScores,
    aligned_scores,
    collect_scores,
    item_order,
    opik_server_configured,
    stored_item_ids,
    summarize,
)
from opik_semantic_metrics.compare.stats import bootstrap_interval, compare_systems

ITEMS = [
    {
        "doc": "d1",
        "reference": "A man is playing a guitar.",
        "outputs": {"a": "A man plays a guitar.", "b": "A dog runs."},
    },
    {
        "doc": "d2",
        "reference": "A woman slices an onion.",
        "outputs": {"a": "A woman cuts an onion.", "b": None},
    },
    {
        "doc": "d3",
        "reference": "Two kids play football.",
        "outputs": {"a": "Two children play soccer.", "b": "Kids."},
    },
]


@pytest.fixture(scope="module")
def bertscore() -> BERTScore:
    return BERTScore(model="all-MiniLM-L6-v2", device="cpu", track=False)


def _run(system: str, metrics: list[Any]) -> Any:
    return opik.evaluate_on_dict_items(
        items=ITEMS,
        task=lambda item: {"output": item["outputs"][system]},
        scoring_metrics=metrics,
    )


def test_collect_scores_keys_items_and_lists_failures(bertscore):
    result = _run("b", [bertscore])
    collected = collect_scores(result.test_results, "b", key_field="doc")
    assert collected.name == "b"
    assert collected.items == ("d1", "d2", "d3")
    assert list(collected.scores["bertscore_f1"]) == ["d1", "d3"]
    # d2's output is None: the metric failed; Opik reports one failed result named after it.
    assert collected.failed == {"bertscore": ("d2",)}
    assert collected.metrics == (
        "bertscore_f1",
        "bertscore_precision",
        "bertscore_recall",
        "bertscore",
    )
    [expected] = bertscore.engine.score(["A dog runs."], ["A man is playing a guitar."])
    assert collected.scores["bertscore_f1"]["d1"] == pytest.approx(expected.f1, abs=1e-6)


def test_collect_scores_uses_opik_item_ids_without_a_key_field():
    result = _run("a", [Equals(track=False)])
    collected = collect_scores(result.test_results, "a")
    assert sorted(collected.scores["equals_metric"]) == [
        "temp_item_0",
        "temp_item_1",
        "temp_item_2",
    ]


class _Length(base_metric.BaseMetric):
    """A third-party metric whose score can be NaN or infinite, as nothing forbids."""

    def score(self, output: Any, **ignored_kwargs: Any) -> ScoreResult:
        scores = {"A dog runs.": math.nan, "Kids.": math.inf}
        return ScoreResult(name=self.name, value=scores.get(output, float(len(output or ""))))


def test_a_score_that_is_not_a_finite_number_counts_as_failed():
    # Not a crash of the summary, for the whole metric and with no item named.
    b, a = (
        collect_scores(_run(system, [_Length(track=False)]).test_results, system, key_field="doc")
        for system in ("b", "a")
    )
    assert b.scores == {"_Length": {"d2": 0.0}}
    assert b.failed == {"_Length": ("d1", "d3")}
    [summary] = summarize([b, a])
    assert (summary.items, summary.excluded) == (1, 2)


class _Untyped(base_metric.BaseMetric):
    """A third-party metric whose score is not always a number, as Opik lets through."""

    def score(self, output: Any, **ignored_kwargs: Any) -> ScoreResult:
        scores = {"A man plays a guitar.": None, "A woman cuts an onion.": "6"}
        return ScoreResult(name=self.name, value=scores.get(output, True))  # type: ignore[arg-type]


def test_a_score_that_is_no_number_counts_as_failed_and_a_bool_as_one_or_zero():
    collected = collect_scores(
        _run("a", [_Untyped(track=False)]).test_results, "a", key_field="doc"
    )
    assert collected.failed == {"_Untyped": ("d1", "d2")}
    assert collected.scores == {"_Untyped": {"d3": 1.0}}


def test_collect_scores_rejects_missing_and_repeated_keys():
    result = _run("a", [Equals(track=False)])
    with pytest.raises(ValueError, match="field 'nope'"):
        collect_scores(result.test_results, "a", key_field="nope")
    with pytest.raises(ValueError, match="appears twice"):
        collect_scores(result.test_results * 2, "a", key_field="doc")
    with pytest.raises(ValueError, match="`trials` to be 'reject' or 'mean', got 'max'"):
        collect_scores(result.test_results, "a", trials="max")  # type: ignore[arg-type]


def _results(scores: dict[str, float | None], trial: int = 0) -> list[test_result.TestResult]:
    """Opik test results of the metric "m" by item id; ``None`` is a failed score."""
    return [
        test_result.TestResult(
            test_case=test_case.TestCase(trace_id=f"t{item}", dataset_item_id=item, task_output={}),
            score_results=[
                ScoreResult(
                    name="m", value=0.0 if score is None else score, scoring_failed=score is None
                )
            ],
            trial_id=trial,
        )
        for item, score in scores.items()
    ]


def test_collect_scores_orders_items_naturally_whatever_order_the_threads_finished():
    scores: dict[str, float | None] = {f"item_{index}": index / 10 for index in range(12)}
    scores["item_10"] = None
    results = _results(scores)
    random.Random(0).shuffle(results)
    collected = collect_scores(results, "a")
    natural = tuple(f"item_{index}" for index in range(12))
    scored = [item for item in natural if item != "item_10"]
    assert collected.items == natural
    assert list(collected.scores["m"]) == scored
    assert collected.failed == {"m": ("item_10",)}
    # Paired with another experiment, in that order too.
    second = collect_scores(_results({item: 0.5 for item in reversed(natural)}), "b")
    keys, values = aligned_scores([collected, second], "m")
    assert keys == scored
    assert values["a"] == [index / 10 for index in range(12) if index != 10]


def test_item_order_reads_digit_runs_as_numbers_of_any_length():
    long_run = "item_" + "9" * 5000  # past the digits int() converts
    keys = [long_run, "item_10", "item_01", "item_2", "item_1", "b", "a10", "a9"]
    assert sorted(keys, key=item_order) == [
        "a9",
        "a10",
        "b",
        "item_01",
        "item_1",
        "item_2",
        "item_10",
        long_run,
    ]


def test_opiks_uuid7_item_ids_keep_the_order_they_were_made_in():
    # Their hex digit runs read as numbers put them in no order at all: the millisecond
    # after 01939999 is 0193999a, whose digit run 0193999 is the smaller number.
    made = [
        "01939999-0000-7000-8000-000000000000",
        "0193999a-0000-7000-8000-000000000000",
        *(id_helpers.generate_id() for _ in range(20)),
    ]
    assert made == sorted(made)  # made in text order
    assert sorted(reversed(made), key=item_order) == made
    # Beside other keys the order stays total.
    assert sorted([made[1], "item_2", made[0]], key=item_order) == [made[0], made[1], "item_2"]


def test_collect_scores_refuses_two_runs_joined_and_two_metrics_of_one_name():
    # evaluate_on_dict_items names the items of every run temp_item_0, ...: two runs of
    # one item were averaged as its trials, 0.8869 and 0.7364 giving 0.8116.
    first, second = _results({"temp_item_0": 0.8869}), _results({"temp_item_0": 0.7364})
    with pytest.raises(ValueError, match="'temp_item_0' has two 'm' scores in trial 0"):
        collect_scores(first + second, "a", trials="mean")
    # Two metrics left at one name in one run: their scores were averaged as one's.
    [both] = _results({"item_0": 0.8869})
    both.score_results.append(ScoreResult(name="m", value=0.8515))
    # Two runs of other metrics on the same items join well: each score is there once.
    other = _results({"temp_item_0": 0.5})
    other[0].score_results[0].name = "bleu"
    joined = collect_scores(first + other, "a", trials="mean")
    assert joined.scores == {"m": {"temp_item_0": 0.8869}, "bleu": {"temp_item_0": 0.5}}
    with pytest.raises(ValueError, match=r"'item_0' has two 'm' scores in trial 0 .* own `name`"):
        collect_scores([both], "a")


def test_collect_scores_averages_trials_when_asked():
    trials = _results({"item_2": 0.5, "item_10": None, "item_3": None}) + _results(
        {"item_2": 0.7, "item_10": 0.4, "item_3": None}, trial=1
    )
    with pytest.raises(ValueError, match="appears twice"):
        collect_scores(trials, "a")
    collected = collect_scores(trials, "a", trials="mean")
    assert collected.items == ("item_2", "item_3", "item_10")
    assert collected.scores == {"m": {"item_2": pytest.approx(0.6), "item_10": 0.4}}
    # item_10 failed in one trial only: it has a score, so it is not failed.
    assert collected.failed == {"m": ("item_3",)}


def test_summarize_compares_systems_on_the_items_all_scored(bertscore):
    runs = [
        collect_scores(_run(system, [bertscore]).test_results, system, key_field="doc")
        for system in ("a", "b")
    ]
    [summary] = summarize(runs, ["bertscore_f1"], resamples=200)
    keys, values = aligned_scores(runs, "bertscore_f1")
    assert keys == ["d1", "d3"]
    assert (summary.items, summary.excluded) == (2, 1)
    assert summary.intervals["a"] == bootstrap_interval(values["a"], resamples=200)
    [comparison] = summary.comparisons
    assert comparison == compare_systems(
        values["a"], values["b"], name_a="a", name_b="b", resamples=200
    )
    assert summary.ranking == ("a", "b")


def test_summarize_takes_every_metric_of_the_first_experiment_in_order():
    first = ExperimentScores(
        "x", ("j", "k"), {"m1": {"k": 0.5, "j": 0.2}, "m2": {"k": 1.0, "j": 0.0}}, {}
    )
    second = ExperimentScores(
        "y", ("j", "k"), {"m1": {"k": 0.4, "j": 0.05}, "m2": {"k": 0.0, "j": 1.0}}, {}
    )
    summaries = summarize([first, second], resamples=50)
    assert [summary.metric for summary in summaries] == ["m1", "m2"]
    assert summaries[0].intervals["x"].mean == pytest.approx(0.35)
    assert summaries[0].ranking == ("x", "y")


def test_summarize_all_metrics_leaves_out_the_name_of_failed_results(bertscore):
    # System b's None output fails BERTScore on d2: that result is named "bertscore".
    runs = [
        collect_scores(_run(system, [bertscore]).test_results, system, key_field="doc")
        for system in ("b", "a")
    ]
    assert "bertscore" in runs[0].metrics
    summaries = summarize(runs, resamples=50)
    assert sorted(summary.metric for summary in summaries) == [
        "bertscore_f1",
        "bertscore_precision",
        "bertscore_recall",
    ]
    assert {(summary.items, summary.excluded) for summary in summaries} == {(2, 1)}


def test_experiments_tied_with_the_one_above_share_its_rank():
    scores = {"1": 0.5, "2": 0.7, "3": 0.6}
    first = ExperimentScores("first", ("1", "2", "3"), {"m": scores}, {})
    # The same system again, its scores moved by batching noise (under 1e-6).
    rerun = ExperimentScores(
        "rerun", ("1", "2", "3"), {"m": {key: value + 3e-7 for key, value in scores.items()}}, {}
    )
    worse = ExperimentScores("worse", ("1", "2", "3"), {"m": {"1": 0.1, "2": 0.2, "3": 0.3}}, {})
    [summary] = summarize([worse, first, rerun], resamples=50)
    assert summary.ranking == ("rerun", "first", "worse")
    assert summary.ranks == {"rerun": 1, "first": 1, "worse": 3}
    assert summary.comparison("rerun", "first").winner is None
    assert summary.comparison("first", "worse").winner == "first"
    with pytest.raises(KeyError, match="No comparison of 'first' with 'nobody'"):
        summary.comparison("first", "nobody")


def test_ties_do_not_chain_into_one_rank():
    # A's mean is 1.8e-6 above C's and B's half-way: A ties B and B ties C (within 1e-6),
    # but A beats C, so C cannot share A's rank through B.
    keys = tuple(str(i) for i in range(6))
    base = {key: 0.1 * int(key) for key in keys}

    def shifted(name: str, shift: float) -> ExperimentScores:
        return ExperimentScores(name, keys, {"m": {k: v + shift for k, v in base.items()}}, {})

    [summary] = summarize([shifted("C", 0.0), shifted("B", 0.9e-6), shifted("A", 1.8e-6)])
    assert summary.ranking == ("A", "B", "C")
    assert summary.comparison("A", "B").winner is None
    assert summary.comparison("B", "C").winner is None
    assert summary.comparison("A", "C").winner == "A"
    assert summary.ranks == {"A": 1, "B": 1, "C": 3}


@pytest.mark.parametrize(
    ("experiments", "message"),
    [
        ([ExperimentScores("x", ("k",), {"m": {"k": 1.0}}, {})], "two or more"),
        (
            [
                ExperimentScores("x", ("k",), {"m": {"k": 1.0}}, {}),
                ExperimentScores("x", ("k",), {}, {}),
            ],
            "distinct names",
        ),
        (
            [
                ExperimentScores("x", ("k",), {"m": {"k": 1.0}}, {}),
                ExperimentScores("y", ("k",), {}, {}),
            ],
            "No item has a 'm' score in every experiment",
        ),
    ],
)
def test_summarize_rejects_what_cannot_be_compared(experiments, message):
    with pytest.raises(ValueError, match=message):
        summarize(experiments)


@pytest.mark.parametrize(
    ("environment", "configured"),
    [
        ({}, False),
        ({"OPIK_URL_OVERRIDE": "http://localhost:5173/api/"}, True),
        ({"OPIK_API_KEY": "key"}, True),
        ({"OPIK_URL_OVERRIDE": "http://localhost:5173/api/", "OPIK_TRACK_DISABLE": "true"}, False),
    ],
)
def test_opik_server_configured_reads_opik_settings(monkeypatch, tmp_path, environment, configured):
    empty_config = tmp_path / "opik.config"
    empty_config.write_text("")
    monkeypatch.setenv("OPIK_CONFIG_PATH", str(empty_config))
    for name in ("OPIK_URL_OVERRIDE", "OPIK_API_KEY", "OPIK_TRACK_DISABLE"):
        monkeypatch.delenv(name, raising=False)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    assert opik_server_configured(OpikConfig()) is configured


def test_opik_server_configured_reads_the_config_file(monkeypatch, tmp_path):
    config_file = tmp_path / "opik.config"
    config_file.write_text("[opik]\nurl_override = http://localhost:5173/api/\n")
    monkeypatch.setenv("OPIK_CONFIG_PATH", str(config_file))
    monkeypatch.delenv("OPIK_URL_OVERRIDE", raising=False)
    monkeypatch.delenv("OPIK_TRACK_DISABLE", raising=False)
    assert opik_server_configured(OpikConfig()) is True


@pytest.mark.parametrize("online", [False, True])
def test_runner_rejects_a_field_named_id(online):
    items = [{"id": "q1", "reference": "4"}]
    with pytest.raises(ValueError, match=r"Item 0 has a field named 'id'.*'item_id'"):
        ExperimentRunner(items, "demo", key_field="id", online=online)


def test_stored_item_ids_match_items_by_content_as_opik_deduplicates():
    stored = [
        {"id": "x", "doc": "d1", "reference": "r", "tags": ["a", "b"]},
        {"id": "y", "doc": "d2", "reference": "s"},
    ]
    items = [{"doc": "d2", "reference": "s"}, {"reference": "r", "tags": ("a", "b"), "doc": "d1"}]
    assert stored_item_ids(stored, items) == ["y", "x"]
    assert stored_item_ids(stored, [items[0], dict(items[0])]) == ["y"]
    with pytest.raises(ValueError, match="does not hold item 1"):
        stored_item_ids(stored, [items[0], {"doc": "d3"}])


def test_runner_offline_runs_each_experiment_on_opiks_local_engine(bertscore):
    runner = ExperimentRunner(ITEMS, "demo", key_field="doc", online=False)
    scores = runner.run("a", lambda item: {"output": item["outputs"]["a"]}, [bertscore])
    direct = collect_scores(_run("a", [bertscore]).test_results, "a", key_field="doc")
    assert (scores.name, scores.items, scores.failed) == (direct.name, direct.items, direct.failed)
    # Equal within float rounding: the two runs' micro-batches group items differently.
    for metric, values in direct.scores.items():
        assert scores.scores[metric] == pytest.approx(values, abs=1e-6)
    assert runner.experiment_urls == {}


class _RecordingDataset:
    """An Opik dataset as the server keeps it: items deduplicated by content, with ids."""

    def __init__(self, stored: list[dict[str, Any]]) -> None:
        self.inserted: list[list[dict[str, Any]]] = []
        self.stored = [{**item, "id": f"old-{i}"} for i, item in enumerate(stored)]

    def insert(self, items: list[dict[str, Any]]) -> None:
        self.inserted.append(items)
        for item in items:
            if not any({**item, "id": old["id"]} == old for old in self.stored):
                self.stored.append({**item, "id": f"new-{len(self.stored)}"})

    def get_items(self) -> list[dict[str, Any]]:
        return [dict(item) for item in self.stored]


def test_runner_online_logs_experiments_on_its_own_items_with_their_config(monkeypatch, bertscore):
    """Server mode, with Opik's client and server replaced by recorders (no server here).

    The dataset already holds items of earlier runs: another article, and d1 with an
    older reference. Each experiment must run on this runner's three items only.
    """
    earlier = [
        {**ITEMS[0], "reference": "An older reference."},
        {**ITEMS[1], "doc": "d9"},
        ITEMS[2],
    ]
    dataset = _RecordingDataset(earlier)
    calls: list[dict[str, Any]] = []

    class _Client:
        def get_or_create_dataset(self, name: str) -> _RecordingDataset:
            assert name == "demo"
            return dataset

    def _evaluate(**kwargs: Any) -> Any:
        calls.append(kwargs)
        chosen = [item for item in dataset.stored if item["id"] in kwargs["dataset_item_ids"]]
        result = opik.evaluate_on_dict_items(
            items=[{k: v for k, v in item.items() if k != "id"} for item in chosen],
            task=kwargs["task"],
            scoring_metrics=kwargs["scoring_metrics"],
        )
        result.experiment_url = f"http://opik/{kwargs['experiment_name']}"
        return result

    monkeypatch.setattr(opik, "Opik", _Client)
    monkeypatch.setattr(opik, "evaluate", _evaluate)
    runner = ExperimentRunner(ITEMS, "demo", key_field="doc", online=True, task_threads=4)
    runs = [
        runner.run(
            system,
            lambda item, system=system: {"output": item["outputs"][system]},
            [bertscore],
            {"system": system},
        )
        for system in ("a", "b")
    ]
    assert dataset.inserted == [ITEMS]
    # d1 (new reference) and d2 were added; d3 was already there as "old-2".
    assert [call["dataset_item_ids"] for call in calls] == [["new-3", "new-4", "old-2"]] * 2
    assert [run.items for run in runs] == [("d1", "d2", "d3")] * 2
    assert [call["experiment_name"] for call in calls] == ["a", "b"]
    assert [call["experiment_config"] for call in calls] == [{"system": "a"}, {"system": "b"}]
    assert all(call["dataset"] is dataset and call["task_threads"] == 4 for call in calls)
    assert runner.experiment_urls == {"a": "http://opik/a", "b": "http://opik/b"}
