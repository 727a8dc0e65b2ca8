"""ForwardBatches and item_batcher: the batching every encoder engine shares.

A score must not depend on how its texts were batched: each engine, on the CPU, at any
batch size or token budget, gives the scores of the same engine at its defaults.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from opik_semantic_metrics.batching.cache import EmbeddingCache
from opik_semantic_metrics.batching.forward import (
    GPU_TOKENS_PER_TEXT,
    ForwardBatches,
    item_batcher,
)
from opik_semantic_metrics.comet.engine import CometEngine

FIXTURES = Path(__file__).parents[1] / "fixtures"
SEGMENTS = json.loads((FIXTURES / "comet" / "segments.json").read_text(encoding="utf-8"))[:40]
#: (batch size, token budget): one text a batch, a few, a budget smaller than most
#: texts (each alone), a budget of a few texts, and a budget of all of them.
SETTINGS = [(1, None), (3, None), (64, 40), (64, 300), (64, 100_000)]


def test_a_cpu_cuts_batches_by_count_and_a_gpu_by_tokens():
    on_cpu = ForwardBatches(64, torch.device("cpu"))
    assert (on_cpu.token_budget, on_cpu.size) == (None, 64)
    on_gpu = ForwardBatches(64, torch.device("cuda"))
    assert on_gpu.token_budget == 64 * GPU_TOKENS_PER_TEXT
    assert on_gpu.size == on_gpu.token_budget  # rows bounded by the budget alone


def test_a_budget_gives_batches_within_it_in_the_items_order():
    seen: list[list[str]] = []

    def run(batch: list[str]) -> list[int]:
        seen.append(batch)
        return [len(text) for text in batch]

    texts = ["x" * length for length in (5, 40, 6, 38, 7, 5)]
    batches = ForwardBatches(64, torch.device("cpu"), token_budget=80)
    assert batches.map(run, texts, len) == [5, 40, 6, 38, 7, 5]
    assert [[len(text) for text in batch] for batch in seen] == [[40, 38], [7, 6, 5, 5]]


def test_a_gpu_gathers_concurrent_items_into_one_batch_and_a_cpu_shares_its_cores():
    gpu = item_batcher(lambda items: items, torch.device("cuda"), 16)
    assert (gpu.workers, gpu.max_batch_size, gpu.worker_setup) == (1, 16, None)
    cpu = item_batcher(lambda items: items, torch.device("cpu"), 16)
    assert cpu.workers * cpu.max_batch_size == 16


@pytest.mark.parametrize(("batch_size", "token_budget"), SETTINGS)
def test_comet_scores_do_not_depend_on_batching(batch_size, token_budget):
    sources = [segment["src"] for segment in SEGMENTS]
    translations = [segment["mt"] for segment in SEGMENTS]
    references = [segment["ref"] for segment in SEGMENTS]
    model = str(FIXTURES / "comet" / "regression-xlmr")
    default = CometEngine(model, device="cpu", cache=EmbeddingCache(0))
    expected = [result.score for result in default.score(sources, translations, references)]
    engine = CometEngine(model, device="cpu", batch_size=batch_size, cache=EmbeddingCache(0))
    engine.forward_batches.token_budget = token_budget
    scores = [result.score for result in engine.score(sources, translations, references)]
    assert scores == pytest.approx(expected, abs=1e-6)


def _caption_pairs(stsb_pairs, count: int = 60) -> tuple[list[str], list[str]]:
    """Real captions, with one paragraph among them (a batch of its own length)."""
    candidates = [first for first, _, _ in stsb_pairs[:count]]
    references = [second for _, second, _ in stsb_pairs[:count]]
    candidates[7] = " ".join(candidates[:12])
    return candidates, references


@pytest.mark.parametrize(("batch_size", "token_budget"), SETTINGS)
def test_bertscore_scores_do_not_depend_on_batching(stsb_pairs, batch_size, token_budget):
    from opik_semantic_metrics.bertscore.engine import BERTScoreEngine

    candidates, references = _caption_pairs(stsb_pairs)
    model = str(FIXTURES / "tiny_models" / "roberta")
    default = BERTScoreEngine(model, 2, device="cpu", cache=EmbeddingCache(0))
    expected = [(r.precision, r.recall, r.f1) for r in default.score(candidates, references)]
    engine = BERTScoreEngine(model, 2, device="cpu", batch_size=batch_size, cache=EmbeddingCache(0))
    engine.forward_batches.token_budget = token_budget
    results = engine.score(candidates, references)
    scores = [(r.precision, r.recall, r.f1) for r in results]
    assert torch.tensor(scores) == pytest.approx(torch.tensor(expected), abs=1e-6)
    # Per item, as Opik's threads score, too.
    assert engine.score_one(candidates[7], references[7]).f1 == pytest.approx(
        expected[7][2], abs=1e-6
    )


@pytest.mark.parametrize(("batch_size", "token_budget"), [(1, None), (64, 40), (64, 300)])
def test_semantic_match_scores_do_not_depend_on_batching(stsb_pairs, batch_size, token_budget):
    from opik_semantic_metrics.semantic.engine import SemanticMatchEngine

    candidates, references = _caption_pairs(stsb_pairs, 30)
    default = SemanticMatchEngine("all-MiniLM-L6-v2", device="cpu", cache=EmbeddingCache(0))
    expected = [r.raw_score for r in default.score(candidates, references)]
    engine = SemanticMatchEngine(
        "all-MiniLM-L6-v2", device="cpu", batch_size=batch_size, cache=EmbeddingCache(0)
    )
    engine.forward_batches.token_budget = token_budget
    scores = [r.raw_score for r in engine.score(candidates, references)]
    assert scores == pytest.approx(expected, abs=1e-6)
