"""A caller's own ``torch.set_num_threads``: CPU throughput of ``score_batch`` with and without it.

The engines run a list's batches side by side on single-threaded CPU workers. A caller's
``torch.set_num_threads(n)`` fixes MKL's thread count for every thread; workers that lower
only OpenMP's count then run each matrix product on every core at once. This benchmark
times BERTScore's ``score_batch`` on the packaged MiniLM in fresh processes, alternating
a process that leaves the count alone with one that sets it to the count PyTorch chose
anyway, and prints the medians side by side::

    python benchmarks/caller_threads.py --pairs 3000 --rounds 3
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import textwrap

CHILD = textwrap.dedent(
    """
    import json, sys, time, torch
    if sys.argv[1] == "set":
        torch.set_num_threads(torch.get_num_threads())
    from opik_semantic_metrics import BERTScore

    pairs = int(sys.argv[2])
    subjects = ["man", "woman", "dog", "child", "cyclist", "group of friends", "chef"]
    actions = ["walks along", "rides a bike down", "waits beside", "paints a picture of"]
    places = ["a busy street", "the quiet harbour", "an old stone bridge", "the market square"]
    candidates = [
        f"A {subjects[i % 7]} {actions[i % 4]} {places[(i // 4) % 4]} on day {i}."
        for i in range(pairs)
    ]
    references = [
        f"On day {i} a {subjects[(i + 1) % 7]} {actions[(i + 2) % 4]} {places[i % 4]}."
        for i in range(pairs)
    ]
    metric = BERTScore(model="all-MiniLM-L6-v2", track=False)
    metric.score_batch(["A warm-up."] * 64, ["The warm-up."] * 64)
    start = time.perf_counter()
    metric.score_batch(candidates, references)
    print(json.dumps({"seconds": time.perf_counter() - start, "threads": torch.get_num_threads()}))
    """
)


def one_run(mode: str, pairs: int) -> dict[str, float]:
    environment = dict(os.environ, HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    finished = subprocess.run(
        [sys.executable, "-c", CHILD, mode, str(pairs)],
        capture_output=True,
        text=True,
        check=True,
        env=environment,
    )
    result: dict[str, float] = json.loads(finished.stdout.strip().splitlines()[-1])
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    seconds: dict[str, list[float]] = {"default": [], "set": []}
    threads = 0.0
    for _ in range(args.rounds):
        for mode in seconds:
            result = one_run(mode, args.pairs)
            seconds[mode].append(result["seconds"])
            threads = result["threads"]
    default = args.pairs / statistics.median(seconds["default"])
    explicit = args.pairs / statistics.median(seconds["set"])
    print(f"BERTScore score_batch, {args.pairs} pairs, medians of {args.rounds} alternated runs")
    print("| caller | pairs/s | x default |")
    print("|---|---:|---:|")
    print(f"| leaves the thread count alone | {default:.1f} | 1.00 |")
    ratio = explicit / default
    print(f"| torch.set_num_threads({threads:.0f}) first | {explicit:.1f} | {ratio:.2f} |")
    return 0


if __name__ == "__main__":
    from cpu_header import print_cpu_header  # this folder: the script's own

    print_cpu_header()
    sys.exit(main())
