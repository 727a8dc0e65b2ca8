"""One table of every measurement ``benchmarks/gpu_suite.sh`` ran, against its target.

Reads the JSON lines the suite's steps append to ``<results>/<step>.jsonl`` as each case
ends (``suite_log.py``): ``bertscore_throughput``, ``large_encoder``, ``comet_shapes`` and
``encoder_paths``. It prints one row per measurement: ours, the figure it is set against,
their ratio, the target (``docs/performance/gpu.md``) and the share of the measured
float32 matmul peak. A step cut short by its time limit gives the rows of the cases it
finished; a step that finished none is named at the end. Medians over rounds.

    python benchmarks/gpu_suite_table.py [--results benchmarks/results]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from suite_log import read

STEPS = ["bertscore_throughput", "large_encoder", "comet_shapes", "encoder_paths"]
NAN = float("nan")

Row = tuple[str, float, str, float, str, str]


def _lines(lines: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [line for line in lines if line.get("kind") == kind]


def _meta(lines: list[dict[str, Any]]) -> dict[str, Any]:
    metas = _lines(lines, "meta")
    return metas[-1] if metas else {}


def peak_gflops(every_step: dict[str, list[dict[str, Any]]]) -> float:
    """The best float32 matmul peak any step measured (NaN if none did)."""
    peaks = [line["gflops"] for lines in every_step.values() for line in _lines(lines, "peak")]
    return max(peaks) if peaks else NAN


def _share(gflop: float, speed: float, pairs: int, peak: float) -> str:
    share = 100 * gflop * speed / pairs / peak
    return f"{share:.0f}%" if share == share else "-"


def throughput_rows(lines: list[dict[str, Any]], peak: float) -> list[Row]:
    """Rows of ``bertscore_throughput.py``: its cases against bert_score's best call."""
    meta = _meta(lines)
    pairs = meta.get("pairs")
    if not pairs:
        return []
    runs: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for line in _lines(lines, "case"):
        if "missing" not in line:
            runs[line["case"]].append(line)
    work = _lines(lines, "work")
    gflop: dict[str, float] = work[-1]["gflop"] if work else {}

    def speed(case: str, key: str = "seconds") -> float:
        times = [run[key] for run in runs.get(case, []) if key in run]
        return pairs / statistics.median(times) if times else NAN

    anchor_name, anchor = "bert_score whole list, batch 64", speed("a")
    if runs.get("k"):
        sizes = [key.split("_")[1] for key in runs["k"][0] if key.startswith("seconds_")]
        tuned = {size: speed("k", f"seconds_{size}") for size in sizes}
        best = max(tuned, key=tuned.__getitem__)
        if not tuned[best] < anchor:
            anchor_name, anchor = f"bert_score whole list, best batch ({best})", tuned[best]
    floor = speed("h")
    float32 = speed("d")
    alone = "Opik's engine alone"
    cases = [
        ("d", "seconds", "score_batch, float32", anchor_name, anchor, ">= 1.3"),
        ("f", "seconds", "score_batch, fast mode", "score_batch, float32", float32, "> 1.0"),
        ("c", "seconds", "per item in Opik, 16 threads", alone, floor, ">= 0.8"),
        ("l", "seconds", "per item in Opik, prepare() timed", alone, floor, ">= 0.8"),
        ("c", "seconds_e", "per item in Opik, references cached", alone, floor, ">= 0.8"),
        ("a", "seconds", "bert_score whole list, batch 64", anchor_name, anchor, "-"),
    ]
    rows: list[Row] = []
    for case, key, label, against, value, target in cases:
        ours = speed(case, key)
        if ours == ours:
            work = gflop.get("e" if key == "seconds_e" else case, NAN)
            share = _share(work, ours, pairs, peak)
            rows.append((f"MiniLM captions: {label}", ours, against, ours / value, target, share))
    if runs.get("m"):
        for size in (64, 256):
            ours = speed("m", f"seconds_{size}")
            label = f"MiniLM captions: torchmetrics whole list, batch {size}"
            rows.append((label, ours, anchor_name, ours / anchor, "(peer)", ""))
    if floor == floor:
        rows.append(("MiniLM captions: Opik's engine alone", floor, "-", NAN, "-", "-"))
    return rows


