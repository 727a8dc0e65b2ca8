"""Correct and wrong verbose answers on the same topics, against AnswerMatch's semantic
threshold for BERTScore F1 with MiniLM.

The threshold was first set midway between the two groups below (0.50); it is now 0.55,
chosen on LLM answers judged by people (``answer_match_judged.py --split dev``; see
``docs/design/answer-match-threshold.md``), and still parts the two groups.

Prints BERTScore F1 (all-MiniLM-L6-v2, layer 6, no idf, not rescaled: the offline model)
for short gold answers against verbose outputs that say the same thing and against
outputs on the same topic that say something else, marks the pairs that AnswerMatch's
semantic guards (negation, gold numbers) stop before the score is looked at, and prints
the threshold midway between the lowest correct F1 and the highest wrong F1 that
reaches the threshold test.

    python benchmarks/answer_match_threshold.py
    python benchmarks/answer_match_threshold.py --pairs my_pairs.tsv

``--pairs`` scores your own pairs instead of the built-in 20: a UTF-8 file, one pair a
line, three tab-separated fields: the gold answer, the model's output, and ``1`` if the
output is a correct answer or ``0`` if not.

The first correct pair is the seed analysis's Scope 1/Scope 2 example; the other pairs
were written for this script in the style of MMESGBench's ``Str`` questions (ESG report
QA): a concise gold and a model's verbose answer. They are the project's own text.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from opik_semantic_metrics.answers.tiers import AnswerMatcher
from opik_semantic_metrics.bertscore.engine import BERTScoreEngine, BERTScoreResult
from opik_semantic_metrics.cli.common import CliError, read_lines

#: Exit status of a malformed --pairs file, as argparse's for bad usage.
USAGE_ERROR = 2
LABELS = {"1": "correct", "0": "wrong"}

# (gold, output that says the same thing)
CORRECT = [
    (
        "Seller reports Scope 1, buyer reports Scope 2",
        "The selling organization reports the direct emissions from generating the "
        "electricity under scope 1, and the purchasing organization reports the emissions "
        "associated with the purchased electricity under scope 2.",
    ),
    (
        "Reduce absolute emissions by 50% by 2030",
        "The company commits to cutting its absolute greenhouse gas emissions in half "
        "by the year 2030.",
    ),
    (
        "The board's sustainability committee",
        "Oversight of climate risks sits with the sustainability committee of the board.",
    ),
    (
        "Physical risks and transition risks",
        "The report distinguishes physical climate risks from transition risks.",
    ),
    (
        "Renewable electricity procurement",
        "It plans to buy renewable electricity through power purchase agreements.",
    ),
    (
        "Water scarcity in manufacturing regions",
        "The main water risk is scarcity of water in the regions where its factories are.",
    ),
    (
        "Employee training on human rights",
        "The company trains its employees on human rights issues.",
    ),
    (
        "Emissions from purchased goods and services",
        "The largest Scope 3 category is emissions from the goods and services it purchases.",
    ),
    (
        "Carbon pricing increases operating costs",
        "A carbon price would raise the company's operating costs.",
    ),
    (
        "Independent limited assurance",
        "The emissions data received limited assurance from an independent auditor.",
    ),
]
# (gold, output on the same topic that is wrong)
WRONG = [
    (
        "Seller reports Scope 1, buyer reports Scope 2",
        "Both the seller and the buyer report the electricity emissions under scope 3.",
    ),
    (
        "Reduce absolute emissions by 50% by 2030",
        "The company aims to plant trees to offset its travel emissions.",
    ),
    (
        "The board's sustainability committee",
        "The chief financial officer is responsible for the annual budget.",
    ),
    (
        "Physical risks and transition risks",
        "The report lists the number of employees in each country.",
    ),
    (
        "Renewable electricity procurement",
        "It plans to reduce business travel by using video calls.",
    ),
    (
        "Water scarcity in manufacturing regions",
        "The main risk is a shortage of skilled engineers.",
    ),
    (
        "Employee training on human rights",
        "The company sponsors a local football team.",
    ),
    (
        "Emissions from purchased goods and services",
        "The largest category is emissions from employee commuting.",
    ),
    (
        "Carbon pricing increases operating costs",
        "Carbon pricing has no effect on the company's revenue.",
    ),
    (
        "Independent limited assurance",
        "The data was not checked by anyone outside the company.",
    ),
]


def read_pairs(path: str) -> dict[str, list[tuple[str, str]]]:
    """The pairs of a ``gold<TAB>output<TAB>1 or 0`` file, as correct and wrong groups.

    Raises:
        CliError: The file is unreadable, not UTF-8 or empty, or a line is malformed.
    """
    groups: dict[str, list[tuple[str, str]]] = {"correct": [], "wrong": []}
    for number, line in enumerate(read_lines(path), start=1):
        fields = line.split("\t")
        if len(fields) != 3:
            raise CliError(
                f"{path} line {number}: expected 3 tab-separated fields (gold, output, "
                f"1 or 0), got {len(fields)}"
            )
        gold, output, label = fields
        if label not in LABELS:
            raise CliError(f"{path} line {number}: expected the label 1 or 0, got {label!r}")
        groups[LABELS[label]].append((gold, output))
    return groups


def _parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--pairs",
        metavar="FILE",
        help="your own pairs instead of the built-in 20: one a line, gold<TAB>output<TAB>1 or 0 "
        "(1: the output is correct)",
    )
    return parser.parse_args()


def _separation(tested: dict[str, list[float]]) -> list[str]:
    """The summary lines: the two F1s that bound a threshold, and the one midway."""
    missing = [label for label, scores in tested.items() if not scores]
    if missing:
        # A file of your own may have no pair of a group left once the guards have run.
        return [f"no {' or '.join(missing)} pair reaches the threshold test: nothing to separate"]
    lowest_correct, highest_wrong = min(tested["correct"]), max(tested["wrong"])
    bounds = (
        f"lowest correct F1 {lowest_correct:.3f}; highest wrong F1 past the guards "
        f"{highest_wrong:.3f}"
    )
    if lowest_correct > highest_wrong:
        return [bounds, f"midway threshold: {(lowest_correct + highest_wrong) / 2:.3f}"]
    return [bounds, "the two groups overlap: no threshold separates them"]


def _results_by_pair(
    groups: dict[str, list[tuple[str, str]]],
) -> dict[tuple[str, str], BERTScoreResult]:
    """BERTScore of each ``(gold, output)`` pair, the output scored against the gold."""
    engine = BERTScoreEngine("all-MiniLM-L6-v2", device="cpu")
    scored = {}
    for pairs in groups.values():
        results = engine.score([output for _, output in pairs], [gold for gold, _ in pairs])
        scored.update(zip(pairs, results, strict=True))
    return scored


def _semantic_score(result: BERTScoreResult) -> float | None:
    """F1, or ``None`` where a word was read only as [UNK]: the AnswerMatch metric
    makes no semantic match then (``semantic_unreadable``), so neither does this test."""
    return None if result.candidate_unknown_tokens or result.reference_unknown_tokens else result.f1


def main() -> None:
    args = _parse_args()
    try:
        groups = read_pairs(args.pairs) if args.pairs else {"correct": CORRECT, "wrong": WRONG}
    except CliError as error:
        print(f"{Path(sys.argv[0]).name}: error: {error}", file=sys.stderr)
        raise SystemExit(USAGE_ERROR) from None
    scored = _results_by_pair(groups)
    f1 = {pair: result.f1 for pair, result in scored.items()}
    # A scorer that looks the F1 up: the matcher calls it only for pairs that pass its guards.
    matcher = AnswerMatcher(
        semantic=lambda output, gold: _semantic_score(scored[(gold, output)]),
        semantic_threshold=-1.0,
    )
    print("BERTScore F1 (all-MiniLM-L6-v2 L6), gold vs verbose output")
    tested: dict[str, list[float]] = {"correct": [], "wrong": []}
    for label, pairs in groups.items():
        for gold, output in pairs:
            result = matcher.match(output, gold, answer_format="Str")
            guarded = result.semantic_score is None
            if not guarded:
                tested[label].append(f1[(gold, output)])
            note = f"stopped by a guard ({', '.join(result.flags)})" if guarded else ""
            print(f"  {label:7}  F1 {f1[(gold, output)]:.3f}  {gold[:45]:45}  {note}")
    print("\n".join(_separation(tested)))


if __name__ == "__main__":
    from cpu_header import print_cpu_header  # this folder: the script's own

    print_cpu_header()
    main()
