"""The encoder engines' skeleton: one loading policy, one cache path, one batcher.

Each of the three engines is built on :class:`EncoderEngine`; these tests hold every one of
them to the skeleton's contract with a real (tiny or packaged) model, so that an engine
written apart from it fails here by itself.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from opik_semantic_metrics import ModelUnavailableError
from opik_semantic_metrics.batching.cache import EmbeddingCache
from opik_semantic_metrics.batching.engine import EncoderEngine
from opik_semantic_metrics.bertscore.engine import BERTScoreEngine
from opik_semantic_metrics.comet.engine import CometEngine
from opik_semantic_metrics.semantic.engine import SemanticMatchEngine

COMET_FIXTURES = Path(__file__).parents[1] / "fixtures" / "comet"


def _encoder_with_cut_weights(minilm_path: Path, destination: Path) -> tuple[Path, Path]:
    """A copy of the packaged MiniLM whose weights file is cut short, as by an interrupted
    download: its configuration and tokenizer read, its weights do not."""
    copy = Path(shutil.copytree(minilm_path, destination))
    weights = copy / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[: weights.stat().st_size // 2])
    return copy, weights


def _comet_with_cut_weights(destination: Path) -> tuple[Path, Path]:
    shutil.copytree(COMET_FIXTURES / "encoders", destination / "encoders")
    model = Path(shutil.copytree(COMET_FIXTURES / "regression-xlmr", destination / "comet"))
    weights = model / "checkpoints" / "model.ckpt"
    weights.write_bytes(weights.read_bytes()[: weights.stat().st_size // 2])
    return model, weights


BUILDERS: dict[str, Callable[[Path, Path], tuple[Path, Path, Callable[[str], object]]]] = {
    "bertscore": lambda minilm, tmp: (
        *_encoder_with_cut_weights(minilm, tmp / "m"),
        lambda path: BERTScoreEngine(path, device="cpu"),
    ),
    "semantic-match": lambda minilm, tmp: (
        *_encoder_with_cut_weights(minilm, tmp / "m"),
        lambda path: SemanticMatchEngine(path, device="cpu"),
    ),
    "comet": lambda minilm, tmp: (
        *_comet_with_cut_weights(tmp),
        lambda path: CometEngine(path, device="cpu"),
    ),
}


@pytest.mark.parametrize("engine", sorted(BUILDERS))
def test_every_engine_loads_its_model_when_it_is_built(engine, minilm_path, tmp_path):
    # BERTScoreEngine loaded on first use: damaged weights built an engine whose every
    # score failed, where the other two engines refused to be built.
    model, weights, build = BUILDERS[engine](minilm_path, tmp_path)
    with pytest.raises(ModelUnavailableError) as raised:
        build(str(model))
    assert str(weights) in str(raised.value) or str(model) in str(raised.value)


@pytest.mark.parametrize(
    "build",
    [
        lambda cache: BERTScoreEngine("all-MiniLM-L6-v2", device="cpu", cache=cache),
        lambda cache: SemanticMatchEngine("all-MiniLM-L6-v2", device="cpu", cache=cache),
        lambda cache: CometEngine(
            str(COMET_FIXTURES / "regression-xlmr"), device="cpu", cache=cache
        ),
    ],
    ids=["bertscore", "semantic-match", "comet"],
)
def test_every_engine_keeps_its_texts_in_the_cache_it_is_given(build):
    cache = EmbeddingCache()
    engine = build(cache)
    assert isinstance(engine, EncoderEngine)
    assert engine.cache is cache
    texts = ["A cat sat on the mat.", "The train leaves at noon.", "A cat sat on the mat."]
    kept = engine._fill_cache(texts)
    # Two distinct texts, each computed once, found again under the engine's namespace.
    assert (kept, cache.misses) == (2, 2)
    assert set(engine._cache_lookup(texts)) == {texts[0], texts[1]}
    engine._cached(texts)
    assert cache.misses == 2
