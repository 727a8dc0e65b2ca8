"""Speed of AnswerMatch's model-free tiers, on short answers and on 1 MB ones.

    python benchmarks/answer_match_speed.py

Prints, for each kind of 1 MB output (prose, and texts made to stress each pass of the
normaliser: digits, commas, hyphens, dashes, percent signs, brackets, a long list), the
time of one ``AnswerMatcher.match`` against a short gold answer in each answer format,
as CPU time of this process (what the matching costs, unaffected by other processes on
the machine) and wall time; then matches per second on short answers.
"""

from __future__ import annotations

import argparse
import statistics
import time

from opik_semantic_metrics.answers.tiers import AnswerMatcher

MEGABYTE = 1_000_000
PROSE = (
    "The selling organization reports the direct emissions from generating the electricity "
    "under scope 1, and the purchasing organization reports 3,420 tCO2e under scope 2 "
    "(82% of the total, net-zero by 2050). "
)
TEXTS = {
    "prose": (PROSE * (MEGABYTE // len(PROSE) + 1))[:MEGABYTE],
    "digits": "1" * MEGABYTE,
    "commas": "1," * (MEGABYTE // 2),
    "hyphens": "a-" * (MEGABYTE // 2),
    "dashes": "-" * MEGABYTE,
    "percents": "%" * MEGABYTE,
    "brackets": "[" * (MEGABYTE // 2) + "]" * (MEGABYTE // 2),
    "long list": "['a', " * (MEGABYTE // 6) + "]",
}
SHORT_PAIRS = [
    ("82.0", "82%", "Float"),
    ('["SSP1", "SSP2", "SSP3"]', "['SSP1', 'SSP2', 'SSP3']", "List"),
    ("net-zero", "netzero", "Str"),
    ("12.80", "12.8", "Float"),
    ("Not answerable", "No", "Str"),
    ("SSP1, SSP2 and SSP3", "['SSP3', 'SSP2', 'SSP1']", "List"),
    ("25 degrees Celsius", "25°C", None),
    ("28%", "82%", "Float"),
]


def _timed(call) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    call()
    return time.process_time() - cpu, time.perf_counter() - wall


def main() -> None:
    # No options: the parser is there so that --help prints usage instead of running.
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args()
    matcher = AnswerMatcher(semantic="keywords")
    print("one match of a 1 MB output against a short gold (seconds: CPU / wall)")
    print(f"  {'output':10}" + "".join(f"{f!s:>16}" for f in (None, "Str", "Float", "List")))
    worst = 0.0
    for name, text in TEXTS.items():
        cells = []
        for answer_format in (None, "Str", "Float", "List"):
            cpu, wall = _timed(
                lambda text=text, answer_format=answer_format: matcher.match(
                    text, "['a', 'b']", answer_format=answer_format
                )
            )
            worst = max(worst, cpu)
            cells.append(f"{cpu:7.3f} / {wall:5.3f}")
        print(f"  {name:10}" + "".join(f"{cell:>16}" for cell in cells))
    print(f"slowest: {worst:.3f} s CPU")
    rounds = 2_000
    cpu_times = []
    for _ in range(5):
        cpu, _wall = _timed(
            lambda: [
                matcher.match(output, gold, answer_format=answer_format)
                for _ in range(rounds // len(SHORT_PAIRS))
                for output, gold, answer_format in SHORT_PAIRS
            ]
        )
        cpu_times.append(cpu)
    per_second = rounds / statistics.median(cpu_times)
    print(f"short answers: {per_second:,.0f} matches per second of CPU (median of 5 runs)")


if __name__ == "__main__":
    from cpu_header import print_cpu_header  # this folder: the script's own

    print_cpu_header()
    main()
