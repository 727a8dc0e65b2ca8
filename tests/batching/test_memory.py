"""Out of memory halves the batch: with the CPU allocator's real failure, not a stand-in."""

from __future__ import annotations

import pytest
import torch

from opik_semantic_metrics.batching.memory import HalvingBatchSize, is_out_of_memory
from tests.out_of_memory import TOO_MUCH


def _forward_fitting(limit: int, calls: list[int]):
    """A forward pass that really runs out of CPU memory on batches over ``limit``."""

    def forward(batch: list[int]) -> list[int]:
        calls.append(len(batch))
        if len(batch) > limit:
            torch.empty(TOO_MUCH, dtype=torch.uint8)
        return [item * 10 for item in batch]

    return forward


def test_the_cpu_allocators_failure_counts_as_out_of_memory():
    with pytest.raises(RuntimeError) as caught:
        torch.empty(TOO_MUCH, dtype=torch.uint8)
    assert is_out_of_memory(caught.value)
    assert is_out_of_memory(torch.OutOfMemoryError("CUDA out of memory."))
    assert not is_out_of_memory(RuntimeError("mat1 and mat2 shapes cannot be multiplied"))


#: A GPU's out-of-memory error as it reaches Python from inside TorchScript (the compiled
#: layer loop), abridged from what an H100 raised in ``tests/test_cuda.py``: a plain
#: RuntimeError, not ``torch.OutOfMemoryError``, and no CPU allocator's words in it.
TORCHSCRIPT_CUDA_FAILURE = (
    "The following operation failed in the TorchScript interpreter.\n"
    "Traceback of TorchScript (most recent call last):\n"
    '  File "unpadded.py", line 304, in _run_layers\n'
    "RuntimeError: CUDA out of memory. Tried to allocate 100.00 MiB. GPU 0 has a total "
    "capacity of 79.18 GiB of which 77.96 GiB is free. 493.88 MiB allowed"
)


def test_a_gpu_failure_inside_torchscript_counts_and_halves_the_batch():
    assert is_out_of_memory(RuntimeError(TORCHSCRIPT_CUDA_FAILURE))
    assert is_out_of_memory(RuntimeError("CUDA error: out of memory"))
    calls: list[int] = []

    def forward(batch: list[int]) -> list[int]:
        calls.append(len(batch))
        if len(batch) > 2:
            raise RuntimeError(TORCHSCRIPT_CUDA_FAILURE)
        return [item * 10 for item in batch]

    batch_size = HalvingBatchSize(4)
    assert batch_size.run(forward, [1, 2, 3, 4]) == [10, 20, 30, 40]
    assert calls == [4, 2, 2]
    assert batch_size.size == 2


def test_a_batch_that_runs_out_of_memory_is_halved_and_the_size_kept():
    calls: list[int] = []
    batch_size = HalvingBatchSize(8)
    forward = _forward_fitting(2, calls)
    assert batch_size.run(forward, [1, 2, 3, 4, 5]) == [10, 20, 30, 40, 50]
    # 5 fails, its halves 3 and 2: 3 fails again, then 2, 1 and 2 fit.
    assert calls == [5, 3, 2, 1, 2]
    assert batch_size.size == 2
    # A later batch is cut to the size that fits before it runs: no failure again.
    calls.clear()
    assert batch_size.run(forward, list(range(6))) == [0, 10, 20, 30, 40, 50]
    assert calls == [2, 2, 2]


def test_one_text_that_does_not_fit_fails_and_leaves_the_size_as_it_was():
    calls: list[int] = []
    fitting = _forward_fitting(4, calls)

    def forward(batch: list[int]) -> list[int]:
        if 99 in batch:  # a text too long to fit even alone
            calls.append(len(batch))
            torch.empty(TOO_MUCH, dtype=torch.uint8)
        return fitting(batch)

    batch_size = HalvingBatchSize(4)
    with pytest.raises(RuntimeError, match="can't allocate memory"):
        batch_size.run(forward, [1, 2, 3, 99])
    # [1, 2] fit before [3, 99], [3] and [99] were tried: no batch of ordinary texts failed.
    assert calls == [4, 2, 2, 1, 1]
    assert batch_size.size == 4
    calls.clear()
    assert batch_size.run(forward, [1, 2, 3, 4]) == [10, 20, 30, 40]
    assert calls == [4]


def test_an_empty_batch_is_not_run():
    def forward(batch: list[int]) -> list[int]:
        raise AssertionError(f"forward ran on {batch!r}")

    assert HalvingBatchSize(4).run(forward, []) == []


def test_other_errors_are_not_retried():
    calls: list[int] = []

    def forward(batch: list[int]) -> list[int]:
        calls.append(len(batch))
        raise RuntimeError("mat1 and mat2 shapes cannot be multiplied")

    batch_size = HalvingBatchSize(4)
    with pytest.raises(RuntimeError, match="shapes"):
        batch_size.run(forward, [1, 2, 3, 4])
    assert calls == [4] and batch_size.size == 4


def test_a_batch_size_below_one_is_refused():
    with pytest.raises(ValueError, match="1 or more"):
        HalvingBatchSize(0)
