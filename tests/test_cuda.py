"""The engines on a CUDA GPU: the same scores as the references and the CPU, batching
independence, device auto-selection, the fast mode, and a real out-of-memory.

Every test here needs a CUDA GPU and is skipped without one (CI has none): run them on a
GPU machine with ``python -m pytest tests/test_cuda.py tests/bertscore/test_batching.py``
(the second file's batching-independence test runs on the CPU and on the GPU). float32
products on a GPU sum in another order than on a CPU, so scores across devices are
compared within the oracle tolerance (1e-5); on one device, batching must change nothing
beyond 1e-6. TF32 is left at PyTorch's default (off): with it on, float32 products round
to 10 bits of mantissa and no score here would hold.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
import torch

from opik_semantic_metrics.batching.cache import EmbeddingCache
from opik_semantic_metrics.batching.forward import ForwardBatches
from opik_semantic_metrics.bertscore.engine import BERTScoreEngine
from opik_semantic_metrics.comet.engine import CometEngine
from opik_semantic_metrics.semantic.engine import SemanticMatchEngine
from tests.bert_score_oracle import minilm_prf, prf_table

pytestmark = pytest.mark.skipif(
    not torch.cuda.is_available(), reason="no CUDA GPU: these tests run only on a GPU machine"
)

ACROSS_DEVICES = 1e-5
COMET_FIXTURES = Path(__file__).parent / "fixtures" / "comet"


@pytest.fixture(scope="module")
def cuda_engine() -> BERTScoreEngine:
    return BERTScoreEngine("all-MiniLM-L6-v2", device="cuda", cache=EmbeddingCache())


def test_no_device_named_picks_the_gpu():
    engine = BERTScoreEngine("all-MiniLM-L6-v2", cache=EmbeddingCache())
    assert engine.encoder.device.type == "cuda"
    [result] = engine.score(["A cat sits on the mat."], ["A cat sat on the mat."])
    assert result.f1 > 0.5


def test_bertscore_on_the_gpu_equals_bert_score_on_the_gpu(cuda_engine, stsb_lists, minilm_path):
    candidates, references = stsb_lists
    ours = prf_table(cuda_engine.score(candidates, references))
    theirs = minilm_prf(minilm_path, candidates, references, device="cuda").double()
    assert (ours - theirs).abs().max().item() < ACROSS_DEVICES
    # The layers the GPU runs are the ones the CPU runs: compiled, on real tokens only.
    assert cuda_engine.encoder.unpadded is not None
    assert cuda_engine.encoder.packed_linear_layers == 0  # oneDNN packing is for CPUs


def test_gpu_and_cpu_scores_agree(cuda_engine, stsb_lists):
    candidates, references = stsb_lists
    on_gpu = prf_table(cuda_engine.score(candidates, references))
    on_cpu = prf_table(
        BERTScoreEngine("all-MiniLM-L6-v2", device="cpu", cache=EmbeddingCache()).score(
            candidates, references
        )
    )
    assert (on_gpu - on_cpu).abs().max().item() < ACROSS_DEVICES
    # Not trivially equal: the pairs' F1s spread far wider than the tolerance.
    assert on_cpu[:, 2].max() - on_cpu[:, 2].min() > 0.3


def test_gpu_forward_passes_are_sized_by_tokens_and_give_the_cpu_scores(stsb_lists):
    """250 caption pairs: on the GPU their texts run in passes of far more than 64 texts
    (a token budget of 64 * 256), with the scores of the CPU's passes of 64."""
    candidates, references = stsb_lists
    engine = BERTScoreEngine("all-MiniLM-L6-v2", device="cuda", cache=EmbeddingCache(0))
    rows: list[int] = []
    forward = engine.loaded.forward_batch

    def counted(id_lists, all_layers):
        rows.append(len(id_lists))
        return forward(id_lists, all_layers)

    engine.loaded.forward_batch = counted  # type: ignore[method-assign]
    on_gpu = prf_table(engine.score(candidates, references))
    assert max(rows) > 64
    on_cpu = prf_table(
        BERTScoreEngine("all-MiniLM-L6-v2", device="cpu", cache=EmbeddingCache(0)).score(
            candidates, references
        )
    )
    assert (on_gpu - on_cpu).abs().max().item() < ACROSS_DEVICES


