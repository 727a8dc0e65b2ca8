"""Experiment-level scoring of Opik results: item scores, system scores, comparisons."""

from __future__ import annotations

import inspect
import random
import warnings

import opik
import pytest
import torch
from opik.evaluation import test_case, test_result
from opik.evaluation.evaluation_result import compute_experiment_scores
from opik.evaluation.metrics.score_result import ScoreResult

from opik_semantic_metrics import BERTScore
from opik_semantic_metrics.compare.corpus import (
    collect_item_scores,
    compare_results,
    system_score_function,
)
from opik_semantic_metrics.compare.experiments import collect_scores
from opik_semantic_metrics.compare.stats import compare_systems

SYSTEM_A = [0.71, 0.64, 0.82, 0.55, 0.9, 0.6, 0.77, 0.68, 0.73, 0.8, 0.59, 0.66]
SYSTEM_B = [0.65, 0.6, 0.8, 0.5, 0.83, 0.61, 0.7, 0.6, 0.7, 0.72, 0.5, 0.64]


def _results(
    scores: list[float | None],
    name: str = "comet",
    trial: int = 0,
    dtype: str | None = None,
    **recorded: str | int,
) -> list[test_result.TestResult]:
    """Opik test results, one per item; ``None`` is a failed score (Opik records 0.0);
    with ``dtype`` (and ``recorded``), what our metrics record in the metadata."""
    metadata = ({"dtype": dtype} if dtype is not None else {}) | recorded
    return [
        test_result.TestResult(
            test_case=test_case.TestCase(
                trace_id=f"t{index}", dataset_item_id=f"item_{index}", task_output={}
            ),
            score_results=[
                ScoreResult(
                    name=name,
                    value=0.0 if score is None else score,
                    scoring_failed=score is None,
                    metadata=metadata or None,
                )
            ],
            trial_id=trial,
        )
        for index, score in enumerate(scores)
    ]


def test_item_scores_in_item_order_whatever_order_the_threads_finished():
    results = _results(SYSTEM_A)
    random.Random(0).shuffle(results)
    collected = collect_item_scores(results)
    assert collected.metric_name == "comet"
    assert list(collected.scores) == [f"item_{i}" for i in range(12)]
    assert list(collected.scores.values()) == SYSTEM_A


def test_trials_are_averaged_and_failed_items_named():
    results = _results([0.5, None, 0.25]) + _results([0.7, None, 0.75], trial=1)
    collected = collect_item_scores(results, "comet")
    assert collected.scores == {"item_0": pytest.approx(0.6), "item_2": 0.5}
    assert collected.failed == ("item_1",)


def test_item_scores_are_the_experiments_collection_with_trials_averaged():
    """Corpus scores and experiments read the same results alike: same items, same order."""
    results = _results(SYSTEM_A) + _results(SYSTEM_B, trial=1)
    random.Random(2).shuffle(results)
    collected = collect_item_scores(results)
    experiment = collect_scores(results, "a", trials="mean")
    assert list(collected.scores) == list(experiment.items) == [f"item_{i}" for i in range(12)]
    assert collected.scores == experiment.scores["comet"]
    assert list(collected.scores.values()) == [
        pytest.approx((a + b) / 2) for a, b in zip(SYSTEM_A, SYSTEM_B, strict=True)
    ]


def test_item_ids_with_digit_runs_too_long_for_int_are_ordered():
    results = _results([0.5, 0.25])
    results[0].test_case.dataset_item_id = "item_" + "1" * 5000
    collected = collect_item_scores(results)
    assert list(collected.scores) == ["item_1", results[0].test_case.dataset_item_id]


def test_the_metric_name_is_needed_when_there_are_several_and_must_exist():
    mixed = _results([0.5]) + _results([0.5], name="bleu")
    with pytest.raises(ValueError, match="Expected `metric_name`"):
        collect_item_scores(mixed)
    with pytest.raises(ValueError, match="No score named 'chrf'"):
        collect_item_scores(mixed, "chrf")


def test_compare_equals_the_paired_statistics_on_aligned_items():
    shuffled_b = _results(SYSTEM_B)
    random.Random(1).shuffle(shuffled_b)
    verdict = compare_results(_results(SYSTEM_A), shuffled_b, name_a="new", name_b="old")
    expected = compare_systems(SYSTEM_A, SYSTEM_B, name_a="new", name_b="old")
    assert verdict == expected
    assert (verdict.winner, verdict.significant) == ("new", True)
    assert compare_results(SYSTEM_A, SYSTEM_B, name_a="new", name_b="old") == expected


