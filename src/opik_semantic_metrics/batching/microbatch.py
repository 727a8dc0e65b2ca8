"""Coalesce concurrent per-item calls into batched calls.

Opik scores each dataset item with a separate ``metric.score()`` call, from up to 16
worker threads. A model scores 16 items in one forward pass far faster than in 16, so
:class:`MicroBatcher` gathers the items that arrive together and hands them to one
``process(items)`` call:

- a caller queues its item and waits for its own result;
- a worker thread of the batcher (one by default, started when needed) takes up to
  ``max_batch_size`` queued items, runs ``process`` on them and hands every caller its
  own result; items that arrive meanwhile form the next batch, so batch sizes follow
  the load by themselves;
- the worker waits up to ``max_wait_s`` for more items only when it has seen company
  (the previous batch held several items, or several are already queued);
- a lone caller (no batch running, none queued, and no company in the last batch: one
  thread scoring item after item) runs ``process([item])`` itself, in its own thread,
  and never waits;
- a worker ends after ``idle_s`` without items, and the next queued item starts a new one.

Items are taken in arrival order: a worker seldom finds more than a batch waiting, so
choosing among them by length gains little. Length bucketing happens one step later,
where the engines cut a batch's texts into forward passes of similar length
(``lengths.py``).

Why worker threads rather than letting a waiting caller run the batch: every forward
pass then starts from the same thread, so the CPU thread pool PyTorch's kernels run on
(OpenMP's, kept per calling thread) is one warm pool instead of one per Opik thread.
With ``workers=2`` and a ``worker_setup`` that makes each worker single-threaded, two
batches compute side by side, one a core (see ``cpu_parallel.py``).

Why a lone caller runs its own item: it is always the same thread, so its pool is warm
too, and it has every core to itself, where a worker may have been set up for one.
Figures for each choice are in ``docs/design/micro-batching.md``.

One item's failure fails only that item's caller: when ``process`` raises on a batch,
each item of the batch is run again on its own, and each caller gets its own result or
its own exception. A ``worker_setup`` that raises fails the items waiting for that
worker (each later item starts a worker again), instead of leaving their callers
waiting for ever.

A forked child (``multiprocessing`` with the fork start method) starts every batcher
afresh: it has none of the parent's workers or waiting callers, and its lock may have
been held by one of the parent's threads at the fork (the package's other locks, and
PyTorch's threads in a child: ``forking.py``).

Workers are daemon threads, so that an idle one never holds up Python's exit. One that
is still computing when the interpreter finalises takes the process down with it
(PyTorch's C++ aborts: "terminate called without an active exception"), as after a
Ctrl-C that stops a caller waiting for its item. At exit, every batcher therefore drops
the items still queued and waits, up to ``EXIT_WAIT_S``, for the batches running to end.
A main thread waiting for its item wakes every ``INTERRUPT_CHECK_S``, so that a Ctrl-C
stops it at once even when the system handed the signal to a worker's thread.
"""

from __future__ import annotations

import atexit
import os
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

#: Longest time Python's exit waits for the batches still running (a forward pass of the
#: largest batches on a CPU takes seconds; a second Ctrl-C ends the wait).
EXIT_WAIT_S = 60.0

ItemT = TypeVar("ItemT")
ResultT = TypeVar("ResultT")


class _Request(Generic[ItemT, ResultT]):
    """One caller's item, and its result or exception once the batch has run."""

    __slots__ = ("answered", "error", "finished", "item", "result")

    def __init__(self, item: ItemT) -> None:
        self.item = item
        self.finished = threading.Event()
        self.result: ResultT | None = None
        self.error: BaseException | None = None
        self.answered = False  # a result or an error was given

    def answer(self, result: ResultT | None = None, error: BaseException | None = None) -> None:
        self.result, self.error, self.answered = result, error, True


