"""What a child forked from a scoring process must not inherit.

``os.fork`` (``multiprocessing``'s default start method on Linux before Python 3.14)
copies the parent's memory but only the thread that forked. A lock another thread of
the parent held at that moment (a batcher worker inside the tokenizer, a model being
loaded) stays locked in the child for ever, with no thread left to release it: the
child's first ``score()`` then waits without end. And PyTorch's CPU kernels run on GNU
OpenMP, whose thread pool does not survive a fork: a child whose parent ran a forward
pass on several threads (every metric runs one when it is built) hangs in its first
parallel kernel.

So every lock of this package is made by :func:`fork_safe_lock`, and a forked child
starts with all of them unlocked, and with PyTorch on one thread, as PyTorch's own
``DataLoader`` sets its worker processes. Running several child processes side by side,
one thread each is what their cores allow anyway; the spawn and forkserver start
methods start a fresh interpreter and need none of this. The batchers reset their own
queues and workers (``batching/microbatch.py``).
"""

from __future__ import annotations

import os
import threading
import weakref
from typing import Any

import torch

#: Every lock made by :func:`fork_safe_lock` and still in use.
_LOCKS: weakref.WeakSet[Any] = weakref.WeakSet()


def fork_safe_lock() -> threading.Lock:
    """A ``threading.Lock`` that a forked child gets unlocked, whoever held it.

    Example:
        >>> lock = fork_safe_lock()
        >>> with lock:
        ...     lock.locked()
        True
    """
    lock = threading.Lock()
    _LOCKS.add(lock)
    return lock


def _after_fork_in_child() -> None:
    # The fork may have come while a parent's thread was mid-way under a lock: a model it
    # was loading is loaded again when asked for, and at worst a cache counts the entry
    # it was storing among its bytes.
    for lock in list(_LOCKS):
        lock._at_fork_reinit()  # what CPython's threading and logging do to their own locks
    torch.set_num_threads(1)


if hasattr(os, "register_at_fork"):  # not on Windows, which cannot fork
    os.register_at_fork(after_in_child=_after_fork_in_child)
