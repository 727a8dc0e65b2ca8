"""How well SemanticMatch and each of its levels agree with people, and what each setting buys.

For the STS Benchmark's train and dev splits (Cer et al., 2017) it prints Spearman's
correlation (x100) with the human scores, and for the contrastive set written for this
project (``benchmarks/data/contrastive/``: an anchor, a paraphrase of it and a variant
whose meaning is flipped by a negation, an antonym, a changed number or swapped roles) the
pairwise accuracy: the share of triples whose paraphrase scores strictly above the flipped
variant. Rows: plain cosine of the model's sentence embeddings, BERTScore F1 (same model),
each level, the paragraph level less the default flip penalties, the raw score, the default
SemanticMatch with and without its flip checks, the layered recipe's exact settings (its
weights, hard floor, snap and whole stop-word list), and a model calibrated on STS-B train
(its train figure is the mean held-out Spearman of its cross-validation).
Then the checks the layered score exists for: unrelated pairs (each output against the
reference of another pair, shuffled, seeded) near 0, identical texts exactly 1.0, every
score in [0, 1]; and the weights and curve that the calibration procedure chooses on
train under the condition that unrelated train pairs score at most 0.05 in the median,
beside the shipped defaults.

Sentence 1 plays the output and sentence 2 the reference; each engine is fitted on the
references of the split it scores (idf and paragraph baseline), as on a dataset's
references; on the contrastive set the anchor is the reference. Embeddings are computed
once per text and shared by every row.

    python benchmarks/semantic_validity.py                         # the shipped CC BY-SA part
    python benchmarks/semantic_validity.py --stsb PATH/stsbenchmark  # the full release
    python benchmarks/semantic_validity.py --model PATH_OR_HUB_ID    # another encoder
    python benchmarks/semantic_validity.py --fast                   # also the fast mode

``--fast`` also scores dev in the fast mode (``dtype="fast"``: bfloat16 where the hardware
has it) and prints how far its scores lie from float32's.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np
from numpy.typing import NDArray
from scipy.stats import spearmanr

from opik_semantic_metrics.bertscore.engine import BERTScoreEngine
from opik_semantic_metrics.compare.correlation import summary_level, system_level
from opik_semantic_metrics.semantic.calibration import final_scores, fit_combination
from opik_semantic_metrics.semantic.combine import (
    LEVEL_COLUMNS,
    RECIPE_FLOOR,
    RECIPE_SNAP,
    RECIPE_WEIGHTS,
    Combination,
)
from opik_semantic_metrics.semantic.engine import SemanticMatchEngine, SemanticMatchResult

DATA = Path(__file__).resolve().parent / "data"
STSB = DATA / "stsb"
CONTRASTIVE = DATA / "contrastive" / "triples.tsv"
RECIPE = Combination.create(
    RECIPE_WEIGHTS, RECIPE_FLOOR, RECIPE_SNAP, softness=0.0, negation_penalty=0.0,
    number_penalty=0.0, long_weights=None,
)  # fmt: skip
UNRELATED_MEDIAN = 0.05

Array = NDArray[np.float64]


@dataclass(frozen=True)
class Pairs:
    """Outputs, references and, per pair, a human score (STS-B) or a label."""

    outputs: list[str]
    references: list[str]
    gold: Array


def read_stsb(path: Path, limit: int | None) -> Pairs:
    """Sentence pairs and gold scores of an STS-B release file."""
    rows = [line.split("\t") for line in path.read_text(encoding="utf-8").splitlines()]
    rows = rows[:limit] if limit else rows
    return Pairs(
        [row[5] for row in rows],
        [row[6] for row in rows],
        np.array([float(row[4]) for row in rows]),
    )


def read_contrastive(path: Path) -> tuple[list[str], Pairs, Pairs]:
    """Categories, (paraphrase, anchor) pairs and (flipped, anchor) pairs."""
    lines = path.read_text(encoding="utf-8").splitlines()[1:]
    rows = [line.split("\t") for line in lines if line.strip()]
    anchors = [row[1] for row in rows]
    better = Pairs([row[2] for row in rows], anchors, np.ones(len(rows)))
    worse = Pairs([row[3] for row in rows], anchors, np.zeros(len(rows)))
    return [row[0] for row in rows], better, worse


def shuffled(pairs: Pairs, seed: int = 0) -> Pairs:
    """Each output against another pair's reference: pairs taken as unrelated."""
    order = np.random.default_rng(seed).permutation(len(pairs.references))
    order = np.where(order == np.arange(len(order)), np.roll(order, 1), order)
    return Pairs(pairs.outputs, [pairs.references[i] for i in order], pairs.gold)


