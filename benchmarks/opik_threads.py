"""BERTScore per item inside Opik, by the number of Opik's scoring threads.

Case (c) of ``bertscore_throughput.py`` (our ``BERTScore`` per item through
``opik.evaluate_on_dict_items`` on its 2,000 caption pairs, all-MiniLM-L6-v2 layer 6,
float32) with ``scoring_threads`` set to each of ``--threads`` (default 8, 16 and 32;
16 is Opik's default and the throughput benchmark's setting), each run in a fresh
process, interleaved over ``--rounds`` rounds. Each Opik thread has one item in flight
at a time, so the thread count bounds what the micro-batcher can coalesce: the mean
micro-batch is printed beside pairs/s.

    python benchmarks/opik_threads.py
    python benchmarks/opik_threads.py --threads 4 16 --rounds 1
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

from bertscore_throughput import _evaluate, _quiet, run_fresh, workload


def run(threads: int, pairs: int, device: str) -> dict[str, float]:
    """Score the workload through Opik with ``threads`` scoring threads, in this process."""
    from opik_semantic_metrics import BERTScore

    _quiet()
    references, system_a, _system_b = workload(pairs)
    metric = BERTScore(model="all-MiniLM-L6-v2", device=device, track=False)
    _evaluate(metric, ["A warm-up sentence."], ["A sentence to warm up."], threads)
    start = time.perf_counter()
    _evaluate(metric, system_a, references, threads)
    seconds = time.perf_counter() - start
    batcher = metric.engine.batcher
    return {"pairs_per_s": pairs / seconds, "mean_batch": batcher.items_run / batcher.batches_run}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, nargs="+", default=[8, 16, 32])
    parser.add_argument("--pairs", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--run", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.run is not None:
        print(json.dumps(run(args.run, args.pairs, args.device)))
        return
    runs: dict[int, list[dict[str, float]]] = {threads: [] for threads in args.threads}
    for round_index in range(args.rounds):
        for threads in args.threads:
            arguments = ["--run", str(threads), "--pairs", str(args.pairs), "--device", args.device]
            runs[threads].append(run_fresh(__file__, arguments))
            print(f"round {round_index + 1}: {threads} threads done", file=sys.stderr)
    print(
        f"\nBERTScore per item in Opik, {args.pairs} caption pairs, all-MiniLM-L6-v2 L6, "
        f"device={args.device}, {args.rounds} rounds\n"
    )
    print(f"{'scoring_threads':>15} {'pairs/s (median)':>17} {'mean micro-batch':>17}  per round")
    for threads, figures in runs.items():
        speeds = [figure["pairs_per_s"] for figure in figures]
        batch = statistics.median(figure["mean_batch"] for figure in figures)
        rounds = " ".join(f"{speed:.1f}" for speed in speeds)
        print(f"{threads:>15} {statistics.median(speeds):>17.1f} {batch:>17.1f}  {rounds}")


if __name__ == "__main__":
    from cpu_header import print_cpu_header  # this folder: the script's own

    print_cpu_header()
    main()
