"""How well SemanticMatch and each of its levels rank STS-B sentence pairs like people do.

Prints Spearman and Pearson correlations (x100) with the human scores of the STS
Benchmark dev split (Cer et al., 2017) for:
plain cosine of the model's sentence embeddings (the published all-MiniLM-L6-v2 figure
is 86.72 Spearman x100), the word level with contextual and with isolated word-piece
vectors, the sentence and paragraph levels, and the combined score with the default
settings and with the seed's weights (0.4, 0.4, 0.2), each before and after floor and
snap. Sentence 1 plays the output and sentence 2 the reference; the engine is fitted on
the sentence-2 column (idf and paragraph baseline), as it would be on a dataset's
references.

    python benchmarks/semantic_validity.py                  # STS-B dev, a few minutes on 2 cores
    python benchmarks/semantic_validity.py --data PATH/sts-train.csv --grid
    python benchmarks/semantic_validity.py --fast

``--fast`` also fits and scores in the fast mode (``dtype="fast"``: bfloat16 where the
hardware has it) and prints how far its scores lie from float32's and how well they rank.
``--grid`` also prints the combined score's Spearman for every weight triple in steps of
0.1: the default weights (0.2, 0.2, 0.6) were chosen this way on the STS-B *train* split
(not shipped here; pass its path), then confirmed on dev.
"""

from __future__ import annotations

import argparse
import os
import time
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np
from scipy.stats import pearsonr, spearmanr

from opik_semantic_metrics.semantic.combine import SEED_WEIGHTS, Combination
from opik_semantic_metrics.semantic.engine import SemanticMatchEngine, SemanticMatchResult

#: STS-B is not shipped with the project: part of its text (the MSRpar and MSRvid
#: sentences) is under Microsoft's research licence, which does not allow redistribution.
#: The default is the copy in the team's shared folder beside the checkout; elsewhere,
#: download the original release (ixa2.si.ehu.eus/stswiki, "STS Benchmark") and pass
#: ``--data PATH/sts-dev.csv``.
DEV = Path(__file__).resolve().parents[2] / "shared" / "data" / "stsb" / "sts-dev.csv"
PUBLISHED_SPEARMAN = 86.72


@dataclass(frozen=True)
class Pairs:
    outputs: list[str]
    references: list[str]
    gold: np.ndarray


def read_stsb(path: Path, limit: int | None) -> Pairs:
    """Sentence pairs and gold scores of an STS-B release file."""
    rows = [line.split("\t") for line in path.read_text(encoding="utf-8").splitlines()]
    rows = rows[:limit] if limit else rows
    return Pairs(
        outputs=[row[5] for row in rows],
        references=[row[6] for row in rows],
        gold=np.array([float(row[4]) for row in rows]),
    )


def level(results: list[SemanticMatchResult], name: str) -> np.ndarray:
    """One level of every result; pairs that were not scored count as 0."""
    values = [getattr(result, name) for result in results]
    return np.array([0.0 if value is None else value for value in values])


def correlations(scores: np.ndarray, gold: np.ndarray) -> tuple[float, float]:
    return 100 * spearmanr(scores, gold).statistic, 100 * pearsonr(scores, gold).statistic


