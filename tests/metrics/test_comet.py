"""The Opik COMET metric: results, metadata, bad input, Opik's engine, experiment level."""

from __future__ import annotations

import importlib
import json
import math
import os
from collections import Counter
from pathlib import Path

import numpy as np
import opik
import pytest
from opik.exceptions import MetricComputationError, ScoreMethodMissingArguments
from scipy import stats as scipy_stats

from opik_semantic_metrics import COMET
from opik_semantic_metrics.comet.encoder import CometEncoder
from opik_semantic_metrics.compare.corpus import compare_results
from opik_semantic_metrics.compare.stats import compare_systems

FIXTURES = Path(__file__).parents[1] / "fixtures" / "comet"
ORACLE = json.loads((FIXTURES / "oracle.json").read_text(encoding="utf-8"))
SEGMENTS = json.loads((FIXTURES / "segments.json").read_text(encoding="utf-8"))
EMPTY = SEGMENTS.index({"src": "", "mt": "", "ref": ""})
LONG = next(
    i for i, s in enumerate(SEGMENTS) if len(s["mt"]) > 1000 and len(s["src"] + s["ref"]) < 20
)


def _oracle(name: str, mode: str = "with_reference") -> list[float]:
    return ORACLE["models"][name][mode]["scores"]


@pytest.fixture(scope="module")
def metric() -> COMET:
    return COMET(str(FIXTURES / "regression-xlmr"), device="cpu", track=False)


@pytest.fixture(scope="module")
def xcomet() -> COMET:
    return COMET(str(FIXTURES / "xcomet"), device="cpu", name="xcomet", track=False)


def test_score_equals_unbabel_comet_and_names_the_model(metric):
    segment = SEGMENTS[0]
    result = metric.score(input=segment["src"], output=segment["mt"], reference=segment["ref"])
    assert result.name == "comet" and not result.scoring_failed
    assert result.value == pytest.approx(_oracle("regression-xlmr")[0], abs=1e-5)
    meta = result.metadata
    assert meta["model"] == str(FIXTURES / "regression-xlmr")
    assert meta["class_identifier"] == "regression_metric"
    assert meta["comet_version"] == "2.2.7"
    assert meta["version"] == "0.1.0" and meta["model_revision"] is None
    assert meta["used_reference"] is True and meta["truncated"] == []
    assert meta["dtype"] == "float32"
    assert "error_spans" not in meta
    assert result.reason.startswith(f"COMET {result.value:.4f} (")
    assert result.reason.endswith("regression_metric, with reference).")


def test_xcomet_results_carry_the_error_spans(xcomet):
    index = next(
        i
        for i, spans in enumerate(
            ORACLE["models"]["xcomet"]["with_reference"]["metadata"]["error_spans"]
        )
        if len(spans) >= 2
    )
    segment = SEGMENTS[index]
    result = xcomet.score(input=segment["src"], output=segment["mt"], reference=segment["ref"])
    metadata = ORACLE["models"]["xcomet"]["with_reference"]["metadata"]
    assert result.value == pytest.approx(_oracle("xcomet")[index], abs=1e-5)
    expected = metadata["error_spans"][index]
    assert [
        {**span, "confidence": pytest.approx(span["confidence"], abs=1e-5)} for span in expected
    ] == (result.metadata["error_spans"])
    assert result.metadata["partial_scores"]["mqm"] == pytest.approx(metadata["mqm_scores"][index])
    assert f"{len(expected)} error spans (" in result.reason
    # Without a reference XCOMET scores the translation against the source alone.
    qe = xcomet.score(input=segment["src"], output=segment["mt"])
    assert qe.value == pytest.approx(_oracle("xcomet", "without_reference")[index], abs=1e-5)
    assert qe.metadata["used_reference"] is False


def test_xcomet_results_carry_the_engines_partial_scores_and_severity_counts(xcomet):
    # A segment whose spans have three severities, so the reason's counts can be wrong in
    # more ways than their total.
    metadata = ORACLE["models"]["xcomet"]["with_reference"]["metadata"]
    index = next(
        i
        for i, spans in enumerate(metadata["error_spans"])
        if len({span["severity"] for span in spans}) == 3
    )
    segment = SEGMENTS[index]
    result = xcomet.score(input=segment["src"], output=segment["mt"], reference=segment["ref"])
    assert result.name == "xcomet"
    assert result.metadata["partial_scores"] == {
        "src": pytest.approx(metadata["src_scores"][index], abs=1e-5),
        "ref": pytest.approx(metadata["ref_scores"][index], abs=1e-5),
        "unified": pytest.approx(metadata["unified_scores"][index], abs=1e-5),
        "mqm": pytest.approx(metadata["mqm_scores"][index], abs=1e-5),
    }
    counts = Counter(span["severity"] for span in metadata["error_spans"][index])
    described = ", ".join(f"{count} {severity}" for severity, count in counts.items())
    assert f"; {sum(counts.values())} error spans ({described})." in result.reason
    # Without a reference only the source sequence is scored.
    qe = xcomet.score(input=segment["src"], output=segment["mt"])
    without = ORACLE["models"]["xcomet"]["without_reference"]["metadata"]
    assert qe.metadata["partial_scores"] == {
        "src": pytest.approx(without["src_scores"][index], abs=1e-5),
        "mqm": pytest.approx(without["mqm_scores"][index], abs=1e-5),
    }
    assert [span["confidence"] for span in qe.metadata["error_spans"]] == pytest.approx(
        [span["confidence"] for span in without["error_spans"][index]], abs=1e-5
    )