class MicroBatcher(Generic[ItemT, ResultT]):
    """Run ``process`` on batches of items submitted concurrently from many threads.

    Args:
        process: Takes a list of items, returns one result per item, in order. It runs
            in a worker thread of the batcher, or in a lone caller's own thread.
        max_batch_size: Most items in one ``process`` call.
        max_wait_s: Longest time the worker waits for more items before running a batch.
        idle_s: A worker thread ends after this long without items.
        workers: Most worker threads running batches at the same time.
        worker_setup: Called first in every worker thread (not in a lone caller's).

    Example:
        >>> batcher = MicroBatcher(lambda items: [item * 2 for item in items])
        >>> batcher.submit(21)
        42
    """

    def __init__(
        self,
        process: Callable[[list[ItemT]], Sequence[ResultT]],
        *,
        max_batch_size: int = 64,
        max_wait_s: float = 0.005,
        idle_s: float = 10.0,
        workers: int = 1,
        worker_setup: Callable[[], object] | None = None,
    ) -> None:
        if max_batch_size < 1:
            raise ValueError(f"Expected `max_batch_size` >= 1, got {max_batch_size}.")
        if max_wait_s < 0:
            raise ValueError(f"Expected `max_wait_s` >= 0, got {max_wait_s}.")
        if idle_s <= 0:
            raise ValueError(f"Expected `idle_s` > 0, got {idle_s}.")
        if workers < 1:
            raise ValueError(f"Expected `workers` >= 1, got {workers}.")
        self.process = process
        self.max_batch_size = max_batch_size
        self.max_wait_s = max_wait_s
        self.idle_s = idle_s
        self.workers = workers
        self.worker_setup = worker_setup
        self._start_afresh()
        #: Batches run and items scored so far (their ratio is the mean batch size).
        self.batches_run = 0
        self.items_run = 0
        _BATCHERS.add(self)

    def _start_afresh(self) -> None:
        """No workers, nothing queued or running: as built, and in a forked child."""
        self._condition = threading.Condition()
        self._queue: list[_Request[ItemT, ResultT]] = []
        self._workers: list[threading.Thread] = []
        self._running = 0  # batches being run, by workers or by a lone caller
        self._last_batch_size = 0

    def submit(self, item: ItemT) -> ResultT:
        """Score one item, batched with the items other threads submit meanwhile.

        Returns:
            ``process([..., item, ...])``'s result for ``item``.

        Raises:
            Whatever ``process`` raised for ``item`` when run on its own.
        """
        request: _Request[ItemT, ResultT] = _Request(item)
        with self._condition:
            alone = not self._queue and self._running == 0 and self._last_batch_size <= 1
            if alone:
                self._take([request])
            else:
                self._queue.append(request)
                if len(self._workers) < self.workers:
                    worker = threading.Thread(
                        target=self._work, name="opik-semantic-metrics-batcher", daemon=True
                    )
                    self._workers.append(worker)
                    try:
                        worker.start()
                    except RuntimeError:
                        # No thread can start once Python shuts down (an atexit handler
                        # scoring, Python 3.12+): with no worker left, the caller runs it.
                        self._workers.remove(worker)
                        if not self._workers:
                            self._queue.remove(request)
                            self._take([request])
                            alone = True
                        else:  # one still running takes it, if woken now, not when idle
                            self._condition.notify_all()
                elif len(self._queue) == 1 or len(self._queue) >= self.max_batch_size:
                    # Workers wait for a first item, or for a full batch.
                    self._condition.notify_all()
        if alone:
            self._run_and_release([request])
        else:
            _wait_for_answer(request)
        if request.error is not None:
            raise request.error
        return request.result  # type: ignore[return-value]

    def _work(self) -> None:
        """A worker thread: take batches off the queue and run them until idle."""
        if self.worker_setup is not None:
            try:
                self.worker_setup()
            except BaseException as error:
                self._retire_failed_worker(error)
                if not isinstance(error, Exception):
                    raise
                return
        while True:
            batch = self._next_batch()
            if batch is None:
                return
            try:
                self._run_and_release(batch)
            except BaseException as error:
                # The worker is being torn down (SystemExit, KeyboardInterrupt...): the
                # other workers, or none left, answer the items queued meanwhile.
                self._retire_failed_worker(error)
                raise

    def _retire_failed_worker(self, error: BaseException) -> None:
        """Remove a worker whose setup or batch raised; if no worker is left to run the queue,
        fail every queued item with ``error`` rather than leave its caller waiting."""
        with self._condition:
            self._workers.remove(threading.current_thread())
            if self._workers:
                self._condition.notify_all()  # the others run the queue
                return
            stranded, self._queue = self._queue, []
        for request in stranded:
            request.answer(error=error)
            request.finished.set()

    def _next_batch(self) -> list[_Request[ItemT, ResultT]] | None:
        """Wait for items, and for company up to the bound; ``None`` once idle too long."""
        with self._condition:
            idle_until = time.monotonic() + self.idle_s
            while True:
                while not self._queue:
                    remaining = idle_until - time.monotonic()
                    if remaining <= 0:
                        self._workers.remove(threading.current_thread())
                        return None
                    self._condition.wait(remaining)
                if self._last_batch_size > 1 or len(self._queue) > 1:
                    deadline = time.monotonic() + self.max_wait_s
                    while len(self._queue) < self.max_batch_size:
                        remaining = deadline - time.monotonic()
                        if remaining <= 0:
                            break
                        self._condition.wait(remaining)
                if self._queue:  # else another worker took them while this one waited
                    break
            batch = self._queue[: self.max_batch_size]
            del self._queue[: self.max_batch_size]
            self._take(batch)
            return batch

    def _take(self, batch: list[_Request[ItemT, ResultT]]) -> None:
        """Count a batch as running (called with the condition held)."""
        self._running += 1
        self._last_batch_size = len(batch)
        self.batches_run += 1
        self.items_run += len(batch)

    def _run_and_release(self, batch: list[_Request[ItemT, ResultT]]) -> None:
        """Run a taken batch, then wake its callers and count it as done."""
        try:
            self._run(batch)
        except BaseException as error:
            # Not an item's fault (the thread is being torn down): every caller of the
            # batch not yet answered hears of it, even mid-way through the one-by-one rerun.
            for request in batch:
                if not request.answered:
                    request.answer(error=error)
            raise
        finally:
            for request in batch:
                request.finished.set()
            with self._condition:
                self._running -= 1

    def _run(self, batch: list[_Request[ItemT, ResultT]]) -> None:
        """Run ``process`` on the batch and fill in every request."""
        try:
            results = list(self.process([request.item for request in batch]))
            if len(results) != len(batch):
                raise RuntimeError(
                    f"process returned {len(results)} results for {len(batch)} items."
                )
        except Exception as error:
            if len(batch) == 1:
                batch[0].answer(error=error)
            else:
                for request in batch:
                    self._run([request])
            return
        for request, result in zip(batch, results, strict=True):
            request.answer(result)


