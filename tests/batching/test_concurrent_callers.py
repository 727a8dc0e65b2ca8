"""Sixteen threads calling ``score()`` at once form batches of many items (as Opik's do).

On a GPU the engine gives its micro-batcher one worker (one batch at a time, up to
``micro_batch_size`` items); on a CPU limited to one thread it does the same, so this is
the GPU's batching, checked on a CPU with a real engine and a tiny model.
"""

from __future__ import annotations

import statistics
import threading
from pathlib import Path

import torch

from opik_semantic_metrics.batching.cache import EmbeddingCache
from opik_semantic_metrics.bertscore.engine import BERTScoreEngine

TINY_BERT = Path(__file__).parents[1] / "fixtures" / "tiny_models" / "bert"
CALLERS = 16
ITEMS_EACH = 12


def _one_worker_engine() -> BERTScoreEngine:
    """An engine built while PyTorch runs on one CPU thread: one batcher worker, batches
    of up to 16 items, as on a GPU."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        engine = BERTScoreEngine(str(TINY_BERT), 2, device="cpu", cache=EmbeddingCache(0))
    finally:
        torch.set_num_threads(threads)
    assert engine.batcher.workers == 1 and engine.batcher.max_batch_size == CALLERS
    return engine


def test_sixteen_concurrent_callers_are_scored_in_batches_of_twelve_or_more():
    engine = _one_worker_engine()
    engine.score_one("A warm-up sentence.", "A sentence to warm up.")  # loads the model
    sizes: list[int] = []
    process = engine.batcher.process

    def counted(items):
        sizes.append(len(items))
        return process(items)

    engine.batcher.process = counted
    start = threading.Barrier(CALLERS)
    results: dict[tuple[int, int], float] = {}

    def caller(thread: int) -> None:
        start.wait()
        for item in range(ITEMS_EACH):
            candidate = f"Caller {thread} says item {item} is ready."
            result = engine.score_one(candidate, f"Item {item} from caller {thread} is done.")
            results[thread, item] = result.f1

    threads = [threading.Thread(target=caller, args=(index,)) for index in range(CALLERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert len(results) == CALLERS * ITEMS_EACH
    assert sum(sizes) == CALLERS * ITEMS_EACH
    # Every caller waits for its item, so a batch can hold at most one item of each; the
    # first caller to arrive may be scored alone, and the last items straggle in.
    assert max(sizes) <= CALLERS
    assert statistics.median(sizes) >= 12, sizes
    # Batched scores are the scores one item at a time.
    alone = engine.score(["Caller 3 says item 5 is ready."], ["Item 5 from caller 3 is done."])
    assert abs(alone[0].f1 - results[3, 5]) < 1e-6