def test_batch_size_reaches_the_engine(monkeypatch):
    real = CometEncoder.hidden_states
    passes: list[int] = []

    def counted(self, input_ids, attention_mask, *rest):
        passes.append(input_ids.shape[0])
        return real(self, input_ids, attention_mask, *rest)

    monkeypatch.setattr(CometEncoder, "hidden_states", counted)
    segments = SEGMENTS[:6]
    for batch_size, tag in ((2, "small"), (16, "default")):
        passes.clear()
        metric = COMET(str(FIXTURES / "regression-xlmr"), batch_size, device="cpu", track=False)
        # Translations no earlier test encoded, so the shared cache cannot skip the passes.
        translations = [f"{segment['mt']} ({tag} batches)" for segment in segments]
        results = metric.score_batch(
            [s["src"] for s in segments], translations, [s["ref"] for s in segments]
        )
        assert len(results) == 6 and sum(passes) >= 6
        if batch_size == 2:
            assert max(passes) <= 2
        else:
            assert max(passes) > 2  # so the bound above is the option's doing


def test_no_reference_field_stops_an_opik_run_naming_the_field_and_the_mapping(metric):
    """A dataset whose references are under another name (Opik's own `expected_output`):
    the run stops at once, as Opik stops it for any metric whose field is missing, rather
    than failing every item with advice to use a reference-free model."""
    items = [
        {"input": s["src"], "expected_output": s["ref"], "translation": s["mt"]}
        for s in SEGMENTS[:3]
    ]
    with pytest.raises(ScoreMethodMissingArguments, match=r"\['reference'\].*scoring_key_mapping"):
        opik.evaluate_on_dict_items(
            items=items,
            task=lambda item: {"output": item["translation"]},
            scoring_metrics=[metric],
        )
    mapped = opik.evaluate_on_dict_items(
        items=items,
        task=lambda item: {"output": item["translation"]},
        scoring_metrics=[metric],
        scoring_key_mapping={"reference": "expected_output"},
    )
    expected = _oracle("regression-xlmr")[:3]
    values = sorted(
        (test.test_case.dataset_item_id, test.score_results[0].value)
        for test in mapped.test_results
    )
    assert [value for _, value in values] == pytest.approx(expected, abs=1e-5)
    with pytest.raises(ScoreMethodMissingArguments, match=r"available keys.*'input', 'output'"):
        metric.score(input="A text.", output="Ein Text.")


def test_xcomet_scores_without_a_reference_field_as_without_a_reference(xcomet):
    segment = SEGMENTS[3]
    absent = xcomet.score(input=segment["src"], output=segment["mt"])
    empty = xcomet.score(input=segment["src"], output=segment["mt"], reference=None)
    assert absent.value == empty.value
    assert absent.metadata["used_reference"] is empty.metadata["used_reference"] is False


def test_a_reference_free_model_ignores_whatever_reference_it_gets():
    kiwi = COMET(str(FIXTURES / "unified-kiwi"), device="cpu", track=False)
    segment = SEGMENTS[3]
    expected = _oracle("unified-kiwi", "without_reference")[3]
    for reference in (None, segment["ref"], 123, ["a list"]):
        result = kiwi.score(input=segment["src"], output=segment["mt"], reference=reference)
        assert result.value == pytest.approx(expected, abs=1e-5)
        assert result.metadata["used_reference"] is False


def test_empty_texts_get_comets_defined_score(metric):
    result = metric.score(input="", output="", reference="")
    assert math.isfinite(result.value)
    assert result.value == pytest.approx(_oracle("regression-xlmr")[EMPTY], abs=1e-5)


def test_long_texts_are_cut_as_comet_cuts_them_and_flagged(metric):
    segment = SEGMENTS[LONG]
    result = metric.score(input=segment["src"], output=segment["mt"], reference=segment["ref"])
    assert result.value == pytest.approx(_oracle("regression-xlmr")[LONG], abs=1e-5)
    assert result.metadata["truncated"] == ["translation"]
    assert result.reason.endswith("cut to the model's limit: translation.")


def test_a_checkpoint_that_scores_nan_fails_the_item(tmp_path):
    # A damaged checkpoint: NaN was logged as the item's score, and Opik's mean with it.
    import shutil

    import torch

    shutil.copytree(FIXTURES / "regression-xlmr", tmp_path / "damaged")
    # Its hparams name the encoder as ../encoders/xlmr.
    shutil.copytree(FIXTURES / "encoders" / "xlmr", tmp_path / "encoders" / "xlmr")
    path = tmp_path / "damaged" / "checkpoints" / "model.ckpt"
    checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    checkpoint["state_dict"]["estimator.ff.6.bias"].fill_(math.nan)
    torch.save(checkpoint, path)
    damaged = COMET(str(tmp_path / "damaged"), device="cpu", track=False)
    message = "COMET: the model gave the item the score nan"
    with pytest.raises(MetricComputationError, match=message):
        damaged.score(input="The cat.", output="Die Katze.", reference="Die Katze.")
    with pytest.raises(MetricComputationError, match="gave item 0 the score nan"):
        damaged.score_batch(["A.", "B."], ["A.", "B."], ["A.", "B."])


