"""Out of memory: halve the batch and retry, for every engine that runs batches.

A batch size that fits short texts can fail on a list of long ones, on a small GPU or
beside another process. Rather than fail the list (or, per item in Opik, every item of
the micro-batch), :class:`HalvingBatchSize` splits the batch that ran out of memory in
two, runs the halves, and, once they have run, keeps the halved size for later batches,
so that only the first batch pays the retry. A single text that does not fit still fails
(nothing smaller can be tried) and leaves the size as it was: one over-long text must not
cut every later batch to one text.

Every out-of-memory failure PyTorch raises counts: ``torch.OutOfMemoryError`` (CUDA and
the other accelerators), the ``RuntimeError`` of the CPU allocator when it cannot have a
block (``DefaultCPUAllocator: can't allocate memory``), which a batch of long texts can
hit in attention, whose memory grows with the square of the length, and a GPU's
out-of-memory error raised inside TorchScript (the compiled layer loop of
``models/unpadded.py``), which reaches Python as a plain ``RuntimeError`` holding the
message (``... failed in the TorchScript interpreter ... CUDA out of memory``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import TypeVar

import torch

from opik_semantic_metrics.forking import fork_safe_lock

logger = logging.getLogger(__name__)

ItemT = TypeVar("ItemT")
ResultT = TypeVar("ResultT")

#: What PyTorch's CPU allocator says when it cannot have a block (c10/core/impl/alloc_cpu.cpp).
CPU_ALLOCATOR_FAILURE = "can't allocate memory"
#: What an accelerator's allocator or runtime says ("CUDA out of memory. Tried to allocate",
#: "CUDA error: out of memory", "XPU out of memory", "MPS backend out of memory").
DEVICE_ALLOCATOR_FAILURE = "out of memory"


def is_out_of_memory(error: BaseException) -> bool:
    """Whether ``error`` is PyTorch running out of memory, on an accelerator or the CPU.

    Example:
        >>> is_out_of_memory(torch.OutOfMemoryError("CUDA out of memory."))
        True
        >>> is_out_of_memory(RuntimeError("The following operation failed in the TorchScript "
        ...     "interpreter. ... RuntimeError: CUDA out of memory. Tried to allocate 100.00 MiB."))
        True
        >>> is_out_of_memory(RuntimeError("shape mismatch"))
        False
    """
    if isinstance(error, torch.OutOfMemoryError):
        return True
    if not isinstance(error, RuntimeError):
        return False
    message = str(error)
    return CPU_ALLOCATOR_FAILURE in message or DEVICE_ALLOCATOR_FAILURE in message


class HalvingBatchSize:
    """A batch size that halves when a batch runs out of memory; thread-safe.

    Args:
        size: The batch size to start from.

    Example:
        >>> def forward(batch):
        ...     if len(batch) > 2:
        ...         raise torch.OutOfMemoryError("CUDA out of memory (simulated)")
        ...     return [item * 10 for item in batch]
        >>> batch_size = HalvingBatchSize(8)
        >>> batch_size.run(forward, [1, 2, 3, 4, 5])
        [10, 20, 30, 40, 50]
        >>> batch_size.size
        2
    """

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError(f"Expected a batch size of 1 or more, got {size}.")
        self._size = size
        self._lock = fork_safe_lock()

    @property
    def size(self) -> int:
        """The largest batch known to fit so far."""
        return self._size

    def run(
        self, forward: Callable[[list[ItemT]], list[ResultT]], batch: Sequence[ItemT]
    ) -> list[ResultT]:
        """``forward(batch)``, or, where that runs out of memory, ``forward`` on each half.

        A batch longer than the size known to fit (an earlier batch ran out of memory) is
        cut to that size first, so it does not run out of memory again. An empty batch is
        not run: ``forward`` may assume at least one item (a padded batch needs one).

        Raises:
            torch.OutOfMemoryError, RuntimeError: A batch of one text ran out of memory.
        """
        items = list(batch)
        if not items:
            return []
        size = self._size
        if len(items) > size:
            return [
                result
                for start in range(0, len(items), size)
                for result in self.run(forward, items[start : start + size])
            ]
        try:
            return forward(items)
        except (torch.OutOfMemoryError, RuntimeError) as error:
            if not is_out_of_memory(error) or len(items) == 1:
                raise
        half = (len(items) + 1) // 2
        logger.warning(
            "Out of memory on a batch of %d texts; retrying with batches of %d.", len(items), half
        )
        if torch.cuda.is_initialized():
            torch.cuda.empty_cache()
        results = self.run(forward, items[:half]) + self.run(forward, items[half:])
        # Kept only once the halves have run: a text that fits in no batch, not even alone,
        # fails its call but leaves the size that ordinary texts fit in as it was.
        with self._lock:
            self._size = min(self._size, half)
        return results
