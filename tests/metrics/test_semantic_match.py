"""The Opik SemanticMatch metric: results, metadata, bad input, fitting, Opik's own engine."""

from __future__ import annotations

import math

import pytest
from opik.evaluation.metrics.score_result import ScoreResult
from opik.exceptions import MetricComputationError

from opik_semantic_metrics import SemanticMatch
from opik_semantic_metrics.models.packed_linear import cpu_has_native_bf16
from opik_semantic_metrics.semantic.engine import RECIPE_SETTINGS, SemanticMatchEngine
from tests.tiny_models import build_tiny_bert


@pytest.fixture(scope="module")
def metric() -> SemanticMatch:
    return SemanticMatch(device="cpu", track=False)


@pytest.fixture(scope="module")
def fitted(stsb_pairs) -> SemanticMatch:
    metric = SemanticMatch(device="cpu", track=False)
    assert metric.fit([reference for _, reference, _ in stsb_pairs]) is metric
    return metric


def test_score_is_one_result_equal_to_the_engine(metric):
    result = metric.score(output="Heart attack", reference="Myocardial infarction")
    [expected] = SemanticMatchEngine("all-MiniLM-L6-v2", device="cpu").score(
        ["Heart attack"], ["Myocardial infarction"]
    )
    assert isinstance(result, ScoreResult) and not result.scoring_failed
    assert result.name == "semantic_match"
    assert result.value == expected.score
    assert 0.3 < result.value < 0.9


def test_identical_unrelated_and_paraphrase(fitted):
    identical = fitted.score(output="Pulmonary embolism", reference="Pulmonary embolism")
    unrelated = fitted.score(output="Heart attack", reference="The train leaves at noon.")
    paraphrase = fitted.score(output="Heart attack", reference="Myocardial infarction")
    assert identical.value == 1.0 and identical.metadata["snapped"] is True
    assert unrelated.value < 0.05 and unrelated.metadata["raw_score"] < 0.25
    assert paraphrase.value > unrelated.value + 0.3


def test_metadata_holds_the_levels_and_says_when_nothing_was_fitted(metric):
    result = metric.score(output="Heart attack", reference="Myocardial infarction")
    meta = result.metadata
    assert meta["status"] == "scored"
    for level in ("word", "sentence", "paragraph", "raw_score"):
        assert 0.0 < meta[level] < 1.0
    assert meta["paragraph"] == meta["paragraph_cosine"]  # baseline 0 when not fitted
    assert meta["model"] == "sentence-transformers/all-MiniLM-L6-v2"
    assert meta["dtype"] == "float32"
    assert meta["token_vectors"] == "contextual"
    # One sentence each: the one-sentence weights.
    assert meta["sentences"] == 1.0
    assert meta["weights"] == pytest.approx({"word": 0.1, "sentence": 0.1, "paragraph": 0.8})
    assert meta["long_weights"] == pytest.approx({"word": 0.65, "sentence": 0.35, "paragraph": 0})
    assert (meta["long_sentences"], meta["aligned_flips"]) == (2, True)
    assert (meta["floor"], meta["snap"], meta["softness"]) == (0.25, 0.99, 0.15)
    assert (meta["negation_penalty"], meta["number_penalty"]) == (0.15, 0.2)
    assert (meta["negation_flip"], meta["changed_numbers"]) == (0.0, 0.0)
    assert (meta["cleaning"], meta["calibrated"]) == ("keep_negations", False)
    assert meta["fitted"] is False
    assert meta["idf"].startswith("uniform (not fitted")
    assert (meta["paragraph_baseline"], meta["paragraph_baseline_source"]) == (0.0, "default")
    raw = 0.1 * meta["word"] + 0.1 * meta["sentence"] + 0.8 * meta["paragraph"]
    assert meta["raw_score"] == pytest.approx(raw)

    def bend(x: float) -> float:  # the smooth floor: 0.15 * softplus((x - 0.25) / 0.15)
        return 0.15 * math.log(1 + math.exp((x - 0.25) / 0.15))

    assert result.value == pytest.approx(bend(raw) / bend(1.0))
    assert result.reason.startswith(f"SemanticMatch {result.value:.3f} (word ")
    assert "idf not fitted (uniform)" in result.reason
    assert "paragraph baseline not fitted (0)" in result.reason


def test_fitted_metadata(fitted, stsb_pairs):
    meta = fitted.score(output="A dog runs.", reference="A dog is running.").metadata
    assert meta["fitted"] is True
    assert meta["idf"] == f"fitted on {len(stsb_pairs)} references"
    assert meta["paragraph_baseline_source"] == "fitted"
    assert 0.0 < meta["paragraph_baseline"] < 0.3