def test_fast_mode_on_the_gpu_is_half_precision_and_close(cuda_engine, stsb_lists):
    candidates, references = stsb_lists
    fast = BERTScoreEngine("all-MiniLM-L6-v2", device="cuda", dtype="fast", cache=EmbeddingCache())
    expected = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    assert fast.encoder.dtype == expected
    exact = prf_table(cuda_engine.score(candidates, references))
    difference = (prf_table(fast.score(candidates, references)) - exact).abs()
    # The README's bound for the fast mode (1.7e-3 measured on 2,000 pairs on a CPU).
    assert difference[:, 2].max().item() < 2e-3
    assert difference.max().item() > 0  # really another type


def test_running_out_of_gpu_memory_halves_the_batch(caplog):
    # 96 texts of about 450 tokens in one batch need over a GiB for their activations;
    # the process is allowed only 256 MiB beyond the model, so PyTorch's allocator fails
    # the first batch for real and the engine must halve until batches fit.
    words = ["a", "dog", "runs", "near", "the", "river", "bank", "in", "green", "field"]
    # Distinct texts: the engine encodes a text repeated in a list once.
    texts = [f"{i} " + " ".join(words[(i + j) % len(words)] for j in range(450)) for i in range(96)]
    references = [text[: len(text) // 2] for text in texts]
    engine = BERTScoreEngine(
        "all-MiniLM-L6-v2", device="cuda", batch_size=96, cache=EmbeddingCache(0)
    )
    # Batches of 96 texts, not of a token budget (which would hold 54 of these).
    engine.forward_batches = ForwardBatches(96, torch.device("cuda"), token_budget=None)
    engine.score(["warm up"], ["warm up"])
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    total = torch.cuda.get_device_properties(0).total_memory
    allowed = torch.cuda.memory_allocated() + 256 * 2**20
    torch.cuda.set_per_process_memory_fraction(allowed / total)
    try:
        with caplog.at_level(logging.WARNING, "opik_semantic_metrics.batching.memory"):
            on_gpu = prf_table(engine.score(texts, references))
    finally:
        torch.cuda.set_per_process_memory_fraction(1.0)
        torch.cuda.empty_cache()
    assert engine.forward_batches.size < 96
    assert "Out of memory on a batch of 96 texts" in caplog.text
    on_cpu = prf_table(
        BERTScoreEngine("all-MiniLM-L6-v2", device="cpu", cache=EmbeddingCache(0)).score(
            texts, references
        )
    )
    assert (on_gpu - on_cpu).abs().max().item() < ACROSS_DEVICES


def test_semantic_match_on_the_gpu_equals_the_cpu(stsb_lists):
    candidates, references = stsb_lists
    scores = {}
    for device in ("cuda", "cpu"):
        engine = SemanticMatchEngine(device=device, cache=EmbeddingCache())
        scores[device] = torch.tensor(
            [result.raw_score for result in engine.score(candidates, references)],
            dtype=torch.float64,
        )
    assert (scores["cuda"] - scores["cpu"]).abs().max().item() < ACROSS_DEVICES
    assert scores["cpu"].max() - scores["cpu"].min() > 0.3


COMET_ORACLE = json.loads((COMET_FIXTURES / "oracle.json").read_text(encoding="utf-8"))
COMET_CASES = [
    (name, mode)
    for name, entry in COMET_ORACLE["models"].items()
    for mode in ("with_reference", "without_reference")
    if mode in entry
]


@pytest.mark.parametrize(("name", "mode"), COMET_CASES)
def test_comet_on_the_gpu_equals_unbabel_comet(name, mode):
    segments = json.loads((COMET_FIXTURES / "segments.json").read_text(encoding="utf-8"))
    references = [segment["ref"] for segment in segments] if mode == "with_reference" else None
    engine = CometEngine(
        str(COMET_FIXTURES / name), device="cuda", batch_size=8, cache=EmbeddingCache()
    )
    results = engine.score(
        [segment["src"] for segment in segments],
        [segment["mt"] for segment in segments],
        references,
    )
    expected = COMET_ORACLE["models"][name][mode]["scores"]
    differences = [abs(ours.score - theirs) for ours, theirs in zip(results, expected, strict=True)]
    assert len(differences) == len(segments)
    assert max(differences) < ACROSS_DEVICES
