"""Coalesce concurrent per-item calls into batched calls.

Opik scores each dataset item with a separate ``metric.score()`` call, from up to 16
worker threads. A model scores 16 items in one forward pass far faster than in 16, so
:class:`MicroBatcher` gathers the items that arrive together and hands them to one
``process(items)`` call. No background thread is involved:

- a caller appends its item to the queue; the caller at the head of the queue, once no
  batch is running, becomes the *leader*: it takes up to ``max_batch_size`` items, runs
  ``process`` on them outside the lock, and hands every caller its own result;
- items that arrive while a batch runs queue up and form the next batch, so batch
  sizes follow the load by themselves;
- the leader waits up to ``max_wait_s`` for more items only when it has seen company
  (the previous batch held several items, or others are already queued): a lone,
  single-threaded caller never waits.

One item's failure fails only that item's caller: when ``process`` raises on a batch,
each item of the batch is run again on its own, and each caller gets its own result or
its own exception.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

ItemT = TypeVar("ItemT")
ResultT = TypeVar("ResultT")


class _Request(Generic[ItemT, ResultT]):
    """One caller's item, and its result or exception once the batch has run."""

    __slots__ = ("done", "error", "item", "result")

    def __init__(self, item: ItemT) -> None:
        self.item = item
        self.done = False
        self.result: ResultT | None = None
        self.error: BaseException | None = None


class MicroBatcher(Generic[ItemT, ResultT]):
    """Run ``process`` on batches of items submitted concurrently from many threads.

    Args:
        process: Takes a list of items, returns one result per item, in order.
        max_batch_size: Most items in one ``process`` call.
        max_wait_s: Longest time a leader waits for more items before running a batch.

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
    ) -> None:
        if max_batch_size < 1:
            raise ValueError(f"Expected `max_batch_size` >= 1, got {max_batch_size}.")
        if max_wait_s < 0:
            raise ValueError(f"Expected `max_wait_s` >= 0, got {max_wait_s}.")
        self.process = process
        self.max_batch_size = max_batch_size
        self.max_wait_s = max_wait_s
        self._condition = threading.Condition()
        self._queue: list[_Request[ItemT, ResultT]] = []
        self._running = False
        self._last_batch_size = 0
        #: Batches run and items scored so far (their ratio is the mean batch size).
        self.batches_run = 0
        self.items_run = 0

    def submit(self, item: ItemT) -> ResultT:
        """Score one item, batched with the items other threads submit meanwhile.

        Returns:
            ``process([..., item, ...])``'s result for ``item``.

        Raises:
            Whatever ``process`` raised for ``item`` when run on its own.
        """
        request: _Request[ItemT, ResultT] = _Request(item)
        with self._condition:
            self._queue.append(request)
            if len(self._queue) >= self.max_batch_size:
                self._condition.notify_all()
            while not request.done:
                if not self._running and self._queue[0] is request:
                    batch = self._lead()
                    break
                self._condition.wait()
            else:
                return self._outcome(request)
        try:
            self._run(batch)
        finally:
            with self._condition:
                self._running = False
                self._condition.notify_all()
        return self._outcome(request)

    def _lead(self) -> list[_Request[ItemT, ResultT]]:
        """Wait (lock held) for company up to the bound, then take a batch off the queue."""
        self._running = True
        if self._last_batch_size > 1 or len(self._queue) > 1:
            deadline = time.monotonic() + self.max_wait_s
            while len(self._queue) < self.max_batch_size:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                self._condition.wait(remaining)
        batch = self._queue[: self.max_batch_size]
        del self._queue[: self.max_batch_size]
        self._last_batch_size = len(batch)
        self.batches_run += 1
        self.items_run += len(batch)
        return batch

    def _run(self, batch: list[_Request[ItemT, ResultT]]) -> None:
        """Run ``process`` on the batch (no lock held) and fill in every request."""
        try:
            results = list(self.process([request.item for request in batch]))
            if len(results) != len(batch):
                raise RuntimeError(
                    f"process returned {len(results)} results for {len(batch)} items."
                )
        except Exception as error:
            if len(batch) == 1:
                batch[0].error = error
                batch[0].done = True
            else:
                for request in batch:
                    self._run([request])
            return
        for request, result in zip(batch, results, strict=True):
            request.result = result
            request.done = True

    @staticmethod
    def _outcome(request: _Request[ItemT, ResultT]) -> ResultT:
        if request.error is not None:
            raise request.error
        return request.result  # type: ignore[return-value]
