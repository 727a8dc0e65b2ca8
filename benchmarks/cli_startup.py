"""Start-up time of the ``opik-semantic-metrics`` command: ``--help`` and each subcommand's.

Each case is a fresh ``python -m opik_semantic_metrics ... --help`` (what the installed
script runs), timed from process start to exit; the cases are interleaved over
``--rounds`` rounds and the medians printed side by side, beside two references: a bare
interpreter and ``import opik`` (what every command paid while the package imported
Opik on start-up).

    python benchmarks/cli_startup.py
    python benchmarks/cli_startup.py --rounds 3
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[1] / "src"

CASES: dict[str, list[str]] = {
    "python (nothing)": ["-c", "pass"],
    "import opik": ["-c", "import opik"],
    "--help": ["-m", "opik_semantic_metrics", "--help"],
    **{
        f"{command} --help": ["-m", "opik_semantic_metrics", command, "--help"]
        for command in ("bert-score", "comet-score", "compare-results", "heatmap")
    },
}


def seconds(arguments: list[str]) -> float:
    """Wall time of one fresh interpreter running ``arguments``."""
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SOURCE), *sys.path[1:]])}
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, *arguments],
        check=True,
        stdout=subprocess.DEVNULL,
        env=environment,
    )
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds")
    args = parser.parse_args()
    times: dict[str, list[float]] = {name: [] for name in CASES}
    for _ in range(args.rounds):
        for name, arguments in CASES.items():
            times[name].append(seconds(arguments))
    width = max(map(len, CASES))
    print(f"{'case':<{width}}  median s  min s  ({args.rounds} rounds)")
    for name, values in times.items():
        print(f"{name:<{width}}  {statistics.median(values):8.2f}  {min(values):5.2f}")


if __name__ == "__main__":
    from cpu_header import print_cpu_header  # this folder: the script's own

    print_cpu_header()
    main()
