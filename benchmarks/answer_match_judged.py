"""AnswerMatch against people's judgments of QA answers, beside the usual baselines.

    python benchmarks/answer_match_judged.py DIR [--semantic] [--split all|dev|check]
        [--show-errors N] [--system NAME]

``DIR`` holds judged answers in EVOUNA's format (Wang et al., "Evaluating Open-QA
Evaluation", NeurIPS 2023): JSON files, each a list of questions with ``question``,
``golden_answer`` (the acceptable answers, separated by ``/``), ``answer_<system>`` and
``judge_<system>`` (true where people judged the answer correct), and ``improper`` (a
flawed question, left out as the paper does). Every file in ``DIR`` is read; its systems
are found from the ``answer_`` keys.

For each system, and for all answers together, it prints the share of answers people
judged right and, for each grader, agreement with the people (accuracy), false accepts
(the share of wrong answers graded right) and false rejects (the share of right answers
graded wrong):

- ``exact``: the output equals one gold answer after SQuAD's normalisation (lower case,
  no punctuation, no articles, single spaces);
- ``contained``: one gold answer, so normalised, is a substring of the normalised output;
- ``f1>=0.5``: SQuAD's token F1 against the best gold answer reaches 0.5;
- ``AnswerMatch``: the default metric, the golds given as acceptable answers;
- ``+semantic`` (with ``--semantic``): AnswerMatch with its semantic tier on the packaged
  all-MiniLM-L6-v2 (BERTScore F1 at the calibrated threshold).

With ``--similarity``, also the agreement of BERTScore F1 and of SemanticMatch alone, each
at its best threshold on the same answers.

Then AnswerMatch's answers per second, by the wall clock and per CPU second of the process
(what the matching costs, whatever else the machine runs). ``--split``
halves the questions by a hash of their text: ``dev`` and ``check`` are disjoint and the
same in every run, so a rule chosen on one half can be checked on the other.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import string
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from opik_semantic_metrics.answers.tiers import AnswerItem, AnswerMatcher

GOLD_SEPARATOR = "/"


@dataclass(frozen=True)
class Judged:
    """One answer and the people's judgment of it."""

    system: str
    question: str
    golds: tuple[str, ...]
    answer: str
    correct: bool


def read_judged(folder: Path, split: str = "all") -> list[Judged]:
    """Every judged answer of the EVOUNA-format files in ``folder``."""
    files = sorted(folder.glob("*.json"))
    if not files:
        raise SystemExit(f"{folder}: no .json file of judged answers")
    items: list[Judged] = []
    for path in files:
        for question in json.loads(path.read_text(encoding="utf-8")):
            if question.get("improper"):
                continue
            if split != "all" and question_half(question["question"]) != split:
                continue
            golds = tuple(
                gold.strip()
                for gold in str(question["golden_answer"]).split(GOLD_SEPARATOR)
                if gold.strip()
            )
            for key in question:
                if not key.startswith("answer_"):
                    continue
                system = key.removeprefix("answer_")
                judged = question.get(f"judge_{system}")
                if judged is None:
                    continue
                items.append(
                    Judged(system, question["question"], golds, str(question[key]), bool(judged))
                )
    return items


def question_half(question: str) -> str:
    """``dev`` or ``check``, fixed by the question's text."""
    return "dev" if hashlib.sha256(question.encode()).digest()[0] % 2 == 0 else "check"


# --- the baselines, as the QA literature computes them (SQuAD's evaluation script) ----

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = set(string.punctuation)


