"""BERTScore per item inside Opik against bert_score's whole-list call, by model size.

``bertscore_throughput.py`` measures all-MiniLM-L6-v2, whose forward pass for a caption
pair takes a few milliseconds of CPU: then Opik's own per-item work (about 1 ms of
Python a pair, case (h) there) is a large share of a per-item run and competes with the
encoder for the cores. This benchmark asks how that share changes with the encoder's
size. On the same caption workload (``bertscore_throughput.workload``), each shape is
scored by:

  (a) bert_score ``BERTScorer.score`` on the whole list;
  (c) our ``BERTScore`` per item through ``opik.evaluate_on_dict_items``, 16 threads;
  (d) our ``score_batch`` on the whole list.

Shapes (``--shapes``):

  minilm  the packaged all-MiniLM-L6-v2 itself (6 layers, 384 wide), as in the
          throughput benchmark;
  base    BERT-base's shape (12 layers, 768 wide, 3,072 feed-forward), about 8x
          MiniLM's work a token;
  large   BERT-large's shape (24 layers, 1,024 wide, 4,096 feed-forward), the shape of
          roberta-large, bert_score's default English model: about 28x.

``base`` and ``large`` are randomly initialised BERT models (seed 0) with MiniLM's
WordPiece tokenizer, built once under ``benchmarks/results/`` (no download: the Hub is
out of reach here). Random weights make the scores meaningless as judgments but leave
the work of a forward pass as it is. Both libraries score the same model, and as a check
(after the clock) bert_score also scores the first ``--check`` pairs one at a time: (d)'s
largest F1 difference from those is printed, and so is (a)'s, which is bert_score's own
padding defect (its batched match lets padding beat negative token similarities; see
``bertscore/greedy.py``). Every case runs in a fresh process, the cases interleaved over
``--rounds`` rounds; medians are printed.

    python benchmarks/model_size.py                       # minilm and base, 3 rounds
    python benchmarks/model_size.py --shapes large --pairs 200 --rounds 3
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from bertscore_throughput import _evaluate, _minilm, _quiet, run_fresh, workload

RESULTS = Path(__file__).parent / "results"

#: Layers, width, feed-forward width and attention heads of each random shape.
SHAPES = {"base": (12, 768, 3072, 12), "large": (24, 1024, 4096, 16)}


def model_path(shape: str) -> tuple[str, int]:
    """Directory and layer count of ``shape``'s model, built on first use."""
    if shape == "minilm":
        return _minilm(), 6
    layers, width, inner, heads = SHAPES[shape]
    path = RESULTS / f"random-bert-{shape}"
    if not (path / "config.json").exists():
        import torch
        from transformers import AutoTokenizer, BertConfig, BertModel

        tokenizer = AutoTokenizer.from_pretrained(_minilm())
        config = BertConfig(
            vocab_size=tokenizer.vocab_size,
            hidden_size=width,
            num_hidden_layers=layers,
            num_attention_heads=heads,
            intermediate_size=inner,
        )
        torch.manual_seed(0)
        BertModel(config).save_pretrained(path)
        tokenizer.save_pretrained(path)
    return str(path), layers


def run_case(case: str, shape: str, pairs: int, check: int) -> dict[str, float | list[float]]:
    """Run one case on one shape in this process; returns its figures."""
    _quiet()
    path, layers = model_path(shape)
    references, system_a, _system_b = workload(pairs)
    warm_candidate, warm_reference = "A warm-up sentence.", "A sentence to warm up."
    if case == "a":
        from bert_score import BERTScorer

        scorer = BERTScorer(model_type=path, num_layers=layers, device="cpu")
        scorer.score([warm_candidate], [warm_reference])
        start = time.perf_counter()
        _precision, _recall, f1 = scorer.score(system_a, references)
        seconds = time.perf_counter() - start
        *_, f1_one_by_one = scorer.score(system_a[:check], references[:check], batch_size=1)
        return {"seconds": seconds, "f1": f1.tolist(), "f1_one_by_one": f1_one_by_one.tolist()}

    from opik_semantic_metrics import BERTScore

    metric = BERTScore(model=path, num_layers=layers, device="cpu", track=False)
    if case == "c":
        _evaluate(metric, [warm_candidate], [warm_reference])
        start = time.perf_counter()
        _evaluate(metric, system_a, references)
        return {"seconds": time.perf_counter() - start}
    metric.score_batch([warm_candidate], [warm_reference])
    start = time.perf_counter()
    scores = metric.score_batch(system_a, references)
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "f1": [item[0].value for item in scores]}


def _largest_difference(scores: list[float], one_by_one: list[float]) -> float:
    """Largest F1 difference over the first pairs, those scored one at a time too."""
    return max(abs(score - single) for score, single in zip(scores, one_by_one, strict=False))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shapes", nargs="+", default=["minilm", "base"])
    parser.add_argument("--pairs", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--check", type=int, default=100, help="pairs checked one at a time")
    parser.add_argument("--case", help=argparse.SUPPRESS)
    parser.add_argument("--shape", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.case:
        print(json.dumps(run_case(args.case, args.shape, args.pairs, args.check)))
        return
    for shape in args.shapes:
        model_path(shape)  # built once, before any clock starts
    runs = {(shape, case): [] for shape in args.shapes for case in "acd"}
    for round_index in range(args.rounds):
        for shape in args.shapes:
            for case in "acd":
                arguments = [
                    "--case", case, "--shape", shape,
                    "--pairs", str(args.pairs), "--check", str(args.check),
                ]  # fmt: skip
                runs[shape, case].append(run_fresh(__file__, arguments))
                print(f"round {round_index + 1}: {shape} ({case}) done", file=sys.stderr)

    print(f"\nBERTScore by model size, {args.pairs} caption pairs, float32, CPU")
    print(f"median of {args.rounds} rounds; per-round ratios to (a) in brackets\n")
    print(f"{'shape':<7} {'(a) pairs/s':>11} {'(c) pairs/s':>11} {'(d) pairs/s':>11}  ratios")
    for shape in args.shapes:
        speeds = {
            case: [args.pairs / run["seconds"] for run in runs[shape, case]] for case in "acd"
        }
        ratios = {
            case: [ours / anchor for ours, anchor in zip(speeds[case], speeds["a"], strict=True)]
            for case in "cd"
        }
        one_by_one = runs[shape, "a"][0]["f1_one_by_one"]
        ours = _largest_difference(runs[shape, "d"][0]["f1"], one_by_one)
        anchor = _largest_difference(runs[shape, "a"][0]["f1"], one_by_one)
        medians = {case: statistics.median(values) for case, values in speeds.items()}
        print(
            f"{shape:<7} {medians['a']:>11.1f} {medians['c']:>11.1f} {medians['d']:>11.1f}  "
            f"(c)/(a) {medians['c'] / medians['a']:.2f} "
            f"[{' '.join(f'{ratio:.2f}' for ratio in ratios['c'])}], "
            f"(d)/(a) {medians['d'] / medians['a']:.2f} "
            f"[{' '.join(f'{ratio:.2f}' for ratio in ratios['d'])}]"
        )
        print(
            f"{'':<7} largest F1 difference from bert_score one pair at a time "
            f"({len(one_by_one)} pairs): (d) {ours:.1e}, (a) {anchor:.1e}"
        )


if __name__ == "__main__":
    from cpu_header import print_cpu_header  # this folder: the script's own

    print_cpu_header()
    main()