def levels(results: list[SemanticMatchResult]) -> dict[str, Array]:
    """Every level of every result; pairs that were not scored count as 0."""

    def field(name: str) -> Array:
        values = [getattr(result, name) for result in results]
        return np.array([0.0 if value is None else value for value in values])

    table = {name: field(name) for name in (*LEVEL_COLUMNS, "paragraph_cosine")}
    table["levels"] = np.stack([table[name] for name in LEVEL_COLUMNS], axis=1)
    table["score"] = field("score")
    return table


def scores_of(
    table: dict[str, Array], combination: Combination, results: list[SemanticMatchResult]
) -> Array:
    """``combination``'s final scores of scored pairs; unscored pairs keep their score."""
    scored = np.array([result.status == "scored" for result in results])
    return np.where(scored, final_scores(combination, table["levels"]), table["score"])


def raw_sum(table: dict[str, Array], combination: Combination) -> Array:
    return combination.raw_array(table["levels"])


def rho(scores: Array, gold: Array) -> float:
    return 100 * float(spearmanr(scores, gold).statistic)


def accuracy(better: Array, worse: Array) -> float:
    return 100 * float(np.mean(better > worse))


# -- every kind of text side by side -------------------------------------------------------

#: REALSumm wraps each sentence in ``<t> ... </t>``.
_SENTENCE_TAGS = re.compile(r"</?t>")


@dataclass(frozen=True)
class Summaries:
    """Summaries of several systems on the same documents, with human scores."""

    outputs: list[str]
    references: list[str]
    documents: list[str]
    systems: list[str]
    gold: Array


def untagged(text: str) -> str:
    """A REALSumm text without its sentence tags, whitespace collapsed."""
    return " ".join(_SENTENCE_TAGS.sub(" ", text).split())


def read_sick(path: Path, limit: int | None) -> Pairs:
    """Sentence pairs and relatedness scores of a SICK file (tab-separated, a header)."""
    lines = path.read_text(encoding="utf-8").splitlines()[1:]
    rows = [line.split("\t") for line in lines if line.strip()]
    rows = rows[:limit] if limit else rows
    return Pairs(
        [row[1] for row in rows],
        [row[2] for row in rows],
        np.array([float(row[3]) for row in rows]),
    )


