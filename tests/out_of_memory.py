"""A real out-of-memory failure for batches over a size, for the halving tests.

No CPU test can exhaust a GPU, and a batch of test texts never exhausts the CPU: a batch
over the limit asks PyTorch's CPU allocator for more than any machine has, so the error
the code under test catches is the allocator's own, not a stand-in.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

#: More bytes than any machine this runs on has: the CPU allocator refuses the block.
TOO_MUCH = 10**14


def failing_over(limit: int, function: Callable[..., Any], sizes: list[int]) -> Callable[..., Any]:
    """``function``, but a call whose first argument holds more than ``limit`` rows runs
    out of memory first; the row counts of those calls are appended to ``sizes``."""

    def limited(batch: Any, *args: Any, **kwargs: Any) -> Any:
        if len(batch) > limit:
            sizes.append(len(batch))
            torch.empty(TOO_MUCH, dtype=torch.uint8)
        return function(batch, *args, **kwargs)

    return limited
