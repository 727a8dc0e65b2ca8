"""Ray scale-out: ``score_dataset`` against plain ``score_batch`` on the same pairs.

Measures, side by side in one run, BERTScore with the packaged all-MiniLM-L6-v2 (layer 6,
float32) on caption pairs (``bertscore_throughput.workload``, 20,000 by default):

  plain   ``BERTScore.score_batch`` on the whole list in one process (a fresh process
          each round, so that no embedding is cached from an earlier round; its model is
          loaded, and one pair scored, before the clock starts);
  ray1    ``score_dataset`` with 1 actor;
  ray2    ``score_dataset`` with 2 actors.

A Ray case is timed end to end (actor start and model load included, every scored row
brought back to the driver) and, within the same run, sustained: the rows after the
first scored block, over the time from that block to the last. Its start is the end to
end time less what the sustained rate explains. Ray's cost per block is the sustained
time a block of ray1 takes beyond what plain takes for as many rows.

The cases are interleaved over ``--rounds`` rounds (the order turned by one each round)
and medians are printed, with each case's ratio to ``plain``.

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

from opik_semantic_metrics.distributed.scoring import DEFAULT_BATCH_SIZE

CASES = ("plain", "ray1", "ray2")


def _metric(device: str):
    from opik_semantic_metrics import BERTScore

    return BERTScore(model="all-MiniLM-L6-v2", device=device, track=False)


def plain_case(pairs: int, device: str) -> float:
    """Seconds of one whole-list ``score_batch`` call (in this fresh process)."""
    references, outputs, _ = workload(pairs)
    metric = _metric(device)
    metric.score_batch(outputs[:1], references[:1])
    started = time.perf_counter()
    metric.score_batch(outputs, references)
    return time.perf_counter() - started


def ray_case(pairs: int, actors: int, gpus: float, batch_size: int) -> dict[str, float]:
    """``score_dataset`` end to end, and its sustained rate after the first block."""
    from opik_semantic_metrics.distributed import score_dataset

    references, outputs, _ = workload(pairs)
    rows = [
        {"id": i, "output": output, "reference": reference}
        for i, (output, reference) in enumerate(zip(outputs, references, strict=True))
    ]
    metric = _metric("cpu")
    started = time.perf_counter()
    scored = score_dataset(
        rows,
        metric,
        num_actors=actors,
        gpus_per_actor=gpus,
        batch_size=batch_size,
        materialize=False,
    )
    first_rows = seen = 0
    first_at = 0.0
    for batch in scored.iter_batches(batch_format="pyarrow", batch_size=None):
        seen += batch.num_rows
        if not first_rows:
            first_rows, first_at = seen, time.perf_counter()
    ended = time.perf_counter()
    assert seen == len(rows)
    sustained = (seen - first_rows) / (ended - first_at) if ended > first_at else float("nan")
    return {"seconds": ended - started, "sustained": sustained}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--batch-size", type=int, default=DEFAULT_BATCH_SIZE, help="rows per actor call"
    )
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
    runs: dict[str, list[dict[str, float]]] = {case: [] for case in CASES}
    loads = []
    for round_index in range(args.rounds):
        order = CASES[round_index % len(CASES) :] + CASES[: round_index % len(CASES)]
        for case in order:
            if case == "plain":
                output = subprocess.run(
                    [sys.executable, __file__, "--plain", "--pairs", str(args.pairs),
                     "--gpus-per-actor", str(args.gpus_per_actor)],
                    check=True, capture_output=True, text=True,
                ).stdout  # fmt: skip
                run = json.loads(output.strip().splitlines()[-1])
            else:
                run = ray_case(args.pairs, int(case[-1]), args.gpus_per_actor, args.batch_size)
            runs[case].append(run)
            loads.append(os.getloadavg()[0])
            print(f"round {round_index + 1} {case}: {json.dumps(run)}", file=sys.stderr)

    def median(case: str, key: str) -> float:
        return statistics.median(run[key] for run in runs[case])

    plain_seconds = median("plain", "seconds")
    plain_rate = args.pairs / plain_seconds
    print(
        f"\nRay scale-out, BERTScore all-MiniLM-L6-v2 L6 float32, {args.pairs} caption pairs, "
        f"{args.rounds} rounds (medians), cluster {cluster.get('CPU', 0):g} CPUs "
        f"{cluster.get('GPU', 0):g} GPUs, gpus_per_actor={args.gpus_per_actor:g}, "
        f"{args.batch_size} rows per call; 1-minute load average {min(loads):.1f} to "
        f"{max(loads):.1f} over the run\n"
    )
    print(f"{'case':<36}{'seconds':>9}{'pairs/s':>10}{'x plain':>9}")
    print(
        f"{'plain score_batch, one process':<36}{plain_seconds:>9.2f}{plain_rate:>10.1f}{1:>9.2f}"
    )
    for case in ("ray1", "ray2"):
        label = f"score_dataset, {case[-1]} actor{'s' if case == 'ray2' else ''}"
        seconds = median(case, "seconds")
        rate = args.pairs / seconds
        sustained = median(case, "sustained")
        start = seconds - args.pairs / sustained
        print(f"{label + ', end to end':<36}{seconds:>9.2f}{rate:>10.1f}{rate / plain_rate:>9.2f}")
        print(f"{label + ', sustained':<36}{'':>9}{sustained:>10.1f}{sustained / plain_rate:>9.2f}")
        print(f"{label + ', start':<36}{start:>9.2f}")
    per_block = args.batch_size / median("ray1", "sustained") - args.batch_size / plain_rate
    print(f"\nRay's cost per block of {args.batch_size} rows (ray1 sustained - plain): "
          f"{per_block * 1000:.0f} ms")  # fmt: skip
    print("runs: " + json.dumps(runs))


if __name__ == "__main__":
    from cpu_header import print_cpu_header  # this folder: the script's own

    print_cpu_header()
    main()
