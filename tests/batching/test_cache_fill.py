"""EmbeddingCache.fill: what an engine's prepare() keeps, within the cache's bound."""

from __future__ import annotations

import logging

import pytest
import torch

from opik_semantic_metrics.batching.cache import EmbeddingCache, entry_size


def _values(texts: list[str]) -> list[torch.Tensor]:
    return [torch.full((16,), float(len(text))) for text in texts]


def test_fill_computes_each_missing_text_once_in_chunks():
    cache = EmbeddingCache()
    calls: list[list[str]] = []

    def compute(texts: list[str]) -> list[torch.Tensor]:
        calls.append(texts)
        return _values(texts)

    cache.get_or_compute(("ns",), ["b"], compute)
    kept = cache.fill(("ns",), ["a", "b", "c", "a", "d", "e"], compute, chunk_size=2)
    assert kept == 5 and len(cache) == 5
    # "b" was cached already; chunks are of the distinct texts, in order.
    assert calls == [["b"], ["a"], ["c", "d"], ["e"]]
    assert cache.lookup(("ns",), ["e"])["e"].tolist() == [1.0] * 16


def test_fill_keeps_the_leading_texts_within_the_bound_and_says_so(caplog):
    size = entry_size("t000", torch.zeros(16))
    cache = EmbeddingCache(max_bytes=3 * size + size // 2)
    cache.get_or_compute(("other",), ["x"], _values)  # an older entry of another kind
    texts = [f"t{i:03d}" for i in range(10)]
    with caplog.at_level(logging.WARNING, logger="opik_semantic_metrics.batching.cache"):
        kept = cache.fill(("ns",), texts, _values, chunk_size=4)
    assert kept == 3
    # The entries of one fill never evict one another: the first three stay.
    assert sorted(cache.lookup(("ns",), texts)) == texts[:3]
    assert cache.bytes_used <= cache.max_bytes
    assert "holds 3 of 10 texts" in caplog.text


def test_texts_already_cached_count_against_the_bound_and_are_kept():
    size = entry_size("t000", torch.zeros(16))
    cache = EmbeddingCache(max_bytes=2 * size)
    cache.get_or_compute(("ns",), ["t001"], _values)
    assert cache.fill(("ns",), ["t001", "t002", "t003"], _values) == 2
    assert sorted(cache.lookup(("ns",), ["t001", "t002", "t003"])) == ["t001", "t002"]


def test_a_disabled_cache_keeps_nothing_and_computes_nothing():
    cache = EmbeddingCache(max_bytes=0)
    computed: list[str] = []
    kept = cache.fill(("ns",), ["a", "b"], lambda texts: computed.extend(texts) or _values(texts))
    assert kept == 0 and computed == [] and len(cache) == 0


def test_fill_refuses_a_chunk_size_below_one():
    with pytest.raises(ValueError, match="chunk_size"):
        EmbeddingCache().fill(("ns",), ["a"], _values, chunk_size=0)
