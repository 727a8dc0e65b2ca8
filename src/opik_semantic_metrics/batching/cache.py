"""A bounded, thread-safe cache of per-text embeddings.

References and sources repeat: across the items of a dataset, across the metrics of one
experiment, and across experiments run on the same dataset. Their embeddings depend only
on the model, its settings and the text, so each is computed once and kept, keyed on the
exact ``(namespace, text)``: the namespace names everything the embedding depends on
(model location, layer, device, dtype, what is stored), the text is the text itself,
never a hash or a truncated form of it, so a hit is always a true hit.

The cache is bounded in bytes and forgets the least recently used entries first. An
entry counts what it holds in memory: its tensors' data, and the Python and PyTorch
objects around them, its text and the cache's own bookkeeping, which for a sentence
vector weigh as much as the data (``benchmarks/cache_memory.py`` measures the process's
memory against the bound).
"""

from __future__ import annotations

import logging
import sys
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from typing import Any, TypeVar

import torch

from opik_semantic_metrics.forking import fork_safe_lock

logger = logging.getLogger(__name__)

ValueT = TypeVar("ValueT")

_SCALARS = (int, float, str, bool)

#: Default bound of the process-wide cache.
DEFAULT_MAX_BYTES = 512 * 1024 * 1024

# Bytes held besides tensor data, measured with this package's cached values (CPython
# 3.11, PyTorch 2.13, x86-64): a tensor's Python object, TensorImpl and storage; a tuple
# or dataclass instance; one int of a token-id tuple (the int and its pointer); an
# entry's key tuple and LRU node. Its text counts as sys.getsizeof says.
_TENSOR_OVERHEAD = 512
_CONTAINER_OVERHEAD = 64
_SCALAR_SIZE = 36
_ENTRY_OVERHEAD = 200


def size_in_bytes(value: Any) -> int:
    """Bytes held by a tensor, or by a tuple, list or dataclass of tensors and scalars:
    tensor data plus the objects around it (an estimate, measured for CPython)."""
    if isinstance(value, torch.Tensor):
        return value.element_size() * value.nelement() + _TENSOR_OVERHEAD
    if isinstance(value, (tuple, list)):
        return _CONTAINER_OVERHEAD + sum(
            _SCALAR_SIZE if isinstance(part, _SCALARS) else size_in_bytes(part) for part in value
        )
    fields = getattr(value, "__dataclass_fields__", None)
    if fields is not None:
        return _CONTAINER_OVERHEAD + sum(size_in_bytes(getattr(value, name)) for name in fields)
    return 0


def entry_size(text: str, value: Any) -> int:
    """Bytes a cache entry holds: its value, its text and the cache's bookkeeping."""
    return size_in_bytes(value) + sys.getsizeof(text) + _ENTRY_OVERHEAD


