"""EmbeddingCache: exact keys, computes only misses, bounded in bytes, thread-safe."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
import torch

from opik_semantic_metrics.batching.cache import EmbeddingCache, entry_size, size_in_bytes

#: What the cache counts for an entry below: a one-letter text and four floats.
ENTRY = entry_size("a", torch.zeros(4))


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
    cache, encode = EmbeddingCache(max_bytes=3 * ENTRY), Encoder()
    cache.get_or_compute("ns", ["a", "b", "c"], encode)
    cache.get_or_compute("ns", ["a"], encode)  # "a" is now the most recent
    cache.get_or_compute("ns", ["d"], encode)  # evicts "b"
    assert cache.bytes_used == 3 * ENTRY and len(cache) == 3
    cache.get_or_compute("ns", ["a", "c", "d", "b"], encode)
    assert encode.calls[-1] == ["b"]


def test_storing_a_key_twice_counts_its_bytes_once_and_eviction_still_holds():
    # Two callers that miss the same text at once both compute and store it (compute runs
    # without the lock); here the second store happens inside the first's compute.
    cache, encode = EmbeddingCache(max_bytes=2 * ENTRY), Encoder()

    def compute_while_another_caller_stores(texts: list[str]) -> list[torch.Tensor]:
        cache.get_or_compute("ns", texts, encode)
        return encode(texts)

    cache.get_or_compute("ns", ["a"], compute_while_another_caller_stores)
    assert encode.calls == [["a"], ["a"]]  # stored twice
    assert (len(cache), cache.bytes_used) == (1, ENTRY)
    cache.get_or_compute("ns", ["b"], encode)
    assert (len(cache), cache.bytes_used) == (2, 2 * ENTRY)  # both fit: nothing evicted
    cache.get_or_compute("ns", ["c"], encode)  # evicts "a", the least recently used
    assert (len(cache), cache.bytes_used) == (2, 2 * ENTRY)
    assert list(cache.lookup("ns", ["a", "b", "c"])) == ["b", "c"]


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


def test_size_counts_tensors_inside_containers_and_more_than_their_data():
    four, two = torch.zeros(4), torch.zeros(2, dtype=torch.float64)
    assert size_in_bytes(four) > 16 and size_in_bytes(four) - size_in_bytes(two) == 0
    nested = size_in_bytes((four, [two]))
    assert nested > size_in_bytes(four) + size_in_bytes(two)  # the tuple and the list too
    # A token-id tuple grows with its ids, though they are not tensors.
    assert size_in_bytes((four, tuple(range(2000, 2100)))) > size_in_bytes((four, (2000,)))
    with pytest.raises(ValueError):
        EmbeddingCache(max_bytes=-1)


def test_an_entry_counts_its_text():
    value = torch.zeros(4)
    assert entry_size("a" * 1001, value) - entry_size("a", value) == 1000
    cache = EmbeddingCache()
    cache.get_or_compute("ns", ["a" * 1001], lambda texts: [value] * len(texts))
    assert cache.bytes_used == entry_size("a" * 1001, value)
