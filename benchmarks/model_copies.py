"""How much memory does each further metric instance on one model cost?

Issue 3 asks for one copy of a model in memory however many metric instances use it.
This loads, in one process and one after another, BERTScore on all-MiniLM-L6-v2 at its
layer 6, three more instances at layer 6, one instance at each of layers 1 to 5, and a
SemanticMatch (which reads layer 6), each scoring one pair, and prints the growth of the
process's resident memory at each step against the size of the model's weights.

    python benchmarks/model_copies.py [--model all-MiniLM-L6-v2]

The layers below the deepest asked for are views of its copy (``models/loading.py``):
before that, each other layer loaded a copy of its own, the embeddings included.
"""

from __future__ import annotations

import argparse
import gc
import os

import torch

from opik_semantic_metrics import BERTScore, SemanticMatch
from opik_semantic_metrics.models.loading import load_encoder

MIB = 2**20


def _rss() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _weight_bytes(model: str) -> int:
    """Bytes of the tensors the model's last-layer encoder holds: parameters, buffers and
    the weights its oneDNN layers keep packed."""
    tensors = {}
    for module in load_encoder(model, device="cpu").model.modules():
        for value in [
            *module._parameters.values(),
            *module._buffers.values(),
            *vars(module).values(),
        ]:
            if isinstance(value, torch.Tensor):
                tensors[id(value)] = value.numel() * value.element_size()
    return sum(tensors.values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="all-MiniLM-L6-v2")
    model = parser.parse_args().model
    pair = ("A cat sits on the mat.", "The cat sat on the mat.")
    kept = []  # every metric stays alive, as in one experiment with several metrics

    def step(label: str, metrics: list) -> None:
        gc.collect()
        before = _rss()
        for metric in metrics:
            metric.score(*pair)
        kept.extend(metrics)
        gc.collect()
        print(f"{label:<44} {(_rss() - before) / MIB:8.1f} MiB", flush=True)

    print(f"model {model}; resident memory grown by each step:")
    step("BERTScore, layer 6 (the first copy)", [BERTScore(model, track=False, device="cpu")])
    weights = _weight_bytes(model) / MIB
    print(f"{'  (the tensors of its model)':<44} {weights:8.1f} MiB")
    step(
        "3 more BERTScore instances at layer 6",
        [BERTScore(model, track=False, device="cpu") for _ in range(3)],
    )
    step(
        "BERTScore at each of layers 1 to 5",
        [BERTScore(model, num_layers=layer, track=False, device="cpu") for layer in range(1, 6)],
    )
    step("SemanticMatch (layer 6)", [SemanticMatch(model, track=False, device="cpu")])


if __name__ == "__main__":
    main()
