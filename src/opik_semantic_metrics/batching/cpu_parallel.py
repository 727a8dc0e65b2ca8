"""Run the forward passes of a long list side by side, one single-threaded pass per core.

PyTorch splits each operation of a forward pass across all CPU cores (OpenMP). For the
short texts metrics see, many operations are too small for that to pay, and every
operation ends with the cores waiting for each other, which costs most when another
process or thread takes a core for a moment. The batches of a long list are
independent, so :func:`map_batches` runs them side by side instead: one worker thread a
core, each running whole forward passes on one OpenMP thread. PyTorch releases the GIL
inside its kernels, so the workers compute at the same time.

Scores are identical either way (figures: ``docs/design/micro-batching.md``).
BERTScore, SemanticMatch and COMET batch whole lists through
:func:`map_longest_first`. Opik's micro-batches use the same set-up: the BERTScore
engine gives its :class:`~opik_semantic_metrics.batching.microbatch.MicroBatcher` two
workers that share the cores between them, so that two micro-batches compute side by
side.

Each worker lowers only its own OpenMP thread count (``omp_set_num_threads`` acts on the
calling thread), and MKL's where PyTorch is built with MKL (``MKL_Set_Num_Threads_Local``):
a caller's ``torch.set_num_threads`` fixes MKL's count for every thread, and a worker
that lowered OpenMP's alone would still run each matrix product on all the cores, every
worker at once. ``torch.set_num_threads`` is not used: it would also change the count
every thread created afterwards starts with, the caller's included. Where OpenMP's
function cannot be found (PyTorch builds without OpenMP, or whose OpenMP is not loaded
globally) batches run one after another, as they do on GPUs.
"""

from __future__ import annotations

import ctypes
import functools
import itertools
import os
import sys
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

import torch

from opik_semantic_metrics.batching.lengths import length_batches
from opik_semantic_metrics.forking import fork_safe_lock

BatchT = TypeVar("BatchT")
ItemT = TypeVar("ItemT")
ResultT = TypeVar("ResultT")

_pool_lock = fork_safe_lock()
_pool: ThreadPoolExecutor | None = None
_pool_key = (0, 0)  # (process id, size) the pool was made for
_in_worker = threading.local()
_SHARED_LIBRARY_SUFFIX = {"darwin": ".dylib", "win32": ".dll"}.get(sys.platform, ".so")


def _set_openmp_threads() -> Callable[[int], object] | None:
    """OpenMP's ``omp_set_num_threads`` as loaded by PyTorch, if it is visible."""
    try:
        return ctypes.CDLL(None).omp_set_num_threads
    except (AttributeError, OSError):
        return None


@functools.cache
def _set_mkl_local_threads() -> Callable[[int], object] | None:
    """MKL's per-thread ``MKL_Set_Num_Threads_Local`` in PyTorch's CPU library, if any."""
    library = Path(torch.__file__).parent / "lib" / f"libtorch_cpu{_SHARED_LIBRARY_SUFFIX}"
    try:
        return ctypes.CDLL(str(library)).MKL_Set_Num_Threads_Local
    except (AttributeError, OSError):
        return None


def use_threads(count: int) -> None:
    """Worker set-up: this thread's PyTorch kernels run on ``count`` cores, and its own
    calls to :func:`map_batches` run their batches themselves."""
    # PyTorch sets a new thread's OpenMP count on its first parallel call; make that
    # call first so that it does not undo the count set below.
    torch.get_num_threads()
    set_threads = _set_openmp_threads()
    if set_threads is not None:
        set_threads(count)
    set_mkl_threads = _set_mkl_local_threads()
    if set_mkl_threads is not None:
        set_mkl_threads(count)
    _in_worker.active = True


def side_by_side_workers(device: torch.device) -> int:
    """How many single-threaded workers should run batches side by side on ``device``.

    PyTorch's thread count on a CPU where each thread's OpenMP count can be set (and
    not from within such a worker); 1 elsewhere.
    """
    if device.type != "cpu" or getattr(_in_worker, "active", False):
        return 1
    return torch.get_num_threads() if _set_openmp_threads() is not None else 1


def _workers() -> ThreadPoolExecutor | None:
    """The process-wide pool, one worker per PyTorch CPU thread; None where not useful."""
    global _pool, _pool_key
    size = side_by_side_workers(torch.device("cpu"))
    if size < 2:
        return None
    key = (os.getpid(), size)
    with _pool_lock:
        if _pool is None or _pool_key != key:
            # A forked child inherits the pool without its threads: it makes its own.
            if _pool is not None and _pool_key[0] == key[0]:
                _pool.shutdown(wait=False)
            _pool = ThreadPoolExecutor(
                max_workers=size,
                thread_name_prefix="opik-semantic-metrics-cpu",
                initializer=use_threads,
                initargs=(1,),
            )
            _pool_key = key
        return _pool


def map_batches(
    function: Callable[[BatchT], ResultT], batches: Sequence[BatchT], device: torch.device
) -> list[ResultT]:
    """``function(batch)`` for every batch, in order.

    On the CPU, with several batches and several PyTorch threads, the batches run side by
    side on single-threaded workers (taken in order, so put the longest first); elsewhere
    one after another in the calling thread. ``function`` must be safe to call from two
    threads at once (a forward pass in inference mode is).

    Example:
        >>> map_batches(sum, [[1, 2], [3, 4], [5]], torch.device("cpu"))
        [3, 7, 5]
    """
    workers = _workers() if device.type == "cpu" and len(batches) > 1 else None
    if workers is not None:
        try:
            futures = [workers.submit(function, batch) for batch in batches]
        except RuntimeError:
            # Python is shutting down (the main thread has ended while others still
            # score, or an atexit handler scores): the pool takes no more work.
            pass
        else:
            try:
                return [future.result() for future in futures]
            except BaseException:
                # A failed batch or Ctrl-C ends the call: the batches still queued would
                # only hold the shared workers (and the next call, and Python's exit).
                for future in futures:
                    future.cancel()
                raise
    return [function(batch) for batch in batches]


def map_longest_first(
    function: Callable[[list[ItemT]], Sequence[ResultT]],
    items: Sequence[ItemT],
    *,
    batch_size: int,
    length: Callable[[ItemT], int],
    device: torch.device,
    token_budget: int | None = None,
) -> list[ResultT]:
    """One result per item, in the items' order, from ``function`` run on batches.

    Items are batched by length, longest first, so that each batch pads little, and
    within ``batch_size`` items and ``token_budget`` padded tokens
    (:func:`~opik_semantic_metrics.batching.lengths.length_batches`); the batches go
    through :func:`map_batches`; ``function`` returns one result per item of its batch.

    Example:
        >>> map_longest_first(
        ...     lambda batch: [text.upper() for text in batch], ["a", "ccc", "bb"],
        ...     batch_size=2, length=len, device=torch.device("cpu"),
        ... )
        ['A', 'CCC', 'BB']
    """
    index_batches = length_batches([length(item) for item in items], batch_size, token_budget)
    batches = [[items[i] for i in indices] for indices in index_batches]
    results: list[ResultT | None] = [None] * len(items)
    for index, result in zip(
        itertools.chain.from_iterable(index_batches),
        itertools.chain.from_iterable(map_batches(function, batches, device)),
        strict=True,
    ):
        results[index] = result
    return results  # type: ignore[return-value]
