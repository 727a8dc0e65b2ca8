"""EmbeddingCache: exact keys, computes only misses, bounded in bytes, thread-safe."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
import torch

from opik_semantic_metrics.batching.cache import EmbeddingCache, size_in_bytes

FOUR_FLOATS = 4 * 4  # bytes of one cached value below


class Encoder:
    """Records what it was asked to compute; the value encodes the text's length."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def __call__(self, texts: list[str]) -> list[torch.Tensor]:
        self.calls.append(list(texts))
        return [torch.full((4,), float(len(text))) for text in texts]


def test_computes_only_distinct_misses_and_returns_in_order():
    cache, encode = EmbeddingCache(), Encoder()
    first = cache.get_or_compute("ns", ["a", "bb", "a", "ccc"], encode)
    second = cache.get_or_compute("ns", ["ccc", "dddd", "bb"], encode)
    assert [value[0].item() for value in first] == [1, 2, 1, 3]
    assert [value[0].item() for value in second] == [3, 4, 2]
    assert encode.calls == [["a", "bb", "ccc"], ["dddd"]]
    assert (cache.hits, cache.misses) == (2, 4)


def test_namespaces_and_near_identical_texts_never_collide():
    cache, encode = EmbeddingCache(), Encoder()
    cache.get_or_compute(("model-a", 6), ["text"], encode)
    cache.get_or_compute(("model-b", 6), ["text"], encode)
    cache.get_or_compute(("model-a", 6), ["text ", "Text"], encode)
    assert encode.calls == [["text"], ["text"], ["text ", "Text"]]


def test_least_recently_used_entries_go_first_when_over_the_bound():
    cache, encode = EmbeddingCache(max_bytes=3 * FOUR_FLOATS), Encoder()
    cache.get_or_compute("ns", ["a", "b", "c"], encode)
    cache.get_or_compute("ns", ["a"], encode)  # "a" is now the most recent
    cache.get_or_compute("ns", ["d"], encode)  # evicts "b"
    assert cache.bytes_used == 3 * FOUR_FLOATS and len(cache) == 3
    cache.get_or_compute("ns", ["a", "c", "d", "b"], encode)
    assert encode.calls[-1] == ["b"]


def test_resize_to_zero_turns_caching_off():
    cache, encode = EmbeddingCache(), Encoder()
    cache.get_or_compute("ns", ["a"], encode)
    cache.resize(0)
    assert len(cache) == 0
    cache.get_or_compute("ns", ["a"], encode)
    assert encode.calls == [["a"], ["a"]]


def test_concurrent_readers_get_correct_values():
    cache, encode = EmbeddingCache(), Encoder()
    texts = ["x" * n for n in range(1, 50)]
    with ThreadPoolExecutor(16) as pool:
        results = list(pool.map(lambda _: cache.get_or_compute("ns", texts, encode), range(64)))
    for values in results:
        assert [value[0].item() for value in values] == list(range(1, 50))


def test_size_counts_tensors_inside_containers():
    assert size_in_bytes((torch.zeros(4), [torch.zeros(2, dtype=torch.float64)])) == 16 + 16
    with pytest.raises(ValueError):
        EmbeddingCache(max_bytes=-1)