def test_metadata_and_reason_name_the_flips_found(metric):
    negated = metric.score(output="The store is not open.", reference="The store is open.")
    # all-MiniLM-L6-v2 barely reads the "not": the check counts what its cosine missed.
    cosine = negated.metadata["paragraph_cosine"]
    assert 0.6 < cosine < 0.8
    assert negated.metadata["negation_flip"] == pytest.approx((cosine - 0.6) / 0.2)
    assert f"a one-sided negation counted at {(cosine - 0.6) / 0.2:.0%}" in negated.reason
    renumbered = metric.score(output="5 men and 2 dogs.", reference="5 men and 3 dogs.")
    assert renumbered.metadata["changed_numbers"] == 0.5
    assert (
        "50% of the output's numbers (by sentence) are not in the reference (-0.1)"
        in renumbered.reason
    )
    meta = renumbered.metadata
    raw = 0.1 * meta["word"] + 0.1 * meta["sentence"] + 0.8 * meta["paragraph"] - 0.2 * 0.5
    assert meta["raw_score"] == pytest.approx(raw)
    # Two sentences each: the long-text weights, and a flip in one sentence of two counts
    # by its share of the output's words (6 of 10).
    partly = metric.score(
        output="The store is not open today. Its owner went home.",
        reference="The store is open today. Its owner went home.",
    )
    meta = partly.metadata
    assert (meta["sentences"], meta["negation_flip"]) == (2.0, pytest.approx(6 / 10))
    assert meta["weights"] == pytest.approx({"word": 0.65, "sentence": 0.35, "paragraph": 0.0})
    raw = 0.65 * meta["word"] + 0.35 * meta["sentence"] - 0.15 * 6 / 10
    assert meta["raw_score"] == pytest.approx(raw)
    assert partly.metadata["paragraph_cosine"] > 0.8  # the encoder missed all of it
    assert "a one-sided negation counted at 60%" in partly.reason
    unchecked = SemanticMatch(device="cpu", track=False, negation_penalty=0, number_penalty=0)
    plain = unchecked.score(output="The store is not open.", reference="The store is open.")
    assert "negates" not in plain.reason and plain.value > negated.value


def test_reason_names_the_floor_and_the_snap(metric):
    recipe = SemanticMatch(device="cpu", track=False, **RECIPE_SETTINGS)
    unrelated = recipe.score(output="Heart attack", reference="The train leaves at noon.")
    assert "at or below the floor 0.25" in unrelated.reason
    identical = recipe.score(output="Heart attack", reference="Heart attack")
    assert "snapped to 1.0 (>= 0.95)" in identical.reason
    identical = metric.score(output="Heart attack", reference="Heart attack")
    assert "snapped to 1.0 (>= 0.99)" in identical.reason


def test_a_list_reference_is_one_answer_in_parts(metric):
    as_list = metric.score(output="Fever, cough", reference=["fever", "cough"])
    joined = metric.score(output="Fever, cough", reference="fever, cough")
    assert as_list.value == joined.value == 1.0


def test_long_texts_are_cut_and_flagged(metric):
    result = metric.score(output="word " * 400, reference="A short reference.")
    assert result.metadata["output_truncated"] is True
    assert result.metadata["reference_truncated"] is False
    assert "output cut to 256 tokens" in result.reason


@pytest.mark.parametrize(
    ("output", "reference", "status", "reason"),
    [
        ("", "Heart attack", "empty_output", "the output is empty"),
        ("   \n", "Heart attack", "empty_output", "the output is empty"),
        ("Heart attack", "\t", "empty_reference", "the reference is empty"),
        ("... ?", "Heart attack", "no_content_output", "the output has no words"),
        ("Heart attack", "... !", "no_content_reference", "the reference has no words"),
        ("\u4f60\u597d", "Heart attack", "unknown_words_output", "none of the output's words"),
        ("\u200b\u2060\x07", "Heart attack", "empty_output", "the output is empty"),
        ("Heart attack", "\ue000", "unknown_words_reference", "reads them as [UNK] or drops"),
    ],
)
def test_empty_and_wordless_texts_score_zero_with_a_reason(
    metric, output, reference, status, reason
):
    result = metric.score(output=output, reference=reference)
    assert result.value == 0.0 and not result.scoring_failed
    assert result.metadata["status"] == status
    assert result.metadata["word"] is None
    assert reason in result.reason


def test_the_same_stop_word_answer_is_identical(metric):
    result = metric.score(output="No.", reference="no")
    assert result.value == 1.0 and result.metadata["status"] == "same_stop_words"


def test_bad_constructor_arguments_raise_value_error():
    with pytest.raises(ValueError, match="weights"):
        SemanticMatch(weights=(1.0, -1.0, 1.0), track=False)
    with pytest.raises(ValueError, match="floor"):
        SemanticMatch(floor=1.5, track=False)
    with pytest.raises(ValueError, match="token_vectors"):
        SemanticMatch(token_vectors="glove", track=False)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"`batch_size` to be a positive integer, got 2\.5"):
        SemanticMatch(batch_size=2.5, track=False)  # type: ignore[arg-type]


