"""Scores of a scored dataset, as they go to Opik: built here, sent only to a live server."""

from __future__ import annotations

import os
import uuid

import opik
import pytest

from opik_semantic_metrics import BERTScore
from opik_semantic_metrics.compare.corpus import system_score_function
from opik_semantic_metrics.distributed.blueprint import blueprint_of
from opik_semantic_metrics.distributed.opik_logging import (
    ScoreColumns,
    experiment_scores,
    feedback_scores,
    log_to_opik,
    new_experiment_records,
)
from opik_semantic_metrics.distributed.scoring import score_with_fallback

LIVE = pytest.mark.skipif(
    not os.environ.get("OPIK_URL_OVERRIDE"),
    reason="no Opik server here: set OPIK_URL_OVERRIDE to an Opik server to run the live test",
)


@pytest.fixture(scope="module")
def metric() -> BERTScore:
    return BERTScore(model="all-MiniLM-L6-v2", device="cpu", track=False)


@pytest.fixture(scope="module")
def scored_rows(metric, stsb_pairs) -> list[dict]:
    """Rows as score_dataset writes them (the same scoring code, in this process), one of
    them failed."""
    items = [
        {"item": f"item_{i}", "output": a, "reference": b}
        for i, (a, b, _) in enumerate(stsb_pairs[:30])
    ]
    items[3]["output"] = None
    blueprint = blueprint_of(metric)
    rows = {name: [item[name] for item in items] for name in ("output", "reference")}
    values, errors = score_with_fallback(blueprint, metric, rows, len(items))
    for item, value, error in zip(items, values, errors, strict=True):
        for place, name in enumerate(blueprint.score_names):
            item[name] = None if value is None else value[place]
        item[blueprint.error_column] = error
    return items


def test_feedback_scores_are_one_per_score_of_each_scored_row(metric, scored_rows):
    columns = ScoreColumns.of(metric)
    pairs = [(f"trace-{row['item']}", row) for row in scored_rows]
    scores = feedback_scores(pairs, columns, project_name="p")
    assert len(scores) == 3 * 29  # the failed row has no score to send
    assert scores[0] == {
        "id": "trace-item_0",
        "name": "bertscore_f1",
        "value": scored_rows[0]["bertscore_f1"],
        "project_name": "p",
    }
    assert not any(score["id"] == "trace-item_3" for score in scores)


def test_experiment_scores_equal_opiks_own_evaluation_of_the_items(metric, scored_rows):
    columns = ScoreColumns.of(metric)
    ours = experiment_scores([(row["item"], row) for row in scored_rows], columns)
    assert [result.name for result in ours] == [
        "bertscore_f1_system",
        "bertscore_precision_system",
        "bertscore_recall_system",
    ]
    # The same items scored per item by Opik's own engine, summarised by the function
    # experiment_scoring_functions gives Opik.
    evaluation = opik.evaluate_on_dict_items(
        items=[{"output": row["output"], "reference": row["reference"]} for row in scored_rows],
        task=lambda item: {"output": item["output"]},
        scoring_metrics=[metric],
        verbose=0,
    )
    [theirs] = system_score_function("bertscore_f1")(evaluation.test_results)
    [f1] = [result for result in ours if result.name == "bertscore_f1_system"]
    assert f1.value == pytest.approx(theirs.value, abs=1e-6)
    assert f1.metadata["count"] == theirs.metadata["count"] == 29
    assert f1.metadata["failed"] == theirs.metadata["failed"] == 1
    assert f1.metadata["failed_items"] == ["item_3"]
    assert f1.metadata["low"] < f1.value < f1.metadata["high"]


def test_new_experiment_records_split_items_outputs_and_scores(metric, scored_rows):
    records = new_experiment_records(scored_rows, ScoreColumns.of(metric), ["output"])
    assert len(records) == 30
    first = records[0]
    assert first.item == {"item": "item_0", "reference": scored_rows[0]["reference"]}
    assert first.output == {"output": scored_rows[0]["output"]}
    assert [score["name"] for score in first.scores] == [
        "bertscore_f1",
        "bertscore_precision",
        "bertscore_recall",
    ]
    assert records[3].scores == []
    ids = {record.dataset_item_id for record in records} | {r.trace_id for r in records}
    assert len(ids) == 60
    assert all(uuid.UUID(value) for value in ids)


def test_log_to_opik_needs_a_dataset_or_item_ids(metric, scored_rows):
    with pytest.raises(ValueError, match="dataset_name"):
        log_to_opik(scored_rows, metric, experiment_name="x", client=object())


@LIVE
def test_a_scored_dataset_reaches_a_new_opik_experiment(metric, scored_rows):
    os.environ["OPIK_TRACK_DISABLE"] = "false"
    client = opik.Opik()
    name = f"score-dataset-{uuid.uuid4().hex[:8]}"
    summary = log_to_opik(
        scored_rows, metric, experiment_name=name, dataset_name=name, client=client
    )
    assert summary[0].name == "bertscore_f1_system"
    items = client.get_experiment_by_name(name).get_items()
    assert len(items) == 30
    scored = [item for item in items if item.feedback_scores]
    assert len(scored) == 29
