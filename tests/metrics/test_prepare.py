"""prepare(): a dataset's references encoded up front, so that items encode only outputs.

Every test runs the real engines (MiniLM, the tiny COMET fixture) with a cache of its own,
and counts what the engine really encodes by recording the texts its encoding step gets.
"""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path

import opik
import pytest
from opik.exceptions import MetricComputationError

from opik_semantic_metrics import COMET, BERTScore, SemanticMatch
from opik_semantic_metrics.batching.cache import EmbeddingCache
from opik_semantic_metrics.errors import InputError

COMET_FIXTURES = Path(__file__).parents[1] / "fixtures" / "comet"
SEGMENTS = json.loads((COMET_FIXTURES / "segments.json").read_text(encoding="utf-8"))[:20]


def _recording(engine, method: str) -> list[str]:
    """Texts passed to ``engine``'s encoding step ``method``, recorded as it runs."""
    encoded: list[str] = []
    real = getattr(engine, method)

    def recorded(texts, *args, **kwargs):
        encoded.extend(texts)
        return real(texts, *args, **kwargs)

    setattr(engine, method, recorded)
    return encoded


def _in_opik(metric, outputs: list[str], references: list, **fields) -> dict[str, list[float]]:
    """Each item's score values through Opik's engine with 16 threads, by item index."""
    items = [
        {"candidate": output, "reference": reference, "index": index}
        | {key: values[index] for key, values in fields.items()}
        for index, (output, reference) in enumerate(zip(outputs, references, strict=True))
    ]
    run = opik.evaluate_on_dict_items(
        items=items,
        task=lambda item: {"output": item["candidate"]},
        scoring_metrics=[metric],
        scoring_threads=16,
    )
    assert len(run.test_results) == len(items)
    return {
        test.test_case.dataset_item_id: [result.value for result in test.score_results]
        for test in run.test_results
        if not any(result.scoring_failed for result in test.score_results)
    }


@pytest.fixture(scope="module")
def bertscore() -> BERTScore:
    return BERTScore(model="all-MiniLM-L6-v2", device="cpu", track=False)


@pytest.fixture(scope="module")
def semantic_match() -> SemanticMatch:
    return SemanticMatch(device="cpu", track=False)


def test_bertscore_items_in_opik_encode_only_outputs_after_prepare(bertscore, stsb_lists):
    outputs, references = stsb_lists
    # Some items with several references, one of them shared with another item.
    references = [*references[:100], *([ref, references[0]] for ref in references[100:])]
    engine = bertscore.engine
    engine.cache = EmbeddingCache()
    unprepared = _in_opik(bertscore, outputs, references)

    engine.cache = cache = EmbeddingCache()
    encoded = _recording(engine, "_encode_uncached")
    distinct: set[str] = set()
    for reference in references:
        distinct.update([reference] if isinstance(reference, str) else reference)
    assert bertscore.prepare(references) == len(distinct) == len(cache)
    assert sorted(encoded) == sorted(distinct)  # each once
    encoded.clear()
    misses = cache.misses
    prepared = _in_opik(bertscore, outputs, references)
    del engine._encode_uncached

    assert cache.misses == misses
    assert not set(encoded) & (distinct - set(outputs))
    assert set(encoded) <= set(outputs)
    assert len(prepared) == len(unprepared) == len(outputs)
    for item, values in unprepared.items():
        assert prepared[item] == pytest.approx(values, abs=1e-6)


def test_bertscore_prepare_refuses_the_items_scoring_refuses_naming_them(bertscore):
    for bad in (3, [], [None], b"bytes"):
        with pytest.raises(MetricComputationError) as scored:
            bertscore.score_batch(["A text.", "Another."], ["A reference.", bad])
        with pytest.raises(MetricComputationError) as prepared:
            bertscore.prepare(["A reference.", bad])
        assert str(prepared.value) == str(scored.value)
        assert "reference 1" in str(prepared.value)
    with pytest.raises(MetricComputationError, match="`references` to be a list"):
        bertscore.prepare("A reference.")


def test_bertscore_fit_idf_prepares_the_references():
    metric = BERTScore(model="all-MiniLM-L6-v2", device="cpu", idf=True, track=False)
    metric.engine.cache = cache = EmbeddingCache()
    references = ["A cat sits on the mat.", "Two dogs run in the park.", "A cat sits on the mat."]
    metric.fit_idf(references)
    assert len(cache) == 2
    encoded = _recording(metric.engine, "_encode_uncached")
    metric.score_batch(["A cat sat.", "Dogs run."], references[:2])
    assert encoded == ["A cat sat.", "Dogs run."]


def test_prepare_within_a_small_cache_keeps_the_leading_references_and_scores_the_same(
    stsb_lists, caplog
):
    outputs, references = stsb_lists
    metric = BERTScore(model="all-MiniLM-L6-v2", device="cpu", track=False)
    metric.engine.cache = EmbeddingCache()
    expected = [result[0].value for result in metric.score_batch(outputs, references)]
    # Room for about 30 of the 120 caption references' token embeddings.
    metric.engine.cache = cache = EmbeddingCache(max_bytes=30 * 12_000)
    with caplog.at_level(logging.WARNING, logger="opik_semantic_metrics.batching.cache"):
        kept = metric.prepare(references)
    distinct = list(dict.fromkeys(references))
    assert 0 < kept < len(distinct)
    assert f"holds {kept} of {len(distinct)} texts" in caplog.text
    assert set(cache.lookup(metric.engine._cache_namespace, distinct)) == set(distinct[:kept])
    assert cache.bytes_used <= cache.max_bytes
    scores = [result[0].value for result in metric.score_batch(outputs, references)]
    assert scores == pytest.approx(expected, abs=1e-6)


