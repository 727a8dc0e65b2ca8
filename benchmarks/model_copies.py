"""How much memory does each further metric instance on one model cost?

Issue 3 asks for one copy of a model in memory however many metric instances use it.
Two orders, each in a fresh process, each metric scoring one pair as it comes:

- ``deepest-first``: BERTScore on all-MiniLM-L6-v2 at its layer 6, three more instances
  at layer 6, one instance at each of layers 1 to 5, and a SemanticMatch (which reads
  layer 6);
- ``rising``: BERTScore at layer 1, then at 2, 3, 4, 5 and 6, each deeper than the copy
  so far (each is a fresh load whose extra layers join the copy).

It prints the growth of the process's resident memory at each step, and the size of the
tensors of the model at layer 6.

    python benchmarks/model_copies.py [--model all-MiniLM-L6-v2]

The layers below the deepest asked for are views of its copy (``models/encoders.py``):
before that, each other layer loaded a copy of its own, the embeddings included.
"""

from __future__ import annotations

import argparse
import gc
import os
import subprocess
import sys
from collections.abc import Callable

from opik_semantic_metrics import BERTScore, SemanticMatch
from opik_semantic_metrics.models.layers import held_tensors
from opik_semantic_metrics.models.loading import load_encoder

MIB = 2**20
ORDERS = ("deepest-first", "rising")
PAIR = ("A cat sits on the mat.", "The cat sat on the mat.")


def _rss() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _tensor_bytes(model: str) -> int:
    """Bytes of the tensors the model's layer-6 encoder holds: parameters, buffers and
    the weights its oneDNN layers keep packed."""
    tensors = held_tensors(load_encoder(model, device="cpu").model)
    return sum(tensor.numel() * tensor.element_size() for tensor in tensors)


def measure(model: str, order: str) -> None:
    """Print each step's growth of resident memory, in this process."""
    kept = []  # every metric stays alive, as in one experiment with several metrics

    def step(label: str, make: Callable[[], list]) -> None:
        """Make the step's metrics (a metric loads its model when made) and score a pair
        with each, counting both."""
        gc.collect()
        before = _rss()
        metrics = make()
        for metric in metrics:
            metric.score(*PAIR)
        kept.extend(metrics)
        gc.collect()
        print(f"  {label:<42} {(_rss() - before) / MIB:8.1f} MiB", flush=True)

    def bertscore(layer: int | None = None) -> BERTScore:
        return BERTScore(model, num_layers=layer, track=False, device="cpu")

    start = _rss()
    print(f"{order}:")
    if order == "deepest-first":
        step("BERTScore, layer 6 (the first copy)", lambda: [bertscore()])
        step("3 more BERTScore instances at layer 6", lambda: [bertscore() for _ in range(3)])
        step(
            "BERTScore at each of layers 1 to 5",
            lambda: [bertscore(layer) for layer in range(1, 6)],
        )
        step("SemanticMatch (layer 6)", lambda: [SemanticMatch(model, track=False, device="cpu")])
    else:
        for layer in range(1, 7):
            step(f"BERTScore, layer {layer}", lambda layer=layer: [bertscore(layer)])
    print(f"  {'in all':<42} {(_rss() - start) / MIB:8.1f} MiB")
    print(f"  {'(the tensors of the model at layer 6)':<42} {_tensor_bytes(model) / MIB:8.1f} MiB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="all-MiniLM-L6-v2")
    parser.add_argument("--order", choices=ORDERS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.order:
        measure(args.model, args.order)
        return
    print(f"model {args.model}; resident memory grown by each step:")
    for order in ORDERS:
        command = [sys.executable, __file__, "--model", args.model, "--order", order]
        subprocess.run(command, check=True, stderr=subprocess.DEVNULL)


if __name__ == "__main__":
    from cpu_header import print_cpu_header  # this folder: the script's own

    print_cpu_header()
    main()
