"""BERTScore per item inside Opik, with and without length bucketing of forward passes.

Case (c) of ``bertscore_throughput.py`` (our ``BERTScore`` per item through
``opik.evaluate_on_dict_items``, 16 scoring threads, all-MiniLM-L6-v2 layer 6, float32)
on a workload of mixed lengths: its 2,000 caption pairs, of which a share (``--long``,
default a quarter) are made paragraph-long by joining each text with the next 3-7 of
its side. Two arms, each run in a fresh process, alternated over ``--rounds`` rounds:

- ``bucketed``: as shipped (``batching/lengths.py``: a micro-batch's texts go through
  the encoder in batches whose lengths are within a factor of two);
- ``one-pass``: the same with the length cut switched off (``MAX_LENGTH_RATIO`` set to
  infinity), so each micro-batch's texts go through in one padded pass.

Besides pairs/s and the mean micro-batch, it prints how much padding the forward passes
carried: rows of the padded layout per real token, less one (the layers of BERT-family
models run on real tokens only, but attention sees the padded layout; other models run
padded throughout).

    python benchmarks/length_bucketing.py
    python benchmarks/length_bucketing.py --long 0 --rounds 1
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import sys
import time

from bertscore_throughput import _evaluate, _quiet, run_fresh, workload

ARMS = ("bucketed", "one-pass")


def mixed_workload(pairs: int, long_share: float, seed: int = 0) -> tuple[list[str], list[str]]:
    """References and outputs: caption pairs, ``long_share`` of them paragraph-long."""
    references, outputs, _system_b = workload(pairs)
    rng = random.Random(seed)
    mixed_references, mixed_outputs = [], []
    for index in range(pairs):
        if rng.random() < long_share:
            joined = rng.randint(4, 8)
            picked = [(index + offset) % pairs for offset in range(joined)]
            mixed_references.append(" ".join(references[i] for i in picked))
            mixed_outputs.append(" ".join(outputs[i] for i in picked))
        else:
            mixed_references.append(references[index])
            mixed_outputs.append(outputs[index])
    return mixed_references, mixed_outputs


def run(arm: str, pairs: int, long_share: float, device: str) -> dict[str, float]:
    """Score the mixed workload through Opik in this process, in one arm."""
    from opik_semantic_metrics import BERTScore

    _quiet()
    references, outputs = mixed_workload(pairs, long_share)
    metric = BERTScore(model="all-MiniLM-L6-v2", device=device, track=False)
    _evaluate(metric, ["A warm-up sentence."], ["A sentence to warm up."])
    if arm == "one-pass":
        from opik_semantic_metrics.batching import lengths

        lengths.MAX_LENGTH_RATIO = math.inf
    engine = metric.engine
    forward_lengths: list[list[int]] = []
    forward_batch = engine.loaded.forward_batch

    def recorded(id_lists, all_layers):
        forward_lengths.append([len(ids) for ids in id_lists])
        return forward_batch(id_lists, all_layers)

    engine.loaded.forward_batch = recorded
    batcher = engine.batcher
    batches_before, items_before = batcher.batches_run, batcher.items_run
    start = time.perf_counter()
    _evaluate(metric, outputs, references)
    seconds = time.perf_counter() - start
    padded_rows = sum(len(batch) * max(batch) for batch in forward_lengths)
    real_rows = sum(sum(batch) for batch in forward_lengths)
    return {
        "pairs_per_s": pairs / seconds,
        "mean_batch": (batcher.items_run - items_before) / (batcher.batches_run - batches_before),
        "padding": padded_rows / real_rows - 1,
        "passes_per_batch": len(forward_lengths) / (batcher.batches_run - batches_before),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=2000)
    parser.add_argument("--long", type=float, default=0.25, help="share of paragraph pairs")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--run", choices=ARMS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.run is not None:
        print(json.dumps(run(args.run, args.pairs, args.long, args.device)))
        return
    runs: dict[str, list[dict[str, float]]] = {arm: [] for arm in ARMS}
    for round_index in range(args.rounds):
        # Alternate which arm goes first, so neither always meets a warmer machine.
        for arm in ARMS if round_index % 2 == 0 else ARMS[::-1]:
            arguments = [
                "--run", arm, "--pairs", str(args.pairs), "--long", str(args.long),
                "--device", args.device,
            ]  # fmt: skip
            runs[arm].append(run_fresh(__file__, arguments))
            print(f"round {round_index + 1}: {arm} done", file=sys.stderr)
    print(
        f"\nBERTScore per item in Opik (16 threads), {args.pairs} pairs, {args.long:.0%} "
        f"paragraph-long, all-MiniLM-L6-v2 L6, device={args.device}, {args.rounds} rounds\n"
    )
    print(
        f"{'arm':>9} {'pairs/s (median)':>17} {'mean micro-batch':>17} {'passes':>7} "
        f"{'padding':>8}  per round"
    )
    for arm, figures in runs.items():
        speeds = [figure["pairs_per_s"] for figure in figures]
        batch = statistics.median(figure["mean_batch"] for figure in figures)
        passes = statistics.median(figure["passes_per_batch"] for figure in figures)
        padding = statistics.median(figure["padding"] for figure in figures)
        rounds = " ".join(f"{speed:.1f}" for speed in speeds)
        print(
            f"{arm:>9} {statistics.median(speeds):>17.1f} {batch:>17.1f} {passes:>7.2f} "
            f"{padding:>8.0%}  {rounds}"
        )
    ratios = [
        bucketed["pairs_per_s"] / one_pass["pairs_per_s"]
        for bucketed, one_pass in zip(runs["bucketed"], runs["one-pass"], strict=True)
    ]
    print(
        f"\nbucketed / one-pass: {statistics.median(ratios):.2f}x (median; per round "
        + " ".join(f"{ratio:.2f}" for ratio in ratios)
        + ")"
    )


if __name__ == "__main__":
    from cpu_header import print_cpu_header  # this folder: the script's own

    print_cpu_header()
    main()
