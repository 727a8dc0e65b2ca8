"""BERTScore does not depend on how items are batched, cached or threaded.

Batched, micro-batched from 16 threads and one-at-a-time scores are equal within 1e-6,
repeated texts are encoded once, running out of memory halves the batch, and every
metric instance shares one model copy.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
import torch

from opik_semantic_metrics import BERTScore
from opik_semantic_metrics.batching import cpu_parallel
from opik_semantic_metrics.batching.cache import EmbeddingCache
from opik_semantic_metrics.batching.lengths import length_batches
from opik_semantic_metrics.bertscore import matching as matching_module
from opik_semantic_metrics.bertscore.engine import BERTScoreEngine
from opik_semantic_metrics.models.encoders import LoadedEncoder
from opik_semantic_metrics.models.packed_linear import cpu_has_native_bf16
from tests.bert_score_oracle import prf_table
from tests.out_of_memory import failing_over

TOLERANCE = 1e-6


@pytest.mark.slow
@pytest.mark.parametrize(
    "device",
    [
        "cpu",
        pytest.param(
            "cuda",
            marks=pytest.mark.skipif(
                not torch.cuda.is_available(), reason="no CUDA GPU: runs only on a GPU machine"
            ),
        ),
    ],
)
def test_batched_micro_batched_and_one_at_a_time_agree(stsb_lists, device):
    candidates, references = stsb_lists
    batched = prf_table(
        BERTScoreEngine("all-MiniLM-L6-v2", device=device, cache=EmbeddingCache()).score(
            candidates, references
        )
    )
    threaded_engine = BERTScoreEngine("all-MiniLM-L6-v2", device=device, cache=EmbeddingCache())
    with ThreadPoolExecutor(16) as pool:
        threaded = prf_table(pool.map(threaded_engine.score_one, candidates, references))
    assert threaded_engine.batcher.batches_run < len(candidates)  # really coalesced
    single_engine = BERTScoreEngine("all-MiniLM-L6-v2", device=device, cache=EmbeddingCache(0))
    one_at_a_time = prf_table(
        single_engine.score([candidate], [reference])[0]
        for candidate, reference in zip(candidates, references, strict=True)
    )
    assert (threaded - batched).abs().max().item() <= TOLERANCE
    assert (one_at_a_time - batched).abs().max().item() <= TOLERANCE


def test_shuffled_input_gives_the_same_scores(stsb_lists):
    candidates, references = stsb_lists
    engine = BERTScoreEngine("all-MiniLM-L6-v2", device="cpu", cache=EmbeddingCache())
    order = torch.randperm(len(candidates), generator=torch.Generator().manual_seed(0)).tolist()
    shuffled = prf_table(
        engine.score([candidates[i] for i in order], [references[i] for i in order])
    )
    straight = prf_table(engine.score(candidates, references))
    assert (shuffled - straight[order]).abs().max().item() <= TOLERANCE


def test_repeated_references_are_encoded_once_across_engines(stsb_lists):
    candidates, references = stsb_lists
    cache = EmbeddingCache()
    first = BERTScoreEngine("all-MiniLM-L6-v2", device="cpu", cache=cache)
    first.score(candidates[:40], references[:40])
    # Only references are kept: outputs change with every experiment.
    assert cache.misses == len(cache) == len(set(references[:40]))
    # A second experiment: new outputs against the same references, in another engine.
    second = BERTScoreEngine("all-MiniLM-L6-v2", device="cpu", cache=cache)
    second.score(candidates[40:80], references[:40])
    assert cache.misses == len(set(references[:40]))
    assert cache.hits == len(set(references[:40]))


def record_forward_passes(monkeypatch) -> list[list[int]]:
    """From now on, the token counts of the texts of every forward pass, pass by pass.

    On a CPU with several threads, ``map_batches`` runs passes side by side, so the
    order in which they are recorded is a race: compare them with :func:`same_passes`.
    """
    passes: list[list[int]] = []
    real_forward = LoadedEncoder.hidden_states

    def counted(self, input_ids, attention_mask):
        passes.append(sorted(attention_mask.sum(dim=1).tolist(), reverse=True))
        return real_forward(self, input_ids, attention_mask)

    monkeypatch.setattr(LoadedEncoder, "hidden_states", counted)
    return passes


def same_passes(recorded: list[list[int]], expected: list[list[int]]) -> bool:
    """Whether the recorded passes are the expected ones, in whatever order they ran."""
    return sorted(recorded) == sorted(expected)


def test_an_output_equal_to_a_cached_reference_is_not_encoded_again(stsb_lists, monkeypatch):
    candidates, references = stsb_lists
    engine = BERTScoreEngine("all-MiniLM-L6-v2", device="cpu", cache=EmbeddingCache())
    engine.score(candidates[:4], references[:4])
    stored = len(engine.cache)
    passes = record_forward_passes(monkeypatch)
    # Item 0's output is item 1's reference, which the first call cached.
    outputs = [references[1], candidates[5]]
    got = prf_table(engine.score(outputs, references[:2]))
    assert [len(texts) for texts in passes] == [1]  # only candidates[5]
    assert len(engine.cache) == stored  # outputs are still not stored
    fresh = BERTScoreEngine("all-MiniLM-L6-v2", device="cpu", cache=EmbeddingCache(0))
    assert (got - prf_table(fresh.score(outputs, references[:2]))).abs().max().item() <= TOLERANCE


def test_a_micro_batch_is_encoded_together_cold_or_warm(stsb_lists, monkeypatch):
    """New references and outputs are encoded together: an 8-item micro-batch makes the
    forward passes of its 16 texts cut by length only (``batching/lengths.py``), not one
    set for the references and another for the outputs; with the references cached, the
    passes of its 8 outputs."""
    candidates, references = stsb_lists
    engine = BERTScoreEngine("all-MiniLM-L6-v2", device="cpu", cache=EmbeddingCache())
    expected = prf_table(engine.score(candidates[:8], references[:8]))
    engine.cache.clear()
    passes = record_forward_passes(monkeypatch)
    cold = prf_table(engine.score(candidates[:8], references[:8]))
    cold_passes = list(passes)
    passes.clear()
    warm = prf_table(engine.score(candidates[:8], references[:8]))

    def by_length(texts: list[str]) -> list[list[int]]:
        counts = [len(item.ids) for item in engine.text_encoder.encode_many(texts)]
        return [[counts[i] for i in batch] for batch in length_batches(counts, 64)]

    assert same_passes(cold_passes, by_length(candidates[:8] + references[:8]))
    assert same_passes(passes, by_length(candidates[:8]))
    assert (cold - expected).abs().max().item() <= TOLERANCE
    assert (warm - expected).abs().max().item() <= TOLERANCE


def test_out_of_memory_halves_the_batch_and_keeps_the_scores(stsb_lists, monkeypatch):
    candidates, references = stsb_lists
    expected = prf_table(
        BERTScoreEngine("all-MiniLM-L6-v2", device="cpu", cache=EmbeddingCache()).score(
            candidates[:30], references[:30]
        )
    )
    real_forward = LoadedEncoder.hidden_states
    failures = []

    def forward_with_little_memory(self, input_ids, attention_mask):
        # No CPU test can exhaust a GPU: raise what CUDA raises when a batch is too big.
        if input_ids.shape[0] > 8:
            failures.append(input_ids.shape[0])
            raise torch.cuda.OutOfMemoryError("CUDA out of memory (simulated)")
        return real_forward(self, input_ids, attention_mask)

    monkeypatch.setattr(LoadedEncoder, "hidden_states", forward_with_little_memory)
    engine = BERTScoreEngine(
        "all-MiniLM-L6-v2", device="cpu", batch_size=32, cache=EmbeddingCache()
    )
    got = prf_table(engine.score(candidates[:30], references[:30]))
    assert failures and engine.forward_batches.size <= 8
    assert (got - expected).abs().max().item() <= TOLERANCE
    # The smaller size is kept: the next list runs out of memory nowhere.
    failures.clear()
    again = prf_table(engine.score(candidates[30:], references[30:]))
    assert not failures and len(again) == len(candidates) - 30


def test_out_of_memory_in_the_greedy_match_halves_its_batch(stsb_lists, monkeypatch):
    # Seen on a GPU: with the forward batches halved to fit, the similarity matrices of a
    # batch of long pairs still ran out of memory, and the whole list failed.
    candidates, references = stsb_lists
    expected = prf_table(
        BERTScoreEngine("all-MiniLM-L6-v2", device="cpu", cache=EmbeddingCache()).score(
            candidates[:30], references[:30]
        )
    )
    failures: list[int] = []
    limited = failing_over(8, matching_module.greedy_match, failures)
    monkeypatch.setattr(matching_module, "greedy_match", limited)
    engine = BERTScoreEngine(
        "all-MiniLM-L6-v2", device="cpu", batch_size=32, cache=EmbeddingCache()
    )
    got = prf_table(engine.score(candidates[:30], references[:30]))
    assert failures[0] == 30 and engine.match_batch_size.size <= 8
    assert engine.forward_batches.size == 32  # the forward passes fitted
    assert (got - expected).abs().max().item() <= TOLERANCE
    failures.clear()
    engine.score(candidates[30:60], references[30:60])
    assert not failures


def test_every_metric_instance_shares_one_model_copy():
    metrics = [BERTScore(model="all-MiniLM-L6-v2", device="cpu", track=False) for _ in range(3)]
    metrics.append(
        BERTScore(
            model="sentence-transformers/all-MiniLM-L6-v2", device="cpu", track=False, idf=True
        )
    )
    encoders = {id(metric.engine.encoder) for metric in metrics}
    assert len(encoders) == 1


def test_fast_mode_is_bf16_here_and_close_to_float32(stsb_lists):
    candidates, references = stsb_lists
    # Decided by the hardware, not by the code under test: a fast mode broken into float32
    # must fail here, not skip.
    if not cpu_has_native_bf16():
        pytest.skip("this CPU has no native bf16: the fast mode is float32 here")
    fast = BERTScoreEngine("all-MiniLM-L6-v2", device="cpu", dtype="fast", cache=EmbeddingCache())
    exact = prf_table(
        BERTScoreEngine("all-MiniLM-L6-v2", device="cpu", cache=EmbeddingCache()).score(
            candidates, references
        )
    )
    approximate = prf_table(fast.score(candidates, references))
    assert fast.encoder.dtype == torch.bfloat16
    assert 0 < (approximate - exact).abs().max().item() <= 2e-2


@pytest.mark.slow
def test_float16_the_fast_mode_of_older_gpus_runs_close_to_float32(stsb_lists):
    """GPUs without bfloat16 get float16 in the fast mode. None is lent to CI, but the CPU
    computes in float16 too, so the same path (weights cast, the real-token layers,
    the greedy match on half-precision embeddings) runs here, whole-list and per item."""
    candidates, references = stsb_lists
    exact = prf_table(
        BERTScoreEngine("all-MiniLM-L6-v2", device="cpu", cache=EmbeddingCache()).score(
            candidates, references
        )
    )
    half = BERTScoreEngine("all-MiniLM-L6-v2", device="cpu", dtype="fp16", cache=EmbeddingCache())
    batched = prf_table(half.score(candidates, references))
    threaded_engine = BERTScoreEngine(
        "all-MiniLM-L6-v2", device="cpu", dtype="fp16", cache=EmbeddingCache()
    )
    with ThreadPoolExecutor(16) as pool:
        threaded = prf_table(pool.map(threaded_engine.score_one, candidates, references))
    assert half.encoder.dtype == torch.float16
    assert {p.dtype for p in half.encoder.model.parameters()} == {torch.float16}
    # float16 keeps 11 bits of mantissa: here within 2.5e-4 of float32, and a text's
    # embedding moves a little with the texts padded beside it.
    assert 0 < (batched - exact).abs().max().item() <= 2e-3
    assert (threaded - batched).abs().max().item() <= 2e-3


def _threads_after(setup) -> int:
    seen = []

    def run() -> None:
        setup()
        seen.append(torch.get_num_threads())

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    return seen[0]


@pytest.mark.skipif(
    cpu_parallel._set_openmp_threads() is None, reason="OpenMP's count cannot be set per thread"
)
@pytest.mark.parametrize(("cores", "threads_each"), [(2, 1), (8, 4)])
def test_sixteen_items_go_to_two_batcher_workers_that_share_the_cores(cores, threads_each):
    before = torch.get_num_threads()
    torch.set_num_threads(cores)
    try:
        batcher = BERTScoreEngine("all-MiniLM-L6-v2", device="cpu").batcher
        assert (batcher.workers, batcher.max_batch_size) == (2, 8)
        assert _threads_after(batcher.worker_setup) == threads_each
    finally:
        torch.set_num_threads(before)


def test_one_core_or_a_small_micro_batch_keeps_one_worker():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        batcher = BERTScoreEngine("all-MiniLM-L6-v2", device="cpu").batcher
        assert (batcher.workers, batcher.max_batch_size, batcher.worker_setup) == (1, 16, None)
    finally:
        torch.set_num_threads(before)
    small = BERTScoreEngine("all-MiniLM-L6-v2", device="cpu", micro_batch_size=8).batcher
    assert (small.workers, small.max_batch_size) == (1, 8)


def test_empty_texts_are_logged_for_a_whole_list_not_for_micro_batches(caplog):
    engine = BERTScoreEngine("all-MiniLM-L6-v2", device="cpu")
    logger = "opik_semantic_metrics.bertscore.engine"
    with caplog.at_level("WARNING", logger=logger):
        engine.score(["", "A dog runs.", "A cat."], ["A cat.", "A dog is running.", " "])
    assert [record.getMessage() for record in caplog.records] == [
        "2 of 3 items have an empty candidate or reference; their raw BERTScores are set "
        "to 0 (as bert_score does)."
    ]
    caplog.clear()
    # Per item, the count would be of a micro-batch the caller never saw; the item's own
    # result flags it instead.
    with caplog.at_level("WARNING", logger=logger), ThreadPoolExecutor(8) as pool:
        results = list(pool.map(engine.score_one, ["", *["A dog runs."] * 7], ["A cat."] * 8))
    assert caplog.records == []
    assert results[0].candidate_empty and results[0].f1 == 0.0


@pytest.mark.parametrize(
    "options",
    [{"num_layers": 3}, {"num_layers": 6}, {"dtype": "bf16"}, {"num_layers": 6, "idf": True}],
    ids=["layer-3", "layer-6", "bf16", "idf"],
)
def test_engines_sharing_one_cache_get_the_embeddings_of_their_own_settings(stsb_lists, options):
    """One process-wide cache serves every engine: what another layer or weight type put
    in it for the same texts must not come back here."""
    candidates, references = stsb_lists[0][:20], stsb_lists[1][:20]
    shared = EmbeddingCache()
    for other in ({"num_layers": 3}, {"num_layers": 6}, {"dtype": "bf16"}):
        if other != options:
            BERTScoreEngine("all-MiniLM-L6-v2", device="cpu", cache=shared, **other).score(
                candidates, references
            )

    def scores(cache: EmbeddingCache) -> torch.Tensor:
        engine = BERTScoreEngine("all-MiniLM-L6-v2", device="cpu", cache=cache, **options)
        if options.get("idf"):
            engine.fit_idf(references)
        return prf_table(engine.score(candidates, references))

    assert (scores(shared) - scores(EmbeddingCache())).abs().max().item() <= TOLERANCE
