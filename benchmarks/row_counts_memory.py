"""How much does a process grow when it scores texts of many different lengths?

oneDNN, the library PyTorch's CPU products run on, compiles kernels for each row count
it sees and keeps them. Every batch of the encoder therefore runs on a row count rounded
to 16 values an octave (``models/unpadded.py``). This benchmark scores pairs of 3 to
``--longest`` words one pair a call (a lone caller: candidate and reference of the same
length, one batch without padding), with the embedding cache off, ``--passes`` times
over, and prints the growth of the process's resident memory and the time after each
pass, in two cases, each in a fresh process:

  (rounded) the encoder as the metrics run it: every batch on a rounded row count;
  (exact)   the same batches through the model as transformers runs it (our packed
            linear layers, exact row counts): how batches without padding ran before.

    python benchmarks/row_counts_memory.py [--longest 200] [--passes 3]
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import subprocess
import sys
import time

CASES = ("rounded", "exact")
WORDS = ("the", "cat", "sat", "on", "mat", "dog", "ran", "in", "park", "a", "man", "plays")


def _rss_mib() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def measure(case: str, longest: int, passes: int) -> list[dict[str, float]]:
    """Each pass's growth of resident memory (MiB, since the warm-up) and its end time."""
    from opik_semantic_metrics.batching.cache import EmbeddingCache
    from opik_semantic_metrics.bertscore.engine import BERTScoreEngine

    engine = BERTScoreEngine("all-MiniLM-L6-v2", device="cpu", cache=EmbeddingCache(0))
    encoder = engine.encoder
    if case == "exact":
        # The batches go to the model itself, as those without padding once did.
        object.__setattr__(encoder, "unpadded", None)
    rng = random.Random(0)

    def text(words: int) -> str:
        return " ".join(rng.choice(WORDS) for _ in range(words))

    for words in (5, 10):
        engine.score_one(text(words), text(words))
    gc.collect()
    base, start = _rss_mib(), time.perf_counter()
    results = []
    for _ in range(passes):
        for words in range(3, longest):
            engine.score_one(text(words), text(words))
        gc.collect()
        results.append({"mib": _rss_mib() - base, "seconds": time.perf_counter() - start})
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--longest", type=int, default=200, help="longest pair, in words")
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--case", choices=CASES, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.case:
        print(json.dumps(measure(args.case, args.longest, args.passes)))
        return
    print(
        f"one pair a call, pairs of 3 to {args.longest - 1} words, {args.passes} passes; "
        "resident memory grown since the warm-up (MiB) and time (s) after each pass:"
    )
    for case in CASES:
        command = [sys.executable, __file__, "--case", case]
        command += ["--longest", str(args.longest), "--passes", str(args.passes)]
        output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
        passes = json.loads(output.strip().splitlines()[-1])
        figures = ", ".join(f"+{p['mib']:.0f} MiB at {p['seconds']:.1f} s" for p in passes)
        print(f"  ({case}) {figures}")


if __name__ == "__main__":
    from cpu_header import print_cpu_header  # this folder: the script's own

    print_cpu_header()
    main()
