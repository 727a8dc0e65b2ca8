"""How every encoder engine batches: its forward passes and its per-item calls.

BERTScore, SemanticMatch and COMET run texts through a model the same way, so each holds
the same two parts:

- :class:`ForwardBatches`: a list of texts goes through the model in batches of similar
  length, longest first (``lengths.py``), side by side on single-threaded workers on a
  CPU (``cpu_parallel.py``), a batch that runs out of memory halved (``memory.py``). On a
  CPU a batch holds up to ``batch_size`` texts, the sizes measured there. On a GPU it is
  sized by work instead: up to ``batch_size * GPU_TOKENS_PER_TEXT`` padded tokens, so
  that a batch of captions holds hundreds of rows and a batch of paragraphs a few dozen;
  a GPU is bound by the work around the model at small batches (0.39x bert_score's best
  call on an H200 at 64 texts a batch: ``docs/performance/gpu.md``).
- :func:`item_batcher`: the :class:`~opik_semantic_metrics.batching.microbatch.MicroBatcher`
  that gathers concurrent per-item calls (Opik's 16 threads). On a CPU it has workers that
  share the cores, each running whole batches on its own cores, as many as keep each
  batch at :data:`ITEMS_PER_WORKER` items or more (``cpu_parallel.py``); on a GPU one
  worker, so that the items that arrive together form one batch.

A score does not depend on how its texts were batched (float32: within 1e-6 at any batch
size or token budget, ``tests/batching/test_forward.py``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Literal, TypeVar

import torch

from opik_semantic_metrics.batching.cpu_parallel import (
    map_longest_first,
    side_by_side_workers,
    use_threads,
)
from opik_semantic_metrics.batching.memory import HalvingBatchSize
from opik_semantic_metrics.batching.microbatch import MicroBatcher

ItemT = TypeVar("ItemT")
ResultT = TypeVar("ResultT")

#: Padded tokens a GPU forward pass may hold for each text of ``batch_size``: the default
#: 64 gives 16,384, about 1,100 captions or 40 texts of 400 tokens.
GPU_TOKENS_PER_TEXT = 256

#: Pairs a GPU greedy match takes in one batched product, for each text of
#: ``batch_size``: the default 64 gives 1,024 (similarity matrices of 1,024 caption pairs
#: are a few MB; of paragraphs, a batch that runs out of memory halves).
GPU_PAIRS_PER_TEXT = 16

#: Fewest items a batcher worker's batches are sized for: more workers would each form
#: batches too small to pay (``docs/design/micro-batching.md``).
ITEMS_PER_WORKER = 8


def gpu_token_budget(batch_size: int, device: torch.device) -> int | None:
    """Padded tokens a forward pass may hold on ``device``: none on a CPU (its batches
    are cut by count), ``batch_size * GPU_TOKENS_PER_TEXT`` on a GPU.

    Example:
        >>> gpu_token_budget(64, torch.device("cpu")) is None
        True
        >>> gpu_token_budget(64, torch.device("cuda"))
        16384
    """
    return batch_size * GPU_TOKENS_PER_TEXT if device.type == "cuda" else None


def match_batch_size(batch_size: int, device: torch.device) -> HalvingBatchSize:
    """Most pairs a batched similarity product takes on ``device``: ``batch_size`` on a
    CPU, ``batch_size * GPU_PAIRS_PER_TEXT`` on a GPU; halved where it runs out of memory.

    Example:
        >>> match_batch_size(64, torch.device("cuda")).size
        1024
    """
    rows = batch_size * GPU_PAIRS_PER_TEXT if device.type == "cuda" else batch_size
    return HalvingBatchSize(rows)


class ForwardBatches:
    """An engine's forward passes over a list: length-sorted batches of its size.

    Args:
        batch_size: Most texts a batch on a CPU; on a GPU it sets the token budget.
        device: Where the model runs.
        token_budget: Most padded tokens a batch, or none; ``"device"`` (the default):
            :func:`gpu_token_budget`.
            With a budget, a batch holds as many texts as fit in it.

    Example:
        >>> batches = ForwardBatches(2, torch.device("cpu"))
        >>> batches.map(lambda batch: [text.upper() for text in batch], ["ab", "c", "de"], len)
        ['AB', 'C', 'DE']
    """

    def __init__(
        self,
        batch_size: int,
        device: torch.device,
        *,
        token_budget: int | Literal["device"] | None = "device",
    ) -> None:
        self.device = device
        self.token_budget = (
            gpu_token_budget(batch_size, device) if token_budget == "device" else token_budget
        )
        # With a budget, the budget bounds the rows; out of memory still halves them.
        rows = batch_size if self.token_budget is None else self.token_budget
        self._rows = HalvingBatchSize(rows)

    @property
    def size(self) -> int:
        """The most texts a batch may hold now (halved after running out of memory)."""
        return self._rows.size

    def run(
        self, function: Callable[[list[ItemT]], list[ResultT]], batch: Sequence[ItemT]
    ) -> list[ResultT]:
        """``function`` on one batch, halved where it runs out of memory."""
        return self._rows.run(function, batch)

    def map(
        self,
        function: Callable[[list[ItemT]], list[ResultT]],
        items: Sequence[ItemT],
        length: Callable[[ItemT], int],
    ) -> list[ResultT]:
        """One result per item, in order, from ``function`` run on length-sorted batches."""
        return map_longest_first(
            functools.partial(self._rows.run, function),
            items,
            batch_size=self._rows.size,
            length=length,
            device=self.device,
            token_budget=self.token_budget,
        )


def item_batcher(
    process: Callable[[list[ItemT]], Sequence[ResultT]],
    device: torch.device,
    micro_batch_size: int,
) -> MicroBatcher[ItemT, ResultT]:
    """The batcher of an engine's per-item calls on ``device`` (see the module).

    Example:
        >>> batcher = item_batcher(lambda items: [2 * item for item in items],
        ...                        torch.device("cuda"), 16)
        >>> batcher.workers, batcher.max_batch_size
        (1, 16)
    """
    cores = side_by_side_workers(device)
    workers = max(1, min(cores, micro_batch_size // ITEMS_PER_WORKER))
    return MicroBatcher(
        process,
        max_batch_size=max(1, micro_batch_size // workers),
        workers=workers,
        worker_setup=functools.partial(use_threads, cores // workers) if workers > 1 else None,
    )