def squad_normal(text: str) -> str:
    text = "".join(char for char in text.lower() if char not in _PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def exact(item: Judged) -> bool:
    answer = squad_normal(item.answer)
    return any(answer == squad_normal(gold) for gold in item.golds)


def contained(item: Judged) -> bool:
    answer = squad_normal(item.answer)
    return any(squad_normal(gold) and squad_normal(gold) in answer for gold in item.golds)


def token_f1(answer: str, gold: str) -> float:
    answer_tokens, gold_tokens = squad_normal(answer).split(), squad_normal(gold).split()
    common = sum((Counter(answer_tokens) & Counter(gold_tokens)).values())
    if not common:
        return 0.0
    precision, recall = common / len(answer_tokens), common / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


def f1_half(item: Judged) -> bool:
    return max(token_f1(item.answer, gold) for gold in item.golds) >= 0.5


def answer_match_grades(matcher: AnswerMatcher, items: list[Judged]) -> list[bool]:
    """AnswerMatch's verdicts, in one batch (the semantic tier's pairs scored together)."""
    answers = [AnswerItem(item.answer, item.golds, None, item.question) for item in items]
    return [result.matched for result in matcher.match_many(answers)]


@dataclass
class Tally:
    right: int = 0
    wrong: int = 0
    agree: int = 0
    false_accepts: int = 0
    false_rejects: int = 0

    def add(self, correct: bool, graded: bool) -> None:
        self.right += correct
        self.wrong += not correct
        self.agree += correct == graded
        self.false_accepts += graded and not correct
        self.false_rejects += correct and not graded

    def cells(self) -> str:
        total = self.right + self.wrong
        accuracy = 100 * self.agree / total if total else float("nan")
        accepts = 100 * self.false_accepts / self.wrong if self.wrong else float("nan")
        rejects = 100 * self.false_rejects / self.right if self.right else float("nan")
        return f"{accuracy:5.1f} {accepts:5.1f} {rejects:5.1f}"


def evaluate(
    items: list[Judged], grades: dict[str, list[bool]]
) -> tuple[dict[tuple[str, str], Tally], dict[str, list[tuple[Judged, bool]]]]:
    tallies: dict[tuple[str, str], Tally] = {}
    disagreements: dict[str, list[tuple[Judged, bool]]] = {name: [] for name in grades}
    for index, item in enumerate(items):
        for name, graded_items in grades.items():
            graded = graded_items[index]
            for system in (item.system, "all"):
                tallies.setdefault((system, name), Tally()).add(item.correct, graded)
            if graded != item.correct:
                disagreements[name].append((item, graded))
    return tallies, disagreements


def table(
    items: list[Judged], tallies: dict[tuple[str, str], Tally], names: list[str]
) -> Iterator[str]:
    systems = [*sorted({item.system for item in items}), "all"]
    header = f"{'system':<10} {'answers':>7} {'right%':>6}"
    for name in names:
        header += f" | {name + ' (agree FA FR)':<26}"
    yield header
    for system in systems:
        first = tallies[(system, names[0])]
        total = first.right + first.wrong
        line = f"{system:<10} {total:>7} {100 * first.right / total:>6.1f}"
        for name in names:
            line += f" | {tallies[(system, name)].cells():<26}"
        yield line


#: Aliases per question scored by the similarity metrics (a few questions have dozens).
SIMILARITY_ALIASES = 3


def similarity_thresholds(items: list[Judged]) -> Iterator[str]:
    """Agreement of a similarity score alone, thresholded: the highest score of each
    answer over its question's first aliases, at the threshold (0.00 to 1.00, by 0.01)
    that agrees best on these very answers, an optimistic figure."""
    from opik_semantic_metrics.metrics.bertscore import BERTScore
    from opik_semantic_metrics.metrics.semantic_match import SemanticMatch

    pairs = [(k, item.answer, gold) for k, item in enumerate(items) for gold in item.golds]
    pairs = [
        (k, answer, gold)
        for k, answer, gold in pairs
        if items[k].golds.index(gold) < SIMILARITY_ALIASES
    ]
    metrics = {
        "BERTScore F1": BERTScore(model="all-MiniLM-L6-v2", track=False),
        "SemanticMatch": SemanticMatch(track=False),
    }
    for name, metric in metrics.items():
        results = metric.score_batch([a for _, a, _ in pairs], [g for _, _, g in pairs])
        best = [-1.0] * len(items)
        for (k, _, _), result in zip(pairs, results, strict=True):
            value = (result[0] if isinstance(result, list) else result).value
            best[k] = max(best[k], value)
        agreements = []
        for step in range(101):
            threshold = step / 100
            agree = sum(
                (score >= threshold) == item.correct
                for score, item in zip(best, items, strict=True)
            )
            agreements.append((agree / len(items), threshold))
        agreement, threshold = max(agreements)
        yield (
            f"{name} alone (MiniLM), best threshold {threshold:.2f}: "
            f"{100 * agreement:.1f}% agreement"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, help="folder of EVOUNA-format JSON files")
    parser.add_argument("--semantic", action="store_true", help="also AnswerMatch + MiniLM")
    parser.add_argument(
        "--similarity",
        action="store_true",
        help="also a threshold on BERTScore F1 and on SemanticMatch alone (the best one)",
    )
    parser.add_argument("--split", choices=("all", "dev", "check"), default="all")
    parser.add_argument("--show-errors", type=int, default=0, metavar="N")
    parser.add_argument("--errors-of", default="AnswerMatch", metavar="GRADER")
    parser.add_argument("--system", default=None, help="only this system's answers")
    arguments = parser.parse_args(argv)
    items = read_judged(arguments.folder, arguments.split)
    if arguments.system:
        items = [item for item in items if item.system == arguments.system]
    matcher = AnswerMatcher()
    baselines: dict[str, Callable[[Judged], bool]] = {
        "exact": exact,
        "contained": contained,
        "f1>=0.5": f1_half,
    }
    grades = {name: [grade(item) for item in items] for name, grade in baselines.items()}
    started, cpu_started = time.perf_counter(), time.process_time()
    grades["AnswerMatch"] = answer_match_grades(matcher, items)
    rule_seconds = time.perf_counter() - started
    rule_cpu_seconds = time.process_time() - cpu_started
    semantic_seconds = None
    if arguments.semantic:
        from opik_semantic_metrics.metrics.answer_match import AnswerMatch
        from opik_semantic_metrics.metrics.bertscore import BERTScore

        metric = AnswerMatch(semantic=BERTScore(model="all-MiniLM-L6-v2", track=False), track=False)
        started = time.perf_counter()
        grades["+semantic"] = answer_match_grades(metric.matcher, items)
        semantic_seconds = time.perf_counter() - started
    print(f"{arguments.folder} ({arguments.split}): {len(items)} judged answers")
    print("agree: % of answers graded as people did; FA: % of wrong answers graded right;")
    print("FR: % of right answers graded wrong")
    tallies, disagreements = evaluate(items, grades)
    for line in table(items, tallies, list(grades)):
        print(line)
    print(
        f"AnswerMatch: {len(items) / rule_seconds:,.0f} answers/s wall clock, "
        f"{len(items) / rule_cpu_seconds:,.0f} per CPU second (one process)"
    )
    if semantic_seconds is not None:
        print(f"+semantic: {len(items) / semantic_seconds:,.0f} answers/s (wall clock)")
    if arguments.similarity:
        for line in similarity_thresholds(items):
            print(line)
    if arguments.show_errors:
        wrong = disagreements[arguments.errors_of]
        for item, graded in wrong[: arguments.show_errors]:
            kind = "FA" if graded else "FR"
            result = matcher.match_any(item.answer, item.golds, question=item.question)
            print(f"--- {kind} [{item.system}] {item.question}")
            print(f"    gold: {' / '.join(item.golds)[:200]}")
            print(f"    answer: {item.answer[:400]!r}")
            print(f"    {result.method} {result.flags} {result.reason[:160]}")
    return 0


if __name__ == "__main__":
    from cpu_header import print_cpu_header  # this folder: the script's own

    print_cpu_header()
    sys.exit(main())