def test_prepare_while_opiks_16_threads_score_the_same_references(bertscore, stsb_lists):
    outputs, references = stsb_lists
    bertscore.engine.cache = EmbeddingCache()
    expected = {
        f"temp_item_{index}": [result.value for result in values]
        for index, values in enumerate(bertscore.score_batch(outputs, references))
    }
    bertscore.engine.cache = EmbeddingCache()
    preparing = threading.Thread(target=bertscore.prepare, args=(references[::-1],))
    preparing.start()
    scored = _in_opik(bertscore, outputs, references)
    preparing.join()
    assert set(scored) == set(expected)
    for item, values in expected.items():
        assert scored[item] == pytest.approx(values, abs=1e-6)


def test_semantic_match_items_encode_only_outputs_after_prepare(semantic_match, stsb_lists):
    outputs, references = stsb_lists
    references = [*references[:110], "", "   ", "?!", ["Paris", "London"], *references[114:]]
    engine = semantic_match.engine
    engine.cache = EmbeddingCache()
    unprepared = _in_opik(semantic_match, outputs, references)

    engine.cache = cache = EmbeddingCache()
    encoded = _recording(engine, "_encode_uncached")
    kept = semantic_match.prepare(references)
    # Blank references and one with nothing left once cleaned are not encoded, as scoring
    # does not encode them; the list answer is encoded joined.
    assert kept == len(cache) > 0
    assert not {"", "   ", "?!"} & set(encoded)
    assert "Paris, London" in encoded
    encoded.clear()
    prepared = _in_opik(semantic_match, outputs, references)
    del engine._encode_uncached
    assert not set(encoded) & set(references[:110])
    assert len(prepared) == len(unprepared) == len(outputs)
    for item, values in unprepared.items():
        assert prepared[item] == pytest.approx(values, abs=1e-6)


def test_semantic_match_prepare_and_fit_refuse_what_scoring_refuses(semantic_match):
    for bad in (3, [], ["a", 2]):
        with pytest.raises(MetricComputationError) as scored:
            semantic_match.score_batch(["A text.", "Another."], ["A reference.", bad])
        with pytest.raises(MetricComputationError) as prepared:
            semantic_match.prepare(["A reference.", bad])
        assert str(prepared.value) == str(scored.value)


def test_semantic_match_fit_prepares_the_references():
    metric = SemanticMatch(device="cpu", track=False)
    metric.engine.cache = cache = EmbeddingCache()
    references = ["The train leaves at noon.", "Heart attack.", "Paris is in France."]
    metric.fit(references)
    encoded = _recording(metric.engine, "_encode_uncached")
    metric.score_batch(["It leaves at twelve.", "A heart attack."], references[:2])
    # Each output's raw and cleaned text at most; nothing of the references.
    assert 0 < len(set(encoded)) <= 4
    assert not set(encoded) & set(references)
    assert len(cache) >= 6


def test_comet_items_encode_only_translations_after_prepare():
    metric = COMET(str(COMET_FIXTURES / "regression-xlmr"), device="cpu", track=False)
    sources = [segment["src"] for segment in SEGMENTS]
    translations = [segment["mt"] for segment in SEGMENTS]
    references = [segment["ref"] for segment in SEGMENTS]
    engine = metric.engine
    engine.cache = EmbeddingCache()
    unprepared = _in_opik(metric, translations, references, input=sources)

    engine.cache = cache = EmbeddingCache()
    assert metric.prepare(inputs=sources, references=references) == len(
        set(sources) | set(references)
    )
    misses = cache.misses
    prepared = _in_opik(metric, translations, references, input=sources)
    # Only the translations were computed.
    assert cache.misses - misses == len(set(translations) - set(sources) - set(references))
    for item, values in unprepared.items():
        assert prepared[item] == pytest.approx(values, abs=1e-6)


def test_comet_prepare_refuses_what_scoring_refuses():
    metric = COMET(str(COMET_FIXTURES / "regression-xlmr"), device="cpu", track=False)
    source, translation, reference = SEGMENTS[0]["src"], SEGMENTS[0]["mt"], SEGMENTS[0]["ref"]
    for sources, references in (([source, 3], None), ([source, source], [reference, None])):
        with pytest.raises(InputError) as scored:
            metric.engine.score(sources, [translation, translation], references)
        with pytest.raises(InputError) as prepared:
            metric.engine.prepare(sources, references)
        assert str(prepared.value) == str(scored.value)
    with pytest.raises(MetricComputationError, match="reference 1"):
        metric.prepare(references=[reference, 5])


def test_comet_prepare_does_nothing_for_a_unified_model():
    metric = COMET(str(COMET_FIXTURES / "unified-kiwi"), device="cpu", track=False)
    metric.engine.cache = cache = EmbeddingCache()
    assert metric.prepare(inputs=[SEGMENTS[0]["src"]], references=[SEGMENTS[0]["ref"]]) == 0
    assert len(cache) == 0