def test_a_model_that_gives_nan_fails_the_item(tmp_path):
    # A damaged model: its NaN raw score fell below the floor and was logged as a 0.0.
    from safetensors.torch import load_file, save_file

    directory = build_tiny_bert(tmp_path / "damaged")
    weights = load_file(directory / "model.safetensors")
    weights["encoder.layer.1.output.LayerNorm.bias"].fill_(math.nan)
    save_file(weights, directory / "model.safetensors", metadata={"format": "pt"})
    damaged = SemanticMatch(str(directory), device="cpu", track=False)
    message = "SemanticMatch: the model gave the item the score nan, which is no number"
    with pytest.raises(MetricComputationError, match=message):
        damaged.score(output="a cat sat", reference="the dog ran")
    with pytest.raises(MetricComputationError, match="gave item 0 the score nan"):
        damaged.score_batch(["a cat sat", "a dog"], ["the dog ran", "a cat"])
    # An empty output has no raw score: its defined 0.0 stands.
    assert damaged.score(output="", reference="the dog ran").value == 0.0


def test_weights_near_the_float_limit_are_relative_like_any_others():
    # Their sum overflows: it raised OverflowError before.
    metric = SemanticMatch(weights=(1e308, 1e308, 0.0), track=False)
    assert metric.engine.combination.weights == (0.5, 0.5, 0.0)


def test_fit_from_items_and_from_a_dataset_equal_fit(stsb_pairs):
    references = [second for _, second, _ in stsb_pairs[:40]]
    items = [{"input": first, "reference": second} for first, second, _ in stsb_pairs[:40]]

    class Dataset:
        """The one method of ``opik.Dataset`` that fitting uses."""

        def get_items(self) -> list[dict[str, str]]:
            return items

    by_fit = SemanticMatch(device="cpu", track=False)
    by_fit.fit(references)
    by_items = SemanticMatch(device="cpu", track=False)
    by_items.fit_from_items(items)
    by_dataset = SemanticMatch(device="cpu", track=False)
    by_dataset.fit_from_dataset(Dataset())
    assert by_fit.engine.state == by_items.engine.state == by_dataset.engine.state
    with pytest.raises(MetricComputationError, match="item 1 to be a mapping with a 'answer'"):
        by_items.fit_from_items([{"answer": "a"}, {"reference": "b"}], reference_key="answer")
    with pytest.raises(MetricComputationError, match="at least one reference"):
        by_items.fit([])


@pytest.mark.parametrize("items", [None, 5, "reference", {"reference": "a"}])
def test_fit_from_items_that_are_not_a_list_raises_metric_computation_error(metric, items):
    with pytest.raises(MetricComputationError, match=r"Expected `items` to be a list, got \w+\."):
        metric.fit_from_items(items)


def test_save_and_load_round_trip(tmp_path, fitted, stsb_pairs):
    path = tmp_path / "semantic_match.json"
    fitted.save(path)
    loaded = SemanticMatch(device="cpu", track=False).load(path)  # load gives the metric
    assert isinstance(loaded, SemanticMatch)
    outputs = [first for first, _, _ in stsb_pairs[:20]]
    references = [second for _, second, _ in stsb_pairs[:20]]
    assert [r.value for r in loaded.score_batch(outputs, references)] == [
        r.value for r in fitted.score_batch(outputs, references)
    ]
    assert loaded.score(output="a dog", reference="a cat").metadata["fitted"] is True


def test_isolated_token_vectors_are_available():
    isolated = SemanticMatch(device="cpu", track=False, token_vectors="isolated")
    result = isolated.score(output="Heart attack", reference="Myocardial infarction")
    assert result.metadata["token_vectors"] == "isolated"
    # The engine's isolated word level is checked against sentence-transformers in
    # tests/semantic/test_engine.py; here the setting must reach it, and it differs
    # from the default, in-context token vectors.
    [engine_isolated] = SemanticMatchEngine(
        "all-MiniLM-L6-v2", device="cpu", token_vectors="isolated"
    ).score(["Heart attack"], ["Myocardial infarction"])
    [in_context] = SemanticMatchEngine("all-MiniLM-L6-v2", device="cpu").score(
        ["Heart attack"], ["Myocardial infarction"]
    )
    assert result.metadata["word"] == pytest.approx(engine_isolated.word, abs=1e-6)
    assert abs(engine_isolated.word - in_context.word) > 1e-3


def _engine_score(output: str, reference: str, **options) -> float:
    [result] = SemanticMatchEngine("all-MiniLM-L6-v2", device="cpu", **options).score(
        [output], [reference]
    )
    return result.score