def combined(
    results: list[SemanticMatchResult], combination: Combination
) -> tuple[np.ndarray, np.ndarray]:
    """Final and raw scores of ``combination`` from the levels already computed."""
    raw = [
        combination.raw(result.word or 0.0, result.sentence or 0.0, result.paragraph or 0.0)
        for result in results
    ]
    return np.array([combination.final(value) for value in raw]), np.array(raw)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEV, help="an STS-B release file")
    parser.add_argument("--limit", type=int, default=None, help="first N pairs only")
    parser.add_argument("--grid", action="store_true", help="Spearman of every weight triple")
    parser.add_argument("--fast", action="store_true", help="the fast mode against float32")
    args = parser.parse_args()
    if not args.data.is_file():
        parser.error(f"no STS-B file at {args.data}: pass --data PATH/sts-dev.csv (see DEV)")
    pairs = read_stsb(args.data, args.limit)
    gold = pairs.gold

    start = time.perf_counter()
    contextual = SemanticMatchEngine("all-MiniLM-L6-v2", device="cpu")
    state = contextual.fit(pairs.references)
    results = contextual.score(pairs.outputs, pairs.references)
    contextual_seconds = time.perf_counter() - start
    start = time.perf_counter()
    isolated = SemanticMatchEngine("all-MiniLM-L6-v2", device="cpu", token_vectors="isolated")
    isolated.fit(pairs.references)
    isolated_results = isolated.score(pairs.outputs, pairs.references)
    isolated_seconds = time.perf_counter() - start

    default = contextual.combination
    seed = Combination.create(SEED_WEIGHTS, default.floor, default.snap)
    seed_final, seed_raw = combined(results, seed)
    rows = [
        ("plain cosine (raw texts)", level(results, "paragraph_cosine")),
        ("word level, contextual vectors", level(results, "word")),
        ("word level, isolated vectors", level(isolated_results, "word")),
        ("sentence level (cleaned texts)", level(results, "sentence")),
        ("paragraph level (raw texts, rescaled)", level(results, "paragraph")),
        ("combined, defaults (0.2/0.2/0.6, floor, snap)", level(results, "score")),
        ("combined, defaults, raw (no floor, no snap)", level(results, "raw_score")),
        ("combined, defaults, isolated vectors", level(isolated_results, "score")),
        ("combined, seed weights 0.4/0.4/0.2, floor, snap", seed_final),
        ("combined, seed weights, raw", seed_raw),
    ]
    print(f"{args.data.name}: {len(gold)} pairs; model {contextual.model_name}")
    print(
        f"fitted on {state.idf.num_documents} references; paragraph baseline "
        f"{state.paragraph_baseline:.4f} (mean cosine of {contextual.baseline_pairs} random pairs)"
    )
    unscored = sum(result.status != "scored" for result in results)
    print(f"pairs not scored (empty after cleaning): {unscored}")
    print(
        f"time: contextual {contextual_seconds:.0f} s (fit and score), isolated "
        f"{isolated_seconds:.0f} s (its piece vectors; text embeddings were cached)\n"
    )
    print("| configuration | Spearman x100 | Pearson x100 |")
    print("|---|---:|---:|")
    table = {}
    for name, scores in rows:
        spearman, pearson = correlations(scores, gold)
        table[name] = spearman
        print(f"| {name} | {spearman:.2f} | {pearson:.2f} |")

    final = level(results, "score")
    print(
        f"\ndefault scores: {int((final == 0).sum())} at 0 (raw at or below the floor), "
        f"{int((final == 1).sum())} at 1 (snapped)"
    )
    best_single = max(
        table["word level, contextual vectors"],
        table["sentence level (cleaned texts)"],
        table["paragraph level (raw texts, rescaled)"],
    )
    default_spearman = table["combined, defaults (0.2/0.2/0.6, floor, snap)"]
    verdict = "yes" if default_spearman >= best_single else "NO"
    print(f"defaults rank at least as well as the best single level ({best_single:.2f}): {verdict}")
    if args.data == DEV and args.limit is None:
        plain = table["plain cosine (raw texts)"]
        print(f"plain cosine {plain:.2f} vs published {PUBLISHED_SPEARMAN}: ", end="")
        print("reproduced" if round(plain, 2) == PUBLISHED_SPEARMAN else "DIFFERENT")

    if args.fast:
        fast = SemanticMatchEngine("all-MiniLM-L6-v2", device="cpu", dtype="fast")
        fast.fit(pairs.references)
        fast_final = level(fast.score(pairs.outputs, pairs.references), "score")
        differences = np.abs(fast_final - final)
        print(
            f"\nfast mode ({fast.encoder.dtype}): |fast - float32| largest "
            f"{differences.max():.1e}, median {np.median(differences):.1e}; standard deviation "
            f"of the float32 scores {final.std():.2f}; Spearman x100 "
            f"{correlations(fast_final, gold)[0]:.2f} (float32 {default_spearman:.2f})"
        )

    if args.grid:
        print("\nSpearman x100 of the combined score (floor, snap) per weight triple, best first:")
        grid = []
        for word_tenths in range(11):
            for sentence_tenths in range(11 - word_tenths):
                weights = (word_tenths, sentence_tenths, 10 - word_tenths - sentence_tenths)
                final_scores, _raw = combined(
                    results, Combination.create(weights, default.floor, default.snap)
                )
                grid.append((correlations(final_scores, gold)[0], weights))
        for rank, (spearman, weights) in enumerate(sorted(grid, reverse=True), start=1):
            word, sentence, paragraph = (tenths / 10 for tenths in weights)
            print(f"{rank:3d}. {word:.1f}/{sentence:.1f}/{paragraph:.1f}: {spearman:.2f}")


if __name__ == "__main__":
    main()
