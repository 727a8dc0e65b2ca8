"""CometEngine against unbabel-comet 2.2.7 itself, the oracle, for every COMET model class.

``tests/fixtures/comet/`` holds tiny randomly initialised checkpoints of each class and
unbabel-comet's own ``predict`` output on ``segments.json``, made in a separate
environment (transformers 4, numpy 1) by ``scripts/comet_oracle.py``; these tests run in
the project's (transformers 5, numpy 2). See tests/fixtures/comet/README.md.
"""

from __future__ import annotations

import functools
import json
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from opik_semantic_metrics.comet.engine import CometEngine, CometResult

FIXTURES = Path(__file__).parents[1] / "fixtures" / "comet"
ORACLE = json.loads((FIXTURES / "oracle.json").read_text(encoding="utf-8"))
SEGMENTS = json.loads((FIXTURES / "segments.json").read_text(encoding="utf-8"))
SOURCES = [segment["src"] for segment in SEGMENTS]
TRANSLATIONS = [segment["mt"] for segment in SEGMENTS]
REFERENCES = [segment["ref"] for segment in SEGMENTS]
TOLERANCE = 1e-5

CASES = [
    (name, mode)
    for name, entry in ORACLE["models"].items()
    for mode in ("with_reference", "without_reference")
    if mode in entry
]
WORD_LEVEL_CASES = [
    (name, mode)
    for name, mode in CASES
    if "error_spans" in ORACLE["models"][name][mode].get("metadata", {})
]
_engines: dict[str, CometEngine] = {}


def _engine(name: str) -> CometEngine:
    if name not in _engines:
        _engines[name] = CometEngine(str(FIXTURES / name), device="cpu", batch_size=8)
    return _engines[name]


@functools.cache
def _ours(name: str, mode: str) -> list[CometResult]:
    references = REFERENCES if mode == "with_reference" else None
    return _engine(name).score(SOURCES, TRANSLATIONS, references)


def test_the_oracle_is_unbabel_comet_under_transformers_4():
    versions = ORACLE["versions"]
    assert versions["unbabel-comet"] == "2.2.7"
    assert versions["transformers"].startswith("4.")
    assert versions["numpy"].startswith("1.")
    assert {ORACLE["models"][name]["class_identifier"] for name, _ in CASES} == {
        "regression_metric",
        "referenceless_regression_metric",
        "unified_metric",
        "xcomet_metric",
    }


def test_the_segments_cover_empty_long_and_non_latin_text():
    assert len(SEGMENTS) >= 50
    assert any(all(text == "" for text in segment.values()) for segment in SEGMENTS)
    assert any(segment["mt"] == "" and segment["ref"] for segment in SEGMENTS)
    scripts = {
        "Han": r"[\u4e00-\u9fff]",
        "Kana": r"[\u3040-\u30ff]",
        "Cyrillic": r"[\u0400-\u04ff]",
        "Arabic": r"[\u0600-\u06ff]",
        "Devanagari": r"[\u0900-\u097f]",
        "Hangul": r"[\uac00-\ud7af]",
        "Greek": r"[\u0370-\u03ff]",
        "Hebrew": r"[\u0590-\u05ff]",
        "Thai": r"[\u0e00-\u0e7f]",
    }
    text = " ".join(TRANSLATIONS + REFERENCES)
    assert all(re.search(pattern, text) for pattern in scripts.values())
    # Over 512 tokens: the model's tokenizer says so, and the results say they were cut.
    tokenizer = _engine("regression-xlmr").loaded.model.encoder.tokenizer
    assert any(item.truncated for item in tokenizer.encode(TRANSLATIONS))
    results = _ours("regression-xlmr", "with_reference")
    flagged = {name for result in results for name in result.truncated}
    assert flagged == {"source", "translation", "reference"}


@pytest.mark.parametrize(("name", "mode"), CASES)
def test_scores_equal_unbabel_comet(name, mode):
    expected = ORACLE["models"][name][mode]
    results = _ours(name, mode)
    assert len(results) == len(expected["scores"])
    differences = [
        abs(ours.score - theirs) for ours, theirs in zip(results, expected["scores"], strict=True)
    ]
    assert max(differences) < TOLERANCE
    system = sum(result.score for result in results) / len(results)
    assert system == pytest.approx(expected["system_score"], abs=TOLERANCE)
    # Not constant: the fixtures tell segments apart far beyond the tolerance.
    assert max(expected["scores"]) - min(expected["scores"]) > 1000 * TOLERANCE
    assert all(result.used_reference == (mode == "with_reference") for result in results)


@pytest.mark.parametrize(("name", "mode"), WORD_LEVEL_CASES)
def test_error_spans_and_partial_scores_equal_unbabel_comet(name, mode):
    metadata = ORACLE["models"][name][mode]["metadata"]
    results = _ours(name, mode)
    spans = 0
    for result, expected in zip(results, metadata["error_spans"], strict=True):
        assert result.error_spans is not None
        assert [(s.text, s.severity, s.start, s.end) for s in result.error_spans] == [
            (e["text"], e["severity"], e["start"], e["end"]) for e in expected
        ]
        for span, theirs in zip(result.error_spans, expected, strict=True):
            assert span.confidence == pytest.approx(theirs["confidence"], abs=TOLERANCE)
        spans += len(expected)
    assert spans > 100
    partial_keys = {
        "src_scores": "src",
        "ref_scores": "ref",
        "unified_scores": "unified",
        "mqm_scores": "mqm",
    }
    for key, ours_key in partial_keys.items():
        if key in metadata:
            ours = [result.partial_scores[ours_key] for result in results]
            assert max(abs(a - b) for a, b in zip(ours, metadata[key], strict=True)) < TOLERANCE


def test_every_severity_occurs_in_the_xcomet_oracle():
    spans = ORACLE["models"]["xcomet"]["with_reference"]["metadata"]["error_spans"]
    assert {span["severity"] for item in spans for span in item} == {"minor", "major", "critical"}


@pytest.mark.parametrize("name", ["regression-xlmr", "xcomet"])
def test_score_one_from_16_threads_equals_unbabel_comet(name):
    engine = _engine(name)
    expected = ORACLE["models"][name]["with_reference"]["scores"]
    with ThreadPoolExecutor(16) as pool:
        results = list(pool.map(engine.score_one, SOURCES, TRANSLATIONS, REFERENCES))
    assert max(abs(r.score - e) for r, e in zip(results, expected, strict=True)) < TOLERANCE