def read_realsumm(path: Path, limit: int | None) -> Summaries:
    """The rows of a REALSumm JSON-lines file; ``limit`` keeps the first documents."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    if limit:
        kept = set(list(dict.fromkeys(str(row["doc_id"]) for row in rows))[:limit])
        rows = [row for row in rows if str(row["doc_id"]) in kept]
    return Summaries(
        [untagged(row["summary"]) for row in rows],
        [untagged(row["reference"]) for row in rows],
        [str(row["doc_id"]) for row in rows],
        [str(row["system"]) for row in rows],
        np.array([float(row["litepyramid_recall"]) for row in rows]),
    )


def grid_of(summaries: Summaries, scores: Array) -> tuple[list[list[float]], list[list[float]]]:
    """Scores and human scores as ``grid[document][system]``, systems in sorted order."""
    systems = sorted(set(summaries.systems))
    at = {
        (d, s): i
        for i, (d, s) in enumerate(zip(summaries.documents, summaries.systems, strict=True))
    }
    documents = [
        d for d in dict.fromkeys(summaries.documents) if all((d, s) in at for s in systems)
    ]
    metric = [[float(scores[at[d, s]]) for s in systems] for d in documents]
    human = [[float(summaries.gold[at[d, s]]) for s in systems] for d in documents]
    return metric, human


def kinds_of_text(args: argparse.Namespace) -> None:
    """Every kind of text side by side: the default, each level, plain cosine, BERTScore F1."""
    started = time.perf_counter()
    sets: dict[str, Pairs | Summaries] = {}
    if args.stsb is not None:
        for split in ("train", "dev"):
            if split in args.skip:
                continue
            sets[f"STS-B {split}"] = read_stsb(args.stsb / f"sts-{split}.csv", args.limit)
    if args.sick is not None:
        for split in ("train", "trial"):
            if split in args.skip:
                continue
            sets[f"SICK {split}"] = read_sick(args.sick / f"SICK_{split}.txt", args.limit)
    for name, path in (("REALSumm-ext", args.realsumm_ext), ("REALSumm demo", args.realsumm_demo)):
        if path is not None:
            sets[name] = read_realsumm(path, args.limit)
    engine = SemanticMatchEngine(args.model, device="cpu")
    bertscore = None if args.no_bertscore else BERTScoreEngine(args.model, device="cpu")
    print(f"model {engine.model_name}; default {engine.combination}; cleaning {engine.cleaning}")

    rows = ("**default SemanticMatch**", "word level", "sentence level", "paragraph level",
            "plain cosine (raw texts)", "BERTScore F1 (same model, last layer)")  # fmt: skip
    figures: dict[str, dict[str, tuple[float, ...]]] = {row: {} for row in rows}
    medians: dict[str, float] = {}
    for name, data in sets.items():
        engine.fit(data.references)
        results = engine.score(data.outputs, data.references)
        table = levels(results)
        columns = {
            rows[0]: table["score"],
            rows[1]: table["word"],
            rows[2]: table["sentence"],
            rows[3]: table["paragraph"],
            rows[4]: table["paragraph_cosine"],
        }
        if bertscore is not None:
            found = bertscore.score(data.outputs, data.references)
            columns[rows[5]] = np.array([result.f1 for result in found])
        statuses = Counter(result.status for result in results)
        # Each output against another pair's reference (seeded): taken as unrelated.
        unrelated = shuffled(Pairs(data.outputs, data.references, data.gold))
        others = engine.score(unrelated.outputs, unrelated.references)
        medians[name] = float(np.median([result.score for result in others]))
        for row, scores in columns.items():
            if isinstance(data, Summaries):
                metric, human = grid_of(data, scores)
                figures[row][name] = (
                    summary_level(metric, human).pearson,
                    system_level(metric, human).kendall,
                )
            else:
                figures[row][name] = (rho(scores, data.gold),)
        if args.dump is not None:
            args.dump.mkdir(parents=True, exist_ok=True)
            stem = name.replace(" ", "_").lower()
            np.savez(args.dump / f"{stem}.npz", **{k: v for k, v in table.items()},
                     bertscore=columns.get(rows[5], np.zeros(0)),
                     status=np.array([result.status for result in results]))  # fmt: skip
        unscored = {status: n for status, n in statuses.items() if status != "scored"}
        print(f"{name}: {len(data.outputs)} pairs, unscored {unscored or 'none'} "
              f"({time.perf_counter() - started:.0f} s)")  # fmt: skip

    names = list(sets)
    heads = []
    for name in names:
        if isinstance(sets[name], Summaries):
            heads += [f"{name} summary Pearson", f"{name} system Kendall"]
        else:
            heads.append(name)
    print(
        "\nSpearman x100 (pairs); summary-level mean Pearson and system-level Kendall (summaries)"
    )
    print("| scores | " + " | ".join(heads) + " |")
    print("|---" + "|---:" * len(heads) + "|")
    for row in rows:
        if not figures[row]:
            continue
        cells = []
        for name in names:
            values = figures[row][name]
            cells += [f"{values[0]:.2f}"] if len(values) == 1 else [f"{v:.3f}" for v in values]
        print(f"| {row} | " + " | ".join(cells) + " |")
    print("\ndefault minus its paragraph level:")
    for name in names:
        default, paragraph = figures[rows[0]][name], figures[rows[3]][name]
        print(
            f"  {name}: "
            + ", ".join(f"{d - p:+.3f}" for d, p in zip(default, paragraph, strict=True))
        )
    print("\nmedian default score of unrelated pairs (each output against another's reference):")
    print("  " + ", ".join(f"{name} {median:.3f}" for name, median in medians.items()))
    print(f"\ntime: {time.perf_counter() - started:.0f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--stsb", type=Path, default=STSB, help="folder with sts-train.csv, sts-dev.csv"
    )
    parser.add_argument("--contrastive", type=Path, default=CONTRASTIVE)
    parser.add_argument(
        "--model", "--encoder", default="all-MiniLM-L6-v2", help="encoder: hub id or folder"
    )
    parser.add_argument("--limit", type=int, default=None, help="first N pairs of each split")
    parser.add_argument("--no-bertscore", action="store_true", help="leave BERTScore out")
    parser.add_argument("--fast", action="store_true", help="the fast mode against float32")
    parser.add_argument("--sick", type=Path, help="folder with SICK_train.txt, SICK_trial.txt")
    parser.add_argument("--realsumm-ext", type=Path, help="REALSumm extractive JSON lines")
    parser.add_argument("--realsumm-demo", type=Path, help="REALSumm three-system JSON lines")
    parser.add_argument(
        "--skip", nargs="*", default=(), choices=("train", "dev", "trial"),
        help="splits to leave out of the kinds-of-text table",
    )  # fmt: skip
    parser.add_argument("--dump", type=Path, help="write each set's levels there (.npz)")
    args = parser.parse_args()
    if args.sick or args.realsumm_ext or args.realsumm_demo:
        kinds_of_text(args)
        return
    started = time.perf_counter()

    splits = {
        name: read_stsb(args.stsb / f"sts-{name}.csv", args.limit) for name in ("train", "dev")
    }
    categories, better, worse = read_contrastive(args.contrastive)
    default = SemanticMatchEngine(args.model, device="cpu")
    recipe = SemanticMatchEngine(args.model, device="cpu", cleaning="all_stop_words")
    bertscore = None if args.no_bertscore else BERTScoreEngine(args.model, device="cpu")

    # Levels of every set, once per engine (each fitted on the set's references).
    data: dict[str, dict[str, object]] = {}
    sets = {**splits, "contrastive": better}
    for name, pairs in sets.items():
        entry: dict[str, object] = {}
        for engine_name, engine in (("default", default), ("recipe", recipe)):
            engine.fit(pairs.references)
            runs = {"pairs": pairs}
            if name == "contrastive":
                runs["worse"] = worse
            else:
                runs["unrelated"] = shuffled(pairs)
            for run, run_pairs in runs.items():
                results = engine.score(run_pairs.outputs, run_pairs.references)
                entry[f"{engine_name}/{run}"] = (levels(results), results)
        if bertscore is not None:
            runs = {"pairs": pairs, **({"worse": worse} if name == "contrastive" else {})}
            for run, run_pairs in runs.items():
                found = bertscore.score(run_pairs.outputs, run_pairs.references)
                entry[f"bertscore/{run}"] = np.array([result.f1 for result in found])
        data[name] = entry
        print(
            f"{name}: {len(pairs.outputs)} pairs levelled ({time.perf_counter() - started:.0f} s)"
        )

    # The calibrated model: calibrated on train with the default engine, as a user would.
    train = splits["train"]
    default.fit(train.references)
    report = default.calibrate(train.outputs, train.references, train.gold)
    calibrated = report.combination

    # What the calibration procedure chooses on train with the unrelated condition.
    train_table, _ = data["train"]["default/pairs"]  # type: ignore[misc]
    unrelated_table, _ = data["train"]["default/unrelated"]  # type: ignore[misc]
    chosen = fit_combination(
        train_table["levels"], train.gold, default.combination,
        unrelated_table["levels"], UNRELATED_MEDIAN,
    )  # fmt: skip

    Row = Callable[[str, str], Array]

    def layer(engine_name: str, field: str) -> Row:
        def scores(set_name: str, run: str) -> Array:
            table, _results = data[set_name][f"{engine_name}/{run}"]  # type: ignore[misc]
            return table[field]

        return scores

    def combined(engine_name: str, combination: Combination, raw: bool = False) -> Row:
        def scores(set_name: str, run: str) -> Array:
            table, results = data[set_name][f"{engine_name}/{run}"]  # type: ignore[misc]
            return raw_sum(table, combination) if raw else scores_of(table, combination, results)

        return scores

    def bert(set_name: str, run: str) -> Array:
        return data[set_name][f"bertscore/{run}"]  # type: ignore[return-value]

    engine_default = default.combination
    no_checks = dataclasses.replace(engine_default, negation_penalty=0.0, number_penalty=0.0)
    paragraph_checked = dataclasses.replace(
        engine_default, weights=(0.0, 0.0, 1.0), long_weights=None
    )
    rows: list[tuple[str, Row]] = [
        ("plain cosine (raw texts)", layer("default", "paragraph_cosine")),
        *([("BERTScore F1 (same model, last layer)", bert)] if bertscore else []),
        ("word level", layer("default", "word")),
        ("sentence level", layer("default", "sentence")),
        ("paragraph level", layer("default", "paragraph")),
        ("paragraph level less the default flip penalties",
         combined("default", paragraph_checked, raw=True)),
        ("raw score (default weights and penalties)",
         combined("default", engine_default, raw=True)),
        ("**default SemanticMatch**", layer("default", "score")),
        ("default without its flip checks (penalties 0)", combined("default", no_checks)),
        ("default, hard floor (softness 0)",
         combined("default", dataclasses.replace(engine_default, softness=0.0))),
        ("recipe's exact settings", combined("recipe", RECIPE)),
        ("recipe's word level (all stop words out)", layer("recipe", "word")),
        ("recipe's sentence level (all stop words out)", layer("recipe", "sentence")),
        ("calibrated on STS-B train", combined("default", calibrated)),
    ]  # fmt: skip

    print(
        f"\nmodel {default.model_name}; STS-B from {args.stsb}; "
        f"contrastive set {args.contrastive.name}"
    )
    print(f"default: cleaning {default.cleaning}, {engine_default}")
    print(f"calibrated on train: {calibrated}")
    print(
        f"calibration's cross-validation on train ({len(report.held_out_spearman)} folds): "
        f"held-out Spearman x100 {report.mean_held_out_spearman:.2f}, "
        f"default {report.mean_default_spearman:.2f}\n"
    )
    names = sorted(set(categories))
    header = "| scores | STS-B train | STS-B dev | contrastive | " + " | ".join(names) + " |"
    print(header)
    print("|---" + "|---:" * (header.count("|") - 2) + "|")
    table: dict[str, tuple[float, float, float]] = {}
    for name, row in rows:
        train_rho = rho(row("train", "pairs"), splits["train"].gold)
        if name == "calibrated on STS-B train":
            train_rho = report.mean_held_out_spearman
        dev_rho = rho(row("dev", "pairs"), splits["dev"].gold)
        up, down = row("contrastive", "pairs"), row("contrastive", "worse")
        overall = accuracy(up, down)
        per = [
            accuracy(
                up[[c == category for c in categories]], down[[c == category for c in categories]]
            )
            for category in names
        ]
        table[name] = (train_rho, dev_rho, overall)
        cells = " | ".join(f"{value:.1f}" for value in per)
        print(f"| {name} | {train_rho:.2f} | {dev_rho:.2f} | {overall:.1f} | {cells} |")

    print("\n(train of the calibrated row: mean held-out Spearman of its folds; contrastive: % of")
    print(f"{len(categories)} triples whose paraphrase scores strictly above the flipped variant)")
    best = {
        column: max(
            table[name][column] for name in ("word level", "sentence level", "paragraph level")
        )
        for column in range(3)
    }
    for column, label in enumerate(("train", "dev", "contrastive")):
        margin = table["**default SemanticMatch**"][column] - best[column]
        print(f"default minus its best single level on {label}: {margin:+.2f}")

    print("\nchecks:")
    for engine_name in ("default", "recipe"):
        scores = (
            layer("default", "score") if engine_name == "default" else combined("recipe", RECIPE)
        )
        for split in ("train", "dev"):
            real = scores(split, "pairs")
            print(
                f"  {engine_name}, {split}: of {len(real)} real pairs "
                f"{int((real == 0).sum())} score exactly 0 and {int((real == 1).sum())} exactly 1"
            )
            unrelated = scores(split, "unrelated")
            print(
                f"  {engine_name}, {split}: median score of {len(unrelated)} unrelated (shuffled) "
                f"pairs {np.median(unrelated):.4f}; share exactly 0: {np.mean(unrelated == 0):.3f}"
            )
    dev = splits["dev"]
    every = np.concatenate(
        [layer("default", "score")(s, r) for s in ("train", "dev") for r in ("pairs", "unrelated")]
    )
    print(f"  every default score in [0, 1]: {bool(((every >= 0) & (every <= 1)).all())}")
    default.fit(dev.references)
    texts = list(dict.fromkeys(dev.outputs + dev.references))
    identical = np.array([result.score for result in default.score(texts, texts)])
    print(
        f"  identical texts ({len(texts)} distinct dev sentences against themselves): "
        f"all exactly 1.0: {bool((identical == 1.0).all())}"
    )
    print(
        f"  chosen on train by the calibration procedure (unrelated median <= "
        f"{UNRELATED_MEDIAN}): {chosen}"
    )

    if args.fast:
        fast = SemanticMatchEngine(args.model, device="cpu", dtype="fast")
        fast.fit(dev.references)
        fast_final = np.array([result.score for result in fast.score(dev.outputs, dev.references)])
        float32 = layer("default", "score")("dev", "pairs")
        differences = np.abs(fast_final - float32)
        print(
            f"\nfast mode ({fast.encoder.dtype}): |fast - float32| largest "
            f"{differences.max():.1e}, "
            f"median {np.median(differences):.1e}; Spearman x100 {rho(fast_final, dev.gold):.2f} "
            f"(float32 {rho(float32, dev.gold):.2f})"
        )
    print(f"\ntime: {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    from cpu_header import print_cpu_header  # this folder: the script's own

    print_cpu_header()
    main()