def large_encoder_rows(lines: list[dict[str, Any]], peak: float) -> list[Row]:
    """Rows of ``large_encoder.py``: ours against bert_score's best batch size."""
    groups: dict[tuple[str, str], dict[str, list[dict[str, Any]]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for line in _lines(lines, "case"):
        groups[line["encoder"], line["workload"]][line["case"]].append(line)
    work = {(line["encoder"], line["workload"]): line for line in _lines(lines, "work")}
    rows: list[Row] = []
    for (encoder, workload), runs in groups.items():
        pairs = next(iter(runs.values()))[0]["pairs"]
        speed = {
            case: pairs / statistics.median(run["seconds"] for run in case_runs)
            for case, case_runs in runs.items()
        }
        theirs = [case for case in speed if case.startswith("bert_score/")]
        best = max(theirs, key=speed.__getitem__) if theirs else None
        name = f"{encoder} {workload}"
        gflop = work.get((encoder, workload), {}).get("gflop", NAN)
        for case, target in (("ours/float32", ">= 1.3"), ("ours/fast", "> ours/float32")):
            if case not in speed:
                continue
            against = best if case == "ours/float32" else "ours/float32"
            value = speed.get(against, NAN) if against else NAN
            share = _share(gflop, speed[case], pairs, peak)
            rows.append(
                (f"{name}: {case}", speed[case], against or "-", speed[case] / value, target, share)
            )
    return rows


def comet_rows(lines: list[dict[str, Any]]) -> list[Row]:
    """Rows of ``comet_shapes.py``: items/s of our COMET engine on each checkpoint."""
    groups: dict[str, dict[str, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for line in _lines(lines, "case"):
        groups[line["checkpoint"]][line["case"]].append(line)
    labels = {
        "d": ("score_batch, float32", None, "measured"),
        "f": ("score_batch, fast mode", "d", "> 1.0"),
        "c": ("per item in Opik, 16 threads", "d", "measured"),
    }
    rows: list[Row] = []
    for checkpoint, runs in groups.items():
        speed = {
            case: statistics.median(run["items"] / run["seconds"] for run in case_runs)
            for case, case_runs in runs.items()
        }
        for case, (label, against, target) in labels.items():
            if case in speed:
                value = speed.get(against, NAN) if against else NAN
                name = labels[against][0] if against else "-"
                row = (f"COMET {checkpoint}: {label} (items/s)", speed[case], name)
                rows.append((*row, speed[case] / value, target, ""))
    return rows


def encoder_paths_rows(lines: list[dict[str, Any]]) -> list[Row]:
    """Rows of ``encoder_paths.py``: each path's warm whole-list call."""
    pairs = _meta(lines).get("pairs")
    paths = {line["case"]: line["figures"] for line in _lines(lines, "case")}
    if not pairs or "bert_score" not in paths:
        return []
    best_anchor = max(pairs / entry["warm"] for entry in paths["bert_score"].values())
    rows: list[Row] = []
    for path, settings in paths.items():
        if path == "bert_score":
            continue
        for setting, entry in settings.items():
            speed, cold = pairs / entry["warm"], pairs / entry["cold"]
            label = f"encoder path {path} {setting} (cold {cold:.0f}/s)"
            rows.append((label, speed, "bert_score best warm", speed / best_anchor, ">= 1.3", ""))
    return rows


def table(results: Path) -> str:
    """The whole table as text."""
    every_step = {step: read(results, step) for step in STEPS}
    peak = peak_gflops(every_step)
    rows = throughput_rows(every_step["bertscore_throughput"], peak)
    rows += large_encoder_rows(every_step["large_encoder"], peak)
    rows += comet_rows(every_step["comet_shapes"])
    rows += encoder_paths_rows(every_step["encoder_paths"])
    out = []
    meta = _meta(every_step["bertscore_throughput"]) or _meta(every_step["encoder_paths"])
    if meta:
        out.append(
            f"device {meta.get('device')}; MiniLM: {meta.get('weights')} weights "
            "(timing does not depend on the weights' values); the roberta-large and XLM-R "
            "shapes have random weights"
        )
    out.append(f"float32 matmul peak: {peak:.0f} GFLOP/s")
    out.append(
        f"\n{'measurement':<62} {'pairs/s':>9} {'against':<40} {'ratio':>6} "
        f"{'target':>15} {'% peak':>6}"
    )
    for label, speed, against, ratio, target, share in rows:
        line = f"{label:<62} {speed:9.2f} {against:<40} {ratio:6.2f} {target:>15} {share:>6}"
        out.append(line.rstrip())
    counts = {step: len(_lines(lines, "case")) for step, lines in every_step.items()}
    out.append("cases recorded: " + ", ".join(f"{step} {count}" for step, count in counts.items()))
    missing = [step for step, count in counts.items() if count == 0]
    if missing:
        out.append("no results from: " + ", ".join(missing))
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=Path, default=Path(__file__).parent / "results")
    args = parser.parse_args()
    print(table(args.results))


if __name__ == "__main__":
    main()
