"""One table of every measurement ``benchmarks/gpu_suite.sh`` ran, against its target.

Reads the JSON files the suite's benchmarks write into ``benchmarks/results/``
(``bertscore_throughput.json``, ``encoder_paths.json``, ``large_encoder.json``) and prints
one row per measurement: ours, the figure it is set against, their ratio, the target
(``docs/performance/gpu.md``) and the share of the measured float32 matmul peak. A file
missing (its step failed or timed out) leaves its rows out and says so.

    python benchmarks/gpu_suite_table.py [--results benchmarks/results]
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

Row = tuple[str, float, str, float, str, str]


def _load(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def throughput_rows(data: dict) -> list[Row]:
    """Rows of ``bertscore_throughput.py``: its cases against bert_score's best call."""
    speed = data["pairs_per_s"]
    pairs = data["pairs"]
    anchor_name, anchor = "bert_score whole list, batch 64", speed.get("a", float("nan"))
    runs_k = data["runs"].get("k")
    if runs_k:
        sizes = [key.split("_")[1] for key in runs_k[0] if key.startswith("seconds_")]
        tuned = {
            size: pairs / statistics.median(run[f"seconds_{size}"] for run in runs_k)
            for size in sizes
        }
        best = max(tuned, key=tuned.__getitem__)
        anchor_name, anchor = f"bert_score whole list, best batch ({best})", tuned[best]
    floor = speed.get("h", float("nan"))
    rows: list[Row] = []
    peak, gflop = data["peak_gflops"], data["gflop"]

    def share(case: str) -> str:
        return f"{100 * gflop[case] * speed[case] / pairs / peak:.0f}%"

    labels = {
        "d": ("score_batch, float32", anchor_name, anchor, ">= 1.3"),
        "f": ("score_batch, fast mode", "score_batch, float32", speed.get("d"), "> 1.0"),
        "c": ("per item in Opik, 16 threads", "Opik's engine alone", floor, ">= 0.8"),
        "l": ("per item in Opik, prepare() timed", "Opik's engine alone", floor, ">= 0.8"),
        "e": ("per item in Opik, references cached", "Opik's engine alone", floor, ">= 0.8"),
    }
    for case, (label, against, value, target) in labels.items():
        if case in speed and value:
            ratio = speed[case] / value
            rows.append(
                (f"MiniLM captions: {label}", speed[case], against, ratio, target, share(case))
            )
    if "l" in speed:
        # The CPU target of per item with prepare() is set against bert_score's whole list.
        ratio = speed["l"] / anchor
        label = "MiniLM captions: per item in Opik, prepare() timed"
        rows.append((label, speed["l"], anchor_name, ratio, ">= 1.2 (CPU)", share("l")))
    if "h" in speed:
        rows.append(("MiniLM captions: Opik's engine alone", floor, "-", float("nan"), "-", "-"))
    return rows


def encoder_paths_rows(data: dict, pairs: int | None) -> list[Row]:
    """Rows of ``encoder_paths.py``: each path's best warm whole-list call."""
    if pairs is None:
        return []
    best_anchor = max(pairs / entry["warm"] for entry in data["bert_score"].values())
    rows: list[Row] = []
    for path, settings in data.items():
        if path == "bert_score":
            continue
        for setting, entry in settings.items():
            speed = pairs / entry["warm"]
            cold = pairs / entry["cold"]
            rows.append(
                (
                    f"encoder path {path} {setting} (cold {cold:.0f}/s)",
                    speed,
                    "bert_score best warm",
                    speed / best_anchor,
                    ">= 1.3",
                    "",
                )
            )
    return rows


def large_encoder_rows(data: dict) -> list[Row]:
    """Rows of ``large_encoder.py``: ours against bert_score's best batch size."""
    rows: list[Row] = []
    peak = data["peak_gflops"]
    for row in data["rows"]:
        pairs = row["pairs"]
        speed = {
            case: pairs / statistics.median(run["seconds"] for run in runs)
            for case, runs in row["runs"].items()
        }
        best = max((case for case in speed if case.startswith("bert_score/")), key=speed.get)
        name = f"{row['encoder']} {row['workload']}"
        for case in ("ours/float32", "ours/fast"):
            if case in speed:
                share = 100 * row["gflop"] * speed[case] / pairs / peak
                target = ">= 1.3" if case == "ours/float32" else "> ours/float32"
                rows.append(
                    (
                        f"{name}: {case}",
                        speed[case],
                        best,
                        speed[case] / speed[best],
                        target,
                        f"{share:.0f}%",
                    )
                )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=Path, default=Path(__file__).parent / "results")
    parser.add_argument("--pairs", type=int, help="encoder_paths' pairs (default: throughput's)")
    args = parser.parse_args()
    rows: list[Row] = []
    missing = []
    throughput = _load(args.results / "bertscore_throughput.json")
    if throughput is not None:
        rows += throughput_rows(throughput)
    else:
        missing.append("bertscore_throughput")
    paths = _load(args.results / "encoder_paths.json")
    if paths is not None:
        rows += encoder_paths_rows(paths, args.pairs or (throughput or {}).get("pairs"))
    else:
        missing.append("encoder_paths")
    large = _load(args.results / "large_encoder.json")
    if large is not None:
        rows += large_encoder_rows(large)
    else:
        missing.append("large_encoder")
    print(
        f"\n{'measurement':<58} {'pairs/s':>9} {'against':<36} {'ratio':>6} "
        f"{'target':>15} {'% peak':>6}"
    )
    for label, speed, against, ratio, target, share in rows:
        print(f"{label:<58} {speed:9.2f} {against:<36} {ratio:6.2f} {target:>15} {share:>6}")
    if missing:
        print("no results from: " + ", ".join(missing))


if __name__ == "__main__":
    main()