def test_compare_takes_the_tie_tolerance():
    rerun = [score + 5e-7 for score in SYSTEM_A]
    assert compare_results(SYSTEM_A, rerun).winner is None
    exact = compare_results(SYSTEM_A, rerun, tie_tolerance=0.0)
    assert exact == compare_systems(SYSTEM_A, rerun, tie_tolerance=0.0)
    assert exact.winner == "B" and exact.bootstrap.ties == 0


def test_compare_refuses_scores_of_different_weight_types():
    exact, fast = _results(SYSTEM_A, dtype="float32"), _results(SYSTEM_B, dtype="bfloat16")
    with pytest.raises(ValueError, match="A: float32; B: bfloat16"):
        compare_results(exact, fast)
    mixed = _results(SYSTEM_B[:6], dtype="float32") + _results(SYSTEM_B, dtype="bfloat16")[6:]
    with pytest.raises(ValueError, match="B: bfloat16, float32"):
        compare_results(exact, mixed)
    with pytest.raises(ValueError, match="old: float32; old: bfloat16"):
        compare_results(exact, fast, name_a="old", name_b="old")
    with pytest.raises(ValueError, match="A: none recorded; B: bfloat16, float32"):
        compare_results(_results(SYSTEM_A), mixed)
    expected = compare_systems(SYSTEM_A, SYSTEM_B)
    # One type on both sides (even the fast one), or one side's scores carry none: compared.
    assert compare_results(_results(SYSTEM_A, dtype="bfloat16"), fast) == expected
    assert compare_results(exact, _results(SYSTEM_B, dtype="float32")) == expected
    assert compare_results(exact, _results(SYSTEM_B)) == expected


def test_compare_reads_iterators_once_and_refuses_lists_of_non_numbers():
    # Results were read twice (scores, then weight types): an iterator was empty the
    # second time, and the comparison failed on "no items".
    expected = compare_systems(SYSTEM_A, SYSTEM_B)
    assert compare_results(iter(SYSTEM_A), iter(SYSTEM_B)) == expected
    assert compare_results(iter(_results(SYSTEM_A)), iter(_results(SYSTEM_B))) == expected
    with pytest.raises(ValueError, match="list of numbers, got NoneType at position 1"):
        compare_results([0.1, None], [0.1, 0.2])
    with pytest.raises(ValueError, match="got str at position 0"):
        compare_results(["0.5", 0.2], [0.1, 0.2])
    # What float() reads is a number: bert_score's own P/R/F come as tensors.
    assert compare_results(torch.tensor(SYSTEM_A), torch.tensor(SYSTEM_B)) == compare_systems(
        torch.tensor(SYSTEM_A).tolist(), torch.tensor(SYSTEM_B).tolist()
    )