#: How often the main thread, waiting for its item, wakes to let a Ctrl-C stop it.
INTERRUPT_CHECK_S = 0.1


def _wait_for_answer(request: _Request[Any, Any]) -> None:
    """Wait until ``request`` is answered; in the main thread, a Ctrl-C stops the wait at
    once.

    Linux may hand a Ctrl-C to any thread of the process, often a worker's computing
    one; Python then only marks it, and a main thread asleep on a lock raises
    ``KeyboardInterrupt`` when it wakes: after the batch (12 tries in 51 on a 2-core
    machine). Waking every ``INTERRUPT_CHECK_S`` lets it raise at once.
    """
    if threading.current_thread() is threading.main_thread():
        while not request.finished.wait(INTERRUPT_CHECK_S):
            pass
    else:  # only the main thread is ever interrupted: others need not wake
        request.finished.wait()


#: Every batcher alive, for the fork and exit hooks below.
_BATCHERS: weakref.WeakSet[MicroBatcher[Any, Any]] = weakref.WeakSet()


def _start_every_batcher_afresh() -> None:
    for batcher in list(_BATCHERS):
        batcher._start_afresh()


def _let_running_batches_end() -> None:
    """At exit: the queued items are dropped, and the batches running end before Python
    finalises."""
    deadline = time.monotonic() + EXIT_WAIT_S
    for batcher in list(_BATCHERS):
        with batcher._condition:
            # Their callers are gone (Python joined its other threads first) or are
            # daemon threads about to stop: nobody waits for these items.
            batcher._queue.clear()
        while batcher._running and time.monotonic() < deadline:
            time.sleep(0.01)


atexit.register(_let_running_batches_end)


if hasattr(os, "register_at_fork"):  # not on Windows, which cannot fork
    os.register_at_fork(after_in_child=_start_every_batcher_afresh)