class EmbeddingCache:
    """Least-recently-used cache of per-text values, bounded in bytes.

    Args:
        max_bytes: Largest total size of the entries (see :func:`entry_size`); 0
            disables caching.

    Example:
        >>> cache = EmbeddingCache()
        >>> compute = lambda texts: [torch.tensor([float(len(text))]) for text in texts]
        >>> [t.item() for t in cache.get_or_compute(("demo",), ["ab", "abc", "ab"], compute)]
        [2.0, 3.0, 2.0]
        >>> [t.item() for t in cache.get_or_compute(("demo",), ["abc", "abcd"], compute)]
        [3.0, 4.0]
        >>> cache.hits, cache.misses
        (1, 3)
    """

    def __init__(self, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        if max_bytes < 0:
            raise ValueError(f"Expected `max_bytes` >= 0, got {max_bytes}.")
        self.max_bytes = max_bytes
        self._entries: OrderedDict[tuple[Hashable, str], tuple[Any, int]] = OrderedDict()
        self._bytes = 0
        self._lock = fork_safe_lock()
        #: Distinct texts served from the cache, and distinct texts computed, per call.
        self.hits = 0
        self.misses = 0

    @property
    def bytes_used(self) -> int:
        """Total size of the entries (see :func:`entry_size`)."""
        return self._bytes

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        """Forget every entry (the hit and miss counts stay)."""
        with self._lock:
            self._entries.clear()
            self._bytes = 0

    def get_or_compute(
        self,
        namespace: Hashable,
        texts: Sequence[str],
        compute: Callable[[list[str]], Sequence[ValueT]],
    ) -> list[ValueT]:
        """The values of ``texts``, computing only the distinct texts not cached.

        Args:
            namespace: Everything the values depend on besides the text.
            texts: The texts, repeats allowed.
            compute: Takes a list of distinct texts, returns one value per text, in order.
                Called once at most, without the lock held.

        Returns:
            One value per text of ``texts``, in order.
        """
        found: dict[str, ValueT] = self.lookup(namespace, texts)
        missing = [text for text in dict.fromkeys(texts) if text not in found]
        if missing:
            values = list(compute(missing))
            if len(values) != len(missing):
                raise RuntimeError(f"compute returned {len(values)} values for {len(missing)}.")
            found.update(zip(missing, values, strict=True))
            self._store(namespace, missing, values)
        return [found[text] for text in texts]

    def lookup(self, namespace: Hashable, texts: Sequence[str]) -> dict[str, Any]:
        """The cached values of those of ``texts`` that are cached; stores nothing.

        For texts worth reusing when someone else cached them but not worth keeping
        (outputs equal to a reference, say).

        Example:
            >>> cache = EmbeddingCache()
            >>> _ = cache.get_or_compute(("demo",), ["ab"], lambda t: [torch.zeros(1)] * len(t))
            >>> list(cache.lookup(("demo",), ["ab", "cd"])), len(cache)
            (['ab'], 1)
        """
        found: dict[str, Any] = {}
        with self._lock:
            for text in dict.fromkeys(texts):
                entry = self._entries.get((namespace, text))
                if entry is not None:
                    self._entries.move_to_end((namespace, text))
                    found[text] = entry[0]
            self.hits += len(found)
        return found

    def _store(self, namespace: Hashable, texts: list[str], values: list[Any]) -> None:
        with self._lock:
            self.misses += len(texts)
            for text, value in zip(texts, values, strict=True):
                size = entry_size(text, value)
                if size > self.max_bytes:
                    continue
                previous = self._entries.pop((namespace, text), None)
                if previous is not None:
                    self._bytes -= previous[1]
                self._entries[(namespace, text)] = (value, size)
                self._bytes += size
            self._evict()

    def fill(
        self,
        namespace: Hashable,
        texts: Sequence[str],
        compute: Callable[[list[str]], Sequence[Any]],
        *,
        chunk_size: int = 2048,
    ) -> int:
        """Compute and keep the values of the distinct ``texts`` not cached, in order, in
        chunks of ``chunk_size``; stop where this call's entries would pass the bound.

        For filling the cache before a run (an engine's ``prepare``): the entries this
        call keeps never evict one another, so the texts kept are the leading ones of
        ``texts``. Texts already cached count against the bound too, and become the most
        recently used.

        Args:
            namespace: Everything the values depend on besides the text.
            texts: The texts, repeats allowed.
            compute: Takes a list of distinct texts, returns one value per text, in order;
                called once per chunk, without the lock held.
            chunk_size: Most texts computed in one call of ``compute``.

        Returns:
            How many of the distinct ``texts`` are cached when it returns.

        Example:
            >>> cache = EmbeddingCache(max_bytes=2_000)
            >>> compute = lambda texts: [torch.zeros(64) for _ in texts]  # ~1 kB an entry
            >>> cache.fill(("demo",), ["a", "b", "c", "a"], compute), len(cache)
            (1, 1)
        """
        if chunk_size < 1:
            raise ValueError(f"Expected `chunk_size` >= 1, got {chunk_size}.")
        distinct = list(dict.fromkeys(texts))
        budget = self.max_bytes
        kept = 0
        for start in range(0, len(distinct), chunk_size):
            chunk = distinct[start : start + chunk_size]
            with self._lock:
                for text in chunk:
                    entry = self._entries.get((namespace, text))
                    if entry is not None:
                        self._entries.move_to_end((namespace, text))
                        budget -= entry[1]
                        kept += 1
                missing = [text for text in chunk if (namespace, text) not in self._entries]
            if budget <= 0:
                break
            if missing:
                values = list(compute(missing))
                if len(values) != len(missing):
                    raise RuntimeError(f"compute returned {len(values)} values for {len(missing)}.")
                fitting_texts, fitting_values = [], []
                for text, value in zip(missing, values, strict=True):
                    size = entry_size(text, value)
                    if size > budget:
                        budget = 0
                        break
                    budget -= size
                    fitting_texts.append(text)
                    fitting_values.append(value)
                self._store(namespace, fitting_texts, fitting_values)
                kept += len(fitting_texts)
            if budget <= 0:
                break
        if kept < len(distinct):
            logger.warning(
                "The embedding cache holds %d of %d texts given to prepare: its bound "
                "(%.0f MiB) is full. The rest are encoded when scored; raise the bound "
                "with `shared_cache().resize(max_bytes)` to keep them all.",
                kept,
                len(distinct),
                self.max_bytes / 2**20,
            )
        return kept

    def resize(self, max_bytes: int) -> None:
        """Change the bound (0 turns caching off), forgetting entries beyond it."""
        if max_bytes < 0:
            raise ValueError(f"Expected `max_bytes` >= 0, got {max_bytes}.")
        with self._lock:
            self.max_bytes = max_bytes
            self._evict()

    def _evict(self) -> None:
        """Forget least recently used entries until within the bound (lock held)."""
        while self._bytes > self.max_bytes:
            _key, (_value, size) = self._entries.popitem(last=False)
            self._bytes -= size


_shared: EmbeddingCache | None = None
_shared_lock = fork_safe_lock()


def shared_cache() -> EmbeddingCache:
    """The process-wide cache every engine uses (created on first use)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = EmbeddingCache()
        return _shared