#: Settings under which the paraphrases of the snap test lie either side of a 0.95 snap.
HARD_FLOOR = {"weights": (0.2, 0.2, 0.6), "softness": 0.0, "cleaning": "all_stop_words"}


def test_snap_reaches_the_engine():
    # Two paraphrases just under a snap of 0.95 and one just over it: a lower snap must
    # lift the first to 1.0, and snap=None must leave the second unsnapped.
    near = ("A dog runs.", "A dog is running.")
    over = ("A man plays a guitar.", "A man is playing the guitar.")
    default = SemanticMatch(snap=0.95, **HARD_FLOOR, device="cpu", track=False)
    assert 0.9 < default.score(output=near[0], reference=near[1]).value < 0.95
    assert default.score(output=over[0], reference=over[1]).value == 1.0

    low = SemanticMatch(snap=0.9, **HARD_FLOOR, device="cpu", track=False)
    result = low.score(output=near[0], reference=near[1])
    assert result.value == 1.0 == _engine_score(*near, snap=0.9, **HARD_FLOOR)
    assert result.metadata["snapped"] is True and result.metadata["snap"] == 0.9
    assert "snapped to 1.0 (>= 0.9)" in result.reason

    never = SemanticMatch(snap=None, **HARD_FLOOR, device="cpu", track=False)
    result = never.score(output=over[0], reference=over[1])
    assert 0.9 < result.value < 1.0
    assert result.value == _engine_score(*over, snap=None, **HARD_FLOOR)
    assert result.metadata["snapped"] is False and result.metadata["snap"] is None


def test_a_fixed_paragraph_baseline_reaches_the_engine_and_survives_fitting(stsb_pairs):
    output, reference = "Heart attack", "Myocardial infarction"
    default = SemanticMatch(device="cpu", track=False).score(output=output, reference=reference)
    fixed = SemanticMatch(paragraph_baseline=0.3, device="cpu", track=False)
    result = fixed.score(output=output, reference=reference)
    meta = result.metadata
    assert (meta["paragraph_baseline"], meta["paragraph_baseline_source"]) == (0.3, "fixed")
    assert meta["paragraph"] == pytest.approx((meta["paragraph_cosine"] - 0.3) / 0.7)
    assert result.value == _engine_score(output, reference, paragraph_baseline=0.3)
    assert result.value < default.value - 0.1  # the baseline changes the score
    assert "paragraph baseline not fitted" not in result.reason
    # Fitting weighs pieces by idf but keeps the baseline the caller fixed.
    fixed.fit([second for _, second, _ in stsb_pairs[:40]])
    meta = fixed.score(output=output, reference=reference).metadata
    assert (meta["paragraph_baseline"], meta["paragraph_baseline_source"]) == (0.3, "fixed")
    assert meta["fitted"] is True


def test_weights_and_floor_reach_the_engine():
    output, reference = "Heart attack", "Myocardial infarction"
    default = SemanticMatch(device="cpu", track=False).score(output=output, reference=reference)
    options = {"weights": (0.4, 0.4, 0.2), "floor": 0.4, "softness": 0.0}
    result = SemanticMatch(**options, device="cpu", track=False).score(
        output=output, reference=reference
    )
    meta = result.metadata
    assert meta["weights"] == pytest.approx({"word": 0.4, "sentence": 0.4, "paragraph": 0.2})
    assert (meta["floor"], meta["softness"]) == (0.4, 0.0)
    raw = 0.4 * meta["word"] + 0.4 * meta["sentence"] + 0.2 * meta["paragraph"]
    assert meta["raw_score"] == pytest.approx(raw)
    assert result.value == pytest.approx((raw - 0.4) / 0.6)
    assert result.value == _engine_score(output, reference, **options)
    assert abs(result.value - default.value) > 0.05


def test_the_fast_mode_is_bf16_here_close_to_float32_and_recorded(metric, stsb_pairs):
    # Decided by the hardware, not by the code under test: a fast mode broken into float32
    # must fail here, not skip.
    if not cpu_has_native_bf16():
        pytest.skip("this CPU has no native bf16: the fast mode is float32 here")
    fast = SemanticMatch(device="cpu", dtype="fast", track=False)
    outputs = [output for output, _, _ in stsb_pairs[:40]]
    references = [reference for _, reference, _ in stsb_pairs[:40]]
    exact = [result.value for result in metric.score_batch(outputs, references)]
    approximate = fast.score_batch(outputs, references)
    assert {result.metadata["dtype"] for result in approximate} == {"bfloat16"}
    differences = [abs(a.value - e) for a, e in zip(approximate, exact, strict=True)]
    assert 0 < max(differences) <= 2e-2
