"""Does the embedding cache's byte bound hold for the memory the process really uses?

Fills an :class:`~opik_semantic_metrics.batching.cache.EmbeddingCache` bounded at
``--bound-mib`` with twice as many entries as fit, of each kind of value the package
caches (made of random tensors of the real shapes, not by a model, so that only the
cache's memory is measured), and prints the growth of the process's resident memory
against the bound. Each kind runs in its own process.

    python benchmarks/cache_memory.py [--bound-mib 64]

With ``--prepared N`` it measures instead what ``prepare`` keeps for N real references: a
BERTScore and a SemanticMatch engine on the packaged all-MiniLM-L6-v2, each in its own
process with a cache of its own large enough for all of them, prepare N distinct caption
references (``bertscore_throughput.py``'s workload) and print the bytes the cache counts
and the growth of resident memory (after one warm-up score, so that the model and the
allocator's buffers for a full batch are there before), per 10,000 references.

    python benchmarks/cache_memory.py --prepared 10000

Kinds: ``bertscore`` (token ids and a (14, 384) matrix: a caption on MiniLM),
``semantic`` (SemanticMatch: a sentence vector, 12 word-piece ids and vectors),
``comet`` (a pooled (384,) sentence vector, the smallest value: the objects around
its data weigh most), each with 50-character and 2,000-character texts as keys.
"""

from __future__ import annotations

import argparse
import gc
import os
import subprocess
import sys

import torch

from opik_semantic_metrics.batching.cache import EmbeddingCache
from opik_semantic_metrics.bertscore.tokenize import EncodedText
from opik_semantic_metrics.comet.models import SentenceEmbedding
from opik_semantic_metrics.semantic.results import TextEncoding

KINDS = ("bertscore", "semantic", "comet")
TEXT_LENGTHS = (50, 2000)


def _rss() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _value(kind: str, index: int) -> object:
    first_id = 1000 + index % 500  # ids above 256: ints Python does not share
    if kind == "bertscore":
        ids = tuple(range(first_id, first_id + 14))
        return (EncodedText(ids, truncated=False, empty=False), torch.randn(14, 384))
    if kind == "semantic":
        ids = tuple(range(first_id, first_id + 12))
        return TextEncoding(torch.randn(384), ids, torch.randn(12, 384), truncated=False)
    return SentenceEmbedding(torch.randn(384), truncated=False)


def measure(kind: str, text_length: int, bound: int) -> None:
    """Print one line: entries kept, bytes counted and resident memory grown."""
    cache = EmbeddingCache(max_bytes=bound)
    gc.collect()
    before = _rss()
    index = 0
    # Until the cache is full and has forgotten as many entries as it keeps.
    while len(cache) == cache.misses or cache.misses < 2 * len(cache):
        texts = [f"{i:09d}".ljust(text_length, "x") for i in range(index, index + 100)]
        cache.get_or_compute((kind,), texts, lambda t: [_value(kind, i) for i in range(len(t))])
        index += 100
    gc.collect()
    grown = _rss() - before
    print(
        f"{kind:<10} {text_length:>6} {len(cache):>8} {cache.misses:>8} "
        f"{cache.bytes_used / 2**20:>10.1f} {grown / 2**20:>10.1f} {grown / bound:>8.2f}"
    )


def measure_prepared(kind: str, count: int) -> None:
    """Print one line: what ``prepare`` of ``count`` caption references keeps."""
    import statistics

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from bertscore_throughput import workload

    references, _, _ = workload(count + 64)
    # Warm-up on a full batch of other references: the model's and the allocator's
    # buffers for a batch are there before the measurement starts.
    references, warm_up = references[:count], references[count:]
    cache = EmbeddingCache(max_bytes=64 * 2**30)
    if kind == "bertscore":
        from opik_semantic_metrics.bertscore.engine import BERTScoreEngine

        engine = BERTScoreEngine("all-MiniLM-L6-v2", device="cpu", cache=cache)
        engine.score(warm_up, warm_up)
        tokens = statistics.mean(
            len(encoded.ids) for encoded in engine.text_encoder.encode_many(references[:1000])
        )
    else:
        from opik_semantic_metrics.semantic.engine import SemanticMatchEngine

        engine = SemanticMatchEngine(device="cpu", cache=cache)  # type: ignore[assignment]
        engine.score(warm_up, warm_up)
        tokens = float("nan")
    cache.clear()
    gc.collect()
    before = _rss()
    kept = engine.prepare(references)
    gc.collect()
    grown = _rss() - before
    scale = 10_000 / count
    print(
        f"{kind:<10} {count:>8} {kept:>8} {tokens:>7.1f} {cache.bytes_used / 2**20:>10.1f} "
        f"{grown / 2**20:>10.1f} {scale * cache.bytes_used / 2**20:>12.1f} "
        f"{scale * grown / 2**20:>12.1f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bound-mib", type=int, default=64)
    parser.add_argument("--one", nargs=2, metavar=("KIND", "TEXT_LENGTH"), help=argparse.SUPPRESS)
    parser.add_argument("--prepared", type=int, help="references to prepare (real engines)")
    parser.add_argument("--kind", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.prepared and args.kind:
        measure_prepared(args.kind, args.prepared)
        return
    if args.prepared:
        print(f"prepare() of {args.prepared} caption references, MiniLM; each in a fresh process")
        print("engine        refs  entries  tokens  MiB counted  MiB RSS+  counted/10k  RSS+/10k")
        for kind in ("bertscore", "semantic"):
            command = [sys.executable, __file__, "--prepared", str(args.prepared)]
            subprocess.run([*command, "--kind", kind], check=True)
        return
    bound = args.bound_mib * 2**20
    if args.one:
        measure(args.one[0], int(args.one[1]), bound)
        return
    print(f"bound {args.bound_mib} MiB; each line in a fresh process")
    print("kind         text  entries   stored  MiB counted  MiB RSS+  RSS/bound")
    for kind in KINDS:
        for length in TEXT_LENGTHS:
            command = [sys.executable, __file__, "--bound-mib", str(args.bound_mib)]
            subprocess.run([*command, "--one", kind, str(length)], check=True)


if __name__ == "__main__":
    from cpu_header import print_cpu_header  # this folder: the script's own

    print_cpu_header()
    main()