def test_bad_constructor_arguments_are_value_errors():
    for batch_size in (0, 1.5, True):
        with pytest.raises(
            ValueError, match=f"`batch_size` to be a positive integer, got {batch_size}"
        ):
            COMET(str(FIXTURES / "regression-xlmr"), batch_size=batch_size, track=False)


@pytest.fixture(scope="module", autouse=True)
def _litellm_imported_once() -> None:
    """Import litellm here, in one thread, before Opik's engine runs.

    Opik imports litellm lazily from its worker threads on the first metric error
    (``exception_analyzer``), and concurrent first imports of litellm can deadlock
    (``_DeadlockError`` on ``litellm.rust_bridge.catalog``, seen here about one run in
    four). Its price list is read from the package, not fetched.
    """
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    importlib.import_module("litellm")


def _evaluate(metric: COMET, translations: list[str | None]):
    items = [
        {"input": segment["src"], "reference": segment["ref"], "translation": translation}
        for segment, translation in zip(SEGMENTS[:20], translations, strict=True)
    ]
    return opik.evaluate_on_dict_items(
        items=items,
        task=lambda item: {"output": item["translation"]},
        scoring_metrics=[metric],
        scoring_threads=16,
    )


def test_through_opiks_engine_with_a_failed_item_and_the_system_score(metric):
    translations: list[str | None] = [s["mt"] for s in SEGMENTS[:20]]
    translations[7] = None
    result = _evaluate(metric, translations)
    by_item = {
        test.test_case.dataset_item_id: test.score_results[0] for test in result.test_results
    }
    assert by_item["temp_item_7"].scoring_failed
    expected = _oracle("regression-xlmr")[:20]
    for index in set(range(20)) - {7}:
        assert by_item[f"temp_item_{index}"].value == pytest.approx(expected[index], abs=1e-5)

    [system] = metric.experiment_scoring_functions()[0](result.test_results)
    others = [expected[i] for i in range(20) if i != 7]
    assert system.name == "comet_system"
    assert system.value == pytest.approx(sum(others) / len(others), abs=1e-5)
    assert system.metadata["count"] == 19 and system.metadata["failed_items"] == ["temp_item_7"]
    # The interval is scipy's percentile bootstrap of unbabel-comet's scores, in item
    # order, with 1000 resamples from a generator seeded 0 (the defaults of
    # experiment_scoring_functions): scipy draws its resamples as the metric does, so the
    # two intervals are the same numbers, not two Monte-Carlo estimates of one.
    oracle = scipy_stats.bootstrap(
        (others,),
        np.mean,
        n_resamples=1000,
        method="percentile",
        random_state=np.random.default_rng(0),
    ).confidence_interval
    assert system.metadata["confidence"] == 0.95
    assert system.metadata["low"] == pytest.approx(oracle.low, abs=1e-5)
    assert system.metadata["high"] == pytest.approx(oracle.high, abs=1e-5)
    assert "1 items failed and are not averaged in" in system.reason


def test_compare_two_systems_scored_through_opik(metric):
    good = [s["mt"] for s in SEGMENTS[:20]]
    worse = ["Das ist falsch." for _ in good]
    verdict = compare_results(
        _evaluate(metric, good), _evaluate(metric, worse), name_a="mt", name_b="constant"
    )
    scores_good = [
        r.value
        for r in metric.score_batch(
            [s["src"] for s in SEGMENTS[:20]], good, [s["ref"] for s in SEGMENTS[:20]]
        )
    ]
    scores_worse = [
        r.value
        for r in metric.score_batch(
            [s["src"] for s in SEGMENTS[:20]], worse, [s["ref"] for s in SEGMENTS[:20]]
        )
    ]
    expected = compare_systems(scores_good, scores_worse, name_a="mt", name_b="constant")
    assert verdict.mean_a == pytest.approx(expected.mean_a, abs=1e-6)
    assert verdict.mean_b == pytest.approx(expected.mean_b, abs=1e-6)
    assert (verdict.winner, verdict.significant) == (expected.winner, expected.significant)
    assert verdict.t_test.p_value == pytest.approx(expected.t_test.p_value, rel=1e-4)
    assert verdict.bootstrap.wins_a == expected.bootstrap.wins_a


def test_the_fast_mode_is_recorded_in_the_metadata():
    metric = COMET(str(FIXTURES / "regression-xlmr"), device="cpu", dtype="bf16", track=False)
    segment = SEGMENTS[0]
    result = metric.score(input=segment["src"], output=segment["mt"], reference=segment["ref"])
    assert result.metadata["dtype"] == "bfloat16"
    assert result.value == pytest.approx(_oracle("regression-xlmr")[0], abs=2e-2)
