"""What travels to the actors, and the planning of their resources (no cluster needed)."""

from __future__ import annotations

import pytest

from opik_semantic_metrics import AnswerMatch, BERTScore, SemanticMatch
from opik_semantic_metrics.distributed import plan_resources
from opik_semantic_metrics.distributed.blueprint import blueprint_of
from opik_semantic_metrics.distributed.datasets import resolve_columns
from opik_semantic_metrics.distributed.scoring import score_with_fallback
from opik_semantic_metrics.semantic.engine import RECIPE_SETTINGS


@pytest.fixture(scope="module")
def pairs(stsb_pairs) -> tuple[list[str], list[str]]:
    return [a for a, _, _ in stsb_pairs[:24]], [b for _, b, _ in stsb_pairs[:24]]


def test_a_bertscore_rebuilt_from_its_blueprint_keeps_its_fitted_idf(pairs):
    outputs, references = pairs
    metric = BERTScore(
        model="all-MiniLM-L6-v2",
        idf=True,
        idf_references=references[:10],
        device="cpu",
        track=False,
        name="bs",
    )
    blueprint = blueprint_of(metric)
    assert blueprint.score_names == ("bs_f1", "bs_precision", "bs_recall")
    assert blueprint.error_column == "bs_error"
    rebuilt = blueprint.build("cpu")
    assert rebuilt is not metric
    want = metric.score_batch(outputs, references)
    got = blueprint.score_rows(rebuilt, {"output": outputs, "reference": references})
    for row, scores in zip(got, want, strict=True):
        assert row == pytest.approx([result.value for result in scores], abs=1e-6)
    # Not the uniform weights of an unfitted idf, nor idf fitted on other references.
    assert rebuilt.engine.idf_table == metric.engine.idf_table


def test_a_fitted_semantic_match_rebuilt_from_its_blueprint(pairs):
    outputs, references = pairs
    metric = SemanticMatch(device="cpu", track=False, weights=(0.3, 0.3, 0.4)).fit(references)
    rebuilt = blueprint_of(metric).build("cpu")
    assert isinstance(rebuilt, SemanticMatch)
    assert rebuilt.engine.state == metric.engine.state
    got = [r.value for r in rebuilt.score_batch(outputs, references)]
    want = [r.value for r in metric.score_batch(outputs, references)]
    assert got == pytest.approx(want, abs=1e-6)


@pytest.mark.parametrize(
    "settings",
    [
        RECIPE_SETTINGS,
        {"softness": 0.05, "negation_penalty": 0.3, "number_penalty": 0.0},
        {"long_weights": (0.2, 0.3, 0.5), "long_sentences": 3},
    ],
    ids=["recipe", "other-curve-and-penalties", "other-long-text-weights"],
)
def test_every_setting_of_a_semantic_match_travels(settings):
    """The curve, the flip penalties, the long-text weights and the cleaning reach the
    actors, not the defaults."""
    metric = SemanticMatch(device="cpu", track=False, **settings)
    rebuilt = blueprint_of(metric).build("cpu")
    assert isinstance(rebuilt, SemanticMatch)
    assert rebuilt.engine.combination == metric.engine.combination
    assert rebuilt.engine.cleaning == metric.engine.cleaning
    outputs = ["The store is not open.", "The meeting is at 5 pm.", "A man plays. He sings."]
    references = ["The store is open.", "The meeting is at 3 pm.", "A man is playing. He sings."]
    got = [r.value for r in rebuilt.score_batch(outputs, references)]
    assert got == [r.value for r in metric.score_batch(outputs, references)]


def test_answer_match_with_a_bertscore_tier_travels_with_that_metric():
    semantic = BERTScore(model="all-MiniLM-L6-v2", device="cpu", track=False)
    metric = AnswerMatch(semantic=semantic, track=False)
    blueprint = blueprint_of(metric)
    assert blueprint.settings["semantic"].kind == "bertscore"
    rebuilt = blueprint.build("cpu")
    item = {"output": "The company reduced its emissions.", "reference": "Emissions fell."}
    assert rebuilt.score(**item).metadata == metric.score(**item).metadata


def test_a_bad_row_fails_alone_and_the_others_score_in_batches(pairs):
    outputs, references = pairs
    metric = BERTScore(model="all-MiniLM-L6-v2", device="cpu", track=False)
    blueprint = blueprint_of(metric)
    bad_outputs = [*outputs]
    bad_outputs[5] = None  # type: ignore[call-overload]
    bad_outputs[17] = None  # type: ignore[call-overload]
    values, errors = score_with_fallback(
        blueprint, metric, {"output": bad_outputs, "reference": references}, len(outputs)
    )
    want = metric.score_batch(outputs, references)
    for index, (value, error) in enumerate(zip(values, errors, strict=True)):
        if index in (5, 17):
            assert value is None
            assert error == "BERTScore: Expected the candidate to be a string, got NoneType."
        else:
            assert error is None
            assert value == pytest.approx([r.value for r in want[index]], abs=1e-6)


def test_resources_on_two_cores_leave_room_for_reading():
    # Two actors of 1 CPU and Ray's read task (1 CPU) wanted 3 CPUs of 2 and hung.
    two = plan_resources({"CPU": 2.0}, 2, None, None)
    assert two.num_actors * two.cpus_per_actor + 1 <= 2
    assert (two.gpus_per_actor, two.threads_per_actor, two.device) == (0.0, 1, "cpu")
    one = plan_resources({"CPU": 2.0}, None, None, None)
    assert (one.num_actors, one.cpus_per_actor, one.threads_per_actor) == (1, 1.0, 2)


def test_resources_use_every_gpu_of_a_cluster():
    cluster = {"CPU": 64.0, "GPU": 8.0}
    plan = plan_resources(cluster, None, None, None)
    assert (plan.num_actors, plan.gpus_per_actor, plan.device) == (8, 1.0, "cuda")
    assert plan.num_actors * plan.cpus_per_actor <= 63
    half = plan_resources(cluster, None, None, 0.5)
    assert half.num_actors == 16
    cpu = plan_resources(cluster, None, None, 0)
    assert (cpu.num_actors, cpu.device, cpu.threads_per_actor) == (8, "cpu", 8)
    # AnswerMatch without a semantic model needs no GPU.
    assert plan_resources(cluster, None, None, None, needs_model=False).gpus_per_actor == 0


def test_resources_that_cannot_be_had_are_named():
    with pytest.raises(ValueError, match="has 0 GPUs"):
        plan_resources({"CPU": 2.0}, None, None, 1)
    with pytest.raises(ValueError, match="num_actors"):
        plan_resources({"CPU": 2.0}, 0, None, None)


def test_columns_are_checked_before_anything_runs():
    blueprint = blueprint_of(AnswerMatch(track=False))
    assert resolve_columns(blueprint, {"output": "pred"}, ["pred", "reference", "input"]) == {
        "output": "pred",
        "reference": "reference",
        "input": "input",
    }
    with pytest.raises(ValueError, match="no column 'answer'"):
        resolve_columns(blueprint, {"output": "answer"}, ["pred", "reference"])
    with pytest.raises(ValueError, match="reads no argument 'source'"):
        resolve_columns(blueprint, {"source": "pred"}, ["pred", "reference"])
    with pytest.raises(ValueError, match="already has the result column"):
        resolve_columns(blueprint, None, ["output", "reference", "answer_match"])
