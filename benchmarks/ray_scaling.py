"""Ray scale-out: ``score_dataset`` against plain ``score_batch`` on the same pairs.

Measures, side by side in one run, BERTScore with the packaged all-MiniLM-L6-v2 (layer 6,
float32) on caption pairs (``bertscore_throughput.workload``, 20,000 by default):

  plain   ``BERTScore.score_batch`` on the whole list in one process (a fresh process
          each round, so that no embedding is cached from an earlier round);
  ray1    ``score_dataset`` with 1 actor;
  ray2    ``score_dataset`` with 2 actors;
  start   ``score_dataset`` on 8 pairs with 1 actor: what a run costs before its first
          pair (actor start, model load, Ray's scheduling), subtracted from ray1 and
          ray2 to give their sustained pairs/s.

The cases are interleaved over ``--rounds`` rounds (the order turned by one each round)
and medians are printed, with each case's ratio to ``plain``. ``plain`` times the call
only (its model is loaded before the clock starts); the Ray cases are timed end to end,
reading from the driver's memory and collecting every scored row included, and shown
also without ``start``. Ray's cost per block is estimated as the sustained time of ray1
beyond plain's, divided by its blocks.

    python benchmarks/ray_scaling.py                       # 20,000 pairs, 3 rounds
    python benchmarks/ray_scaling.py --pairs 4000 --rounds 3
    python benchmarks/ray_scaling.py --gpus-per-actor 1    # on a GPU machine
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bertscore_throughput import workload

CASES = ("plain", "ray1", "ray2", "start")


def _metric(device: str):
    from opik_semantic_metrics import BERTScore

    return BERTScore(model="all-MiniLM-L6-v2", device=device, track=False)


def plain_case(pairs: int, device: str) -> float:
    """Seconds of one whole-list ``score_batch`` call (in this fresh process)."""
    references, outputs, _ = workload(pairs)
    metric = _metric(device)
    metric.score_batch(outputs[:8], references[:8])  # warm-up, as the other cases load
    started = time.perf_counter()
    metric.score_batch(outputs, references)
    return time.perf_counter() - started


def ray_case(pairs: int, actors: int, gpus: float, batch_size: int) -> float:
    """Seconds of ``score_dataset`` end to end, every scored row collected."""
    from opik_semantic_metrics.distributed import score_dataset

    references, outputs, _ = workload(pairs)
    rows = [
        {"id": i, "output": output, "reference": reference}
        for i, (output, reference) in enumerate(zip(outputs, references, strict=True))
    ]
    metric = _metric("cpu")
    started = time.perf_counter()
    scored = score_dataset(
        rows, metric, num_actors=actors, gpus_per_actor=gpus, batch_size=batch_size
    )
    count = len(scored.take_all())
    seconds = time.perf_counter() - started
    assert count == len(rows)
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=256, help="rows per actor call")
    parser.add_argument("--gpus-per-actor", type=float, default=0.0)
    parser.add_argument("--plain", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    device = "cuda" if args.gpus_per_actor > 0 else "cpu"
    if args.plain:
        print(json.dumps({"seconds": plain_case(args.pairs, device)}))
        return

    import ray

    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    ray.init(include_dashboard=False, log_to_driver=False)
    ray.data.DataContext.get_current().enable_progress_bars = False
    cluster = ray.cluster_resources()
    seconds: dict[str, list[float]] = {case: [] for case in CASES}
    for round_index in range(args.rounds):
        order = CASES[round_index % len(CASES) :] + CASES[: round_index % len(CASES)]
        for case in order:
            if case == "plain":
                output = subprocess.run(
                    [sys.executable, __file__, "--plain", "--pairs", str(args.pairs),
                     "--gpus-per-actor", str(args.gpus_per_actor)],
                    check=True, capture_output=True, text=True,
                ).stdout  # fmt: skip
                value = json.loads(output.strip().splitlines()[-1])["seconds"]
            elif case == "start":
                value = ray_case(8, 1, args.gpus_per_actor, args.batch_size)
            else:
                value = ray_case(args.pairs, int(case[-1]), args.gpus_per_actor, args.batch_size)
            seconds[case].append(value)
            print(f"round {round_index + 1} {case}: {value:.2f} s", file=sys.stderr, flush=True)
    median = {case: statistics.median(values) for case, values in seconds.items()}
    plain_rate = args.pairs / median["plain"]
    print(
        f"\nRay scale-out, BERTScore all-MiniLM-L6-v2 L6 float32, {args.pairs} caption pairs, "
        f"{args.rounds} rounds (medians), cluster {cluster.get('CPU', 0):g} CPUs "
        f"{cluster.get('GPU', 0):g} GPUs, gpus_per_actor={args.gpus_per_actor:g}, "
        f"{args.batch_size} rows per call, load average {os.getloadavg()[0]:.1f}\n"
    )
    print(f"{'case':<34}{'seconds':>9}{'pairs/s':>10}{'x plain':>9}")
    print(
        f"{'plain score_batch, one process':<34}{median['plain']:>9.2f}{plain_rate:>10.1f}{1:>9.2f}"
    )
    for case, label in (("ray1", "score_dataset, 1 actor"), ("ray2", "score_dataset, 2 actors")):
        rate = args.pairs / median[case]
        sustained = args.pairs / max(median[case] - median["start"], 1e-9)
        end_to_end = f"{median[case]:>9.2f}{rate:>10.1f}{rate / plain_rate:>9.2f}"
        print(f"{label + ', end to end':<34}{end_to_end}")
        print(
            f"{label + ', sustained':<34}{median[case] - median['start']:>9.2f}"
            f"{sustained:>10.1f}{sustained / plain_rate:>9.2f}"
        )
    print(f"{'start (8 pairs, 1 actor)':<34}{median['start']:>9.2f}")
    blocks = -(-args.pairs // args.batch_size)
    per_block = (median["ray1"] - median["start"] - median["plain"]) / blocks
    print(f"\nRay's cost per block of {args.batch_size} rows (ray1 sustained - plain): "
          f"{per_block * 1000:.1f} ms over {blocks} blocks")  # fmt: skip
    print("raw seconds: " + json.dumps(seconds))


if __name__ == "__main__":
    main()
