"""How much bert_score's batched scores move with padding, on the throughput workload.

bert_score's batched greedy match keeps padded positions in the similarity matrix at 0,
so where all of a token's real similarities are negative (MiniLM has many negative
cosines) the padding wins the max, and a pair's score depends on the longest text in
its batch. ``BERTScoreEngine`` never matches padding and reproduces bert_score with
``batch_size=1``. This prints, for the 2,000 caption pairs of systems A and B of
``bertscore_throughput.workload`` and all-MiniLM-L6-v2 layer 6, how far bert_score's
default whole-list call (``batch_size=64``) is from its own one-pair-at-a-time scores.

    python benchmarks/bert_score_padding.py
"""

from __future__ import annotations

import argparse

from bertscore_throughput import _minilm, _quiet, workload


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=2000)
    args = parser.parse_args()
    from bert_score import BERTScorer

    _quiet()
    references, system_a, system_b = workload(args.pairs)
    scorer = BERTScorer(model_type=_minilm(), num_layers=6, device="cpu")
    print(
        f"bert_score F1, whole list (batch_size=64) against one pair at a time, {args.pairs} pairs"
    )
    for name, candidates in (("A", system_a), ("B", system_b)):
        *_, batched = scorer.score(candidates, references)
        *_, one_by_one = scorer.score(candidates, references, batch_size=1)
        difference = (batched - one_by_one).abs()
        print(
            f"system {name}: largest difference {difference.max().item():.1e}, "
            f"pairs that differ by more than 1e-5: {int((difference > 1e-5).sum())}"
        )


if __name__ == "__main__":
    from cpu_header import print_cpu_header  # this folder: the script's own

    print_cpu_header()
    main()