def test_compare_warns_when_the_scores_record_other_settings():
    expected = compare_systems(SYSTEM_A, SYSTEM_B)
    one = compare_results(_results(SYSTEM_A, model="m"), _results(SYSTEM_B, model="m"))
    assert one == expected
    with pytest.warns(UserWarning, match="different models \\(A: m; B: kiwi\\)"):
        assert (
            compare_results(_results(SYSTEM_A, model="m"), _results(SYSTEM_B, model="kiwi"))
            == expected
        )
    # A layer recorded apart from any hash (as the compare-results command's files do) counts too.
    with pytest.warns(UserWarning, match="different layers \\(A: 6; B: 3\\)"):
        assert compare_results(_results(SYSTEM_A, layer=6), _results(SYSTEM_B, layer=3)) == expected
    # Package versions and the tokenizer class are not settings.
    hashes = (
        "x_L6_no-idf_version=0.3.12(hug_trans=4.40.2)",
        "x_L6_no-idf_version=0.3.12(hug_trans=5.24.0)_fast-tokenizer",
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compare_results(_results(SYSTEM_A, hash=hashes[0]), _results(SYSTEM_B, hash=hashes[1]))


def test_compare_refuses_failed_and_unmatched_items():
    with pytest.raises(ValueError, match=r"1 items of B have no comet score \(failed\)"):
        compare_results(_results(SYSTEM_A[:3]), _results([0.5, None, 0.5]))
    with pytest.raises(ValueError, match="same items; 1 items are in one only"):
        compare_results(_results(SYSTEM_A[:3]), _results(SYSTEM_B[:2]))


def test_system_score_counts_failures_and_fails_when_nothing_was_scored():
    score = system_score_function("comet", resamples=200)
    [system] = score(_results([0.5, None, 0.7]))
    assert (system.name, system.value) == ("comet_system", pytest.approx(0.6))
    assert system.metadata["failed_items"] == ["item_1"] and system.metadata["count"] == 2
    # Nothing scored: an error, which Opik logs, not a failed result whose 0.0 Opik's
    # summary prints as the system's score.
    with pytest.raises(ValueError, match=r"No item has a comet score \(2 failed, e\.g\. "):
        score(_results([None, None]))


def test_a_metric_of_several_scores_failed_on_every_item_has_no_system_score():
    """Opik names a failed item's result after the metric (bertscore), not after each of
    its scores (bertscore_f1): with every item failed, only that name is in the results."""
    run = opik.evaluate_on_dict_items(
        items=[{"output": None, "reference": "a cat"}, {"output": 3, "reference": "a dog"}],
        task=lambda item: {},
        scoring_metrics=[BERTScore(model="all-MiniLM-L6-v2", device="cpu", track=False)],
    )
    assert {result.name for test in run.test_results for result in test.score_results} == {
        "bertscore"
    }
    system_score = system_score_function("bertscore_f1", resamples=10)
    with pytest.raises(ValueError, match=r"No item has a bertscore_f1 score \(2 failed"):
        system_score(run.test_results)
    # Opik's own experiment scoring logs the error (how visibly depends on its logging
    # set-up) and gives no score, where it printed the failed result's 0.0.
    assert compute_experiment_scores([system_score], run.test_results) == []
    with pytest.raises(ValueError, match="No score named 'chrf'"):
        collect_item_scores(run.test_results, "chrf")


def test_a_failed_metrics_own_name_is_no_score_where_its_scores_are_there():
    """Where bertscore failed on some items only, ``bertscore`` is no score name: it was
    accepted, and every item was reported failed."""
    run = opik.evaluate_on_dict_items(
        items=[{"output": None, "reference": "a cat"}, {"output": "a dog", "reference": "a dog"}],
        task=lambda item: {},
        scoring_metrics=[BERTScore(model="all-MiniLM-L6-v2", device="cpu", track=False)],
    )
    with pytest.raises(ValueError, match=r"No score named 'bertscore'.*'bertscore_f1'"):
        collect_item_scores(run.test_results, "bertscore")
    collected = collect_item_scores(run.test_results, "bertscore_f1")
    assert list(collected.scores) == ["temp_item_1"] and collected.failed == ("temp_item_0",)
    # A score name that only begins like a metric that failed somewhere.
    partly = _results([0.5, None])
    with pytest.raises(ValueError, match="No score named 'comet_kiwi'"):
        collect_item_scores(partly, "comet_kiwi")


def test_system_score_settings_are_checked_when_the_function_is_made():
    # Opik logs what the function raises at the end of a run: the experiment had no
    # system score, and a warning said why.
    with pytest.raises(ValueError, match=r"`confidence` between 0 and 1, got 1\.5"):
        system_score_function("comet", confidence=1.5)
    with pytest.raises(ValueError, match="`resamples` to be a positive integer, got 0"):
        system_score_function("comet", resamples=0)


def test_compare_takes_the_options_and_defaults_of_compare_systems():
    # compare_results() reads Opik results (which score, how items pair), then hands its
    # options on: one list of options, with one set of defaults, at both levels.
    def options(function):
        return {
            name: parameter.default
            for name, parameter in inspect.signature(function).parameters.items()
            if parameter.kind is parameter.KEYWORD_ONLY and name not in ("metric_name", "key_field")
        }

    assert options(compare_results) == options(compare_systems)
    assert options(compare_results) == {
        "name_a": "A",
        "name_b": "B",
        "alpha": 0.05,
        "resamples": 1000,
        "seed": 0,
        "tie_tolerance": 1e-6,
    }


def test_the_former_name_compare_still_imports_as_compare_results():
    # Scripts written before the rename import `compare`; it must stay the same function.
    from opik_semantic_metrics.compare.corpus import compare, compare_results

    assert compare is compare_results
