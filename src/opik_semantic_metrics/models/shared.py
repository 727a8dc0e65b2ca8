"""Values made once per key and shared by every thread: the process's loaded models.

Opik scores items from many threads, and several metrics may name one model: whoever
asks first loads it, whoever asks meanwhile waits for that load instead of starting a
second copy, and a load of another model does not wait for this one.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from opik_semantic_metrics.forking import fork_safe_lock

KeyT = TypeVar("KeyT", bound=Hashable)
ValueT = TypeVar("ValueT")


class LoadOnce(Generic[KeyT, ValueT]):
    """A registry that makes each key's value once, on first request; thread-safe.

    Example:
        >>> loads = []
        >>> models = LoadOnce()
        >>> models.get("minilm", lambda: loads.append("minilm") or "MiniLM weights")
        'MiniLM weights'
        >>> models.get("minilm", lambda: loads.append("minilm") or "a second copy")
        'MiniLM weights'
        >>> loads
        ['minilm']
    """

    def __init__(self) -> None:
        self._values: dict[KeyT, ValueT] = {}
        self._key_locks: dict[KeyT, threading.Lock] = {}
        self._lock = fork_safe_lock()

    def get(self, key: KeyT, make: Callable[[], ValueT]) -> ValueT:
        """The value of ``key``, made by ``make()`` if no call made it before.

        A ``make`` that raises stores nothing: the next call for the key tries again.
        """
        with self._lock:
            if key in self._values:
                return self._values[key]
            key_lock = self._key_locks.setdefault(key, fork_safe_lock())
        with key_lock:
            if key not in self._values:
                value = make()
                with self._lock:
                    self._values[key] = value
            return self._values[key]
