"""compare_results pairs two runs' items by id or content, never by the order of the
results, on the real ``opik.evaluate_on_dict_items`` (OPIK_TRACK_DISABLE=true)."""

from __future__ import annotations

import time

import opik
import pytest
from opik.evaluation.metrics import base_metric, score_result
from scipy import stats

from opik_semantic_metrics.compare.corpus import compare_results, pair_items

#: Each item's reference, and the two systems' scores on it: differences of every size,
#: so that a wrong pairing changes the paired statistics.
ITEMS = [
    {"pair": index, "reference": f"reference {index}", "a": a, "b": b}
    for index, (a, b) in enumerate(
        [(0.9, 0.2), (0.8, 0.79), (0.4, 0.1), (0.7, 0.72), (0.65, 0.3), (0.5, 0.45),
         (0.95, 0.9), (0.3, 0.35), (0.6, 0.1), (0.85, 0.8), (0.2, 0.25), (0.75, 0.5)]
    )
]  # fmt: skip


class OutputValue(base_metric.BaseMetric):
    """Scores an item with the number its task returned as output."""

    def __init__(self) -> None:
        super().__init__(name="value", track=False)

    def score(self, output: float, **ignored: object) -> score_result.ScoreResult:
        return score_result.ScoreResult(name=self.name, value=float(output))


def _run(items: list[dict], system: str, slow_first: bool) -> object:
    """The system's scores through Opik's engine on 4 threads; the first items sleep
    longest (``slow_first``) or shortest, so the results come in another order."""

    def task(item: dict) -> dict:
        position = item["pair"] % len(ITEMS)
        rank = position if slow_first else len(ITEMS) - position
        time.sleep(0.02 * (len(ITEMS) - rank))
        return {"output": item[system]}

    return opik.evaluate_on_dict_items(
        items=items, task=task, scoring_metrics=[OutputValue()], scoring_threads=4
    )


def _truth() -> tuple[float, float]:
    """scipy's paired t-test on the systems' scores, each item with itself."""
    result = stats.ttest_rel([item["a"] for item in ITEMS], [item["b"] for item in ITEMS])
    return float(result.statistic), float(result.pvalue)


def _pair_order(result: object) -> list[int]:
    return [test.test_case.dataset_item_content["pair"] for test in result.test_results]


def test_two_runs_whose_results_come_in_other_orders_pair_each_item_with_itself():
    run_a, run_b = _run(ITEMS, "a", slow_first=True), _run(ITEMS, "b", slow_first=False)
    # The threads finished the items in two different orders.
    assert _pair_order(run_a) != _pair_order(run_b)
    comparison = compare_results(run_a, run_b)
    statistic, p_value = _truth()
    assert comparison.t_test.statistic == pytest.approx(statistic, rel=1e-9)
    assert comparison.t_test.p_value == pytest.approx(p_value, rel=1e-9)
    # A result list reversed is the same run.
    reversed_b = list(reversed(run_b.test_results))
    assert compare_results(run_a, reversed_b).t_test.p_value == pytest.approx(p_value, rel=1e-9)


def test_the_same_items_given_in_another_order_pair_by_content():
    # evaluate_on_dict_items names items by position: temp_item_0 is another item in B.
    shuffled = ITEMS[5:] + ITEMS[:5]
    run_a, run_b = _run(ITEMS, "a", slow_first=True), _run(shuffled, "b", slow_first=True)
    comparison = compare_results(run_a, run_b)
    statistic, p_value = _truth()
    assert comparison.t_test.statistic == pytest.approx(statistic, rel=1e-9)
    assert comparison.t_test.p_value == pytest.approx(p_value, rel=1e-9)
    # Paired by the task's own id field, the same.
    by_field = compare_results(run_a, run_b, key_field="pair")
    assert by_field.t_test.p_value == pytest.approx(p_value, rel=1e-9)


def test_a_field_holding_the_systems_output_is_left_out_of_the_content():
    # The comparing-systems guide's shape: each run's items carry that system's output.
    items_a = [{"reference": item["reference"], "output": item["a"]} for item in ITEMS]
    items_b = [{"reference": item["reference"], "output": item["b"]} for item in ITEMS]
    items_b.reverse()
    task = {"task": lambda item: {"output": item["output"]}, "scoring_metrics": [OutputValue()]}
    run_a = opik.evaluate_on_dict_items(items=items_a, **task)
    run_b = opik.evaluate_on_dict_items(items=items_b, **task)
    keys_a, keys_b = pair_items(run_a.test_results, run_b.test_results)
    assert (
        keys_a["temp_item_0"]
        == keys_b[f"temp_item_{len(ITEMS) - 1}"]
        == '{"reference": ' + ('"reference 0"}')
    )
    assert compare_results(run_a, run_b).t_test.p_value == pytest.approx(_truth()[1], rel=1e-9)


def test_items_that_cannot_be_told_apart_are_refused_by_name():
    twice = [dict(ITEMS[0]) for _ in range(3)]
    run_a, run_b = _run(twice, "a", slow_first=True), _run(twice, "b", slow_first=True)
    with pytest.raises(ValueError, match=r"in run A, 3 items share a value.*`key_field`"):
        compare_results(run_a, run_b)
    with pytest.raises(ValueError, match=r"by the item field 'pair': in run A, 3 items share"):
        compare_results(run_a, run_b, key_field="pair")
    with pytest.raises(ValueError, match=r"have the field 'qid' \(`key_field`\); item temp_item"):
        compare_results(run_a, run_b, key_field="qid")
    # No field with the same values in both runs: nothing to pair by.
    other = [{"pair": item["pair"] + 100, "b": item["b"] + 0.001} for item in ITEMS]
    with pytest.raises(ValueError, match="no item field has the same values in both runs"):
        compare_results(_run(ITEMS, "a", True), _run(other, "b", True))
    with pytest.raises(ValueError, match="plain lists of scores pair by position"):
        compare_results([0.5, 0.6], [0.4, 0.7], key_field="pair")
