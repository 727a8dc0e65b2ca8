"""AnswerMatch's accuracy on systematic format variations of QA gold answers.

    python benchmarks/answer_match_variations.py [--half dev|held_out|both] [--show-errors N]

Reads the gold answers of ``benchmarks/data/qa_golds.jsonl`` (124 real-looking ESG-report
QA items: places, names, terms, numbers with units, numbers a question puts in millions,
years, dates, yes/no, lists, longer phrases, not-answerable questions) and writes, for
each, variations whose label follows from how they are made: correct phrasings (casing,
punctuation, an article, markup, the answer inside a sentence, number and unit formats,
list orders and syntaxes, freely phrased abstentions for a not-answerable question) and
incorrect ones (the answer negated, another answer, two answers, a partial or padded
list, a wrong number or scale, an abstention on a question that has an answer, an answer
on one that has none). No label comes from the matcher.

The golds are split once by id: odd ids are the development half (the rules were
written looking at it), even ids the held-out half. The script prints the accuracy of the
default ``AnswerMatcher`` on each half, by variation kind, and how many negated answers it
accepted (the goal: none).
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from opik_semantic_metrics.answers.tiers import AnswerMatcher

GOLDS = Path(__file__).parent / "data" / "qa_golds.jsonl"

TEMPLATES = (
    "The answer is {}.",
    "Based on the report, the answer is {}.",
    "According to the document: {}.",
    "Answer: {}",
)
NEGATIONS = (
    "It is not {}.",
    "Not {}.",
    "{} is not correct.",
    "The answer is not {}.",
    "{} is incorrect.",
    "{}? No.",
    "{}. That is wrong.",
)
TWO_ANSWERS = ("{} or {}", "Either {} or {}.", "{} and {}", "It could be {} or {}.")
ABSTENTIONS = (
    "Not answerable",
    "The report does not say.",
    "This cannot be determined from the document.",
    "The document provides no information on this.",
    "The provided context does not contain this information.",
    "I could not find this in the report.",
    "The answer is not stated in the document.",
    "There is no mention of this in the report.",
    "Unknown.",
    "N/A",
    "The document doesn't specify this.",
    "Insufficient information to answer.",
    "I don't know.",
    "The text does not mention it.",
)
SCALES = {"thousand": 10**3, "million": 10**6, "billion": 10**9}


@dataclass(frozen=True)
class Case:
    gold_id: int
    kind: str  # the gold's kind
    variation: str
    output: str
    gold: str
    answer_format: str
    question: str
    correct: bool


def _case(gold: dict, variation: str, output: str, correct: bool) -> Case:
    return Case(
        gold["id"],
        gold["kind"],
        variation,
        output,
        gold["gold"],
        gold["format"],
        gold["question"],
        correct,
    )


def _thousands(digits: str) -> str:
    """'3420' -> '3,420' (the whole part only)."""
    whole, _, fraction = digits.partition(".")
    grouped = f"{int(whole):,}"
    return grouped + ("." + fraction if fraction else "")


def _number_forms(value: str) -> list[str]:
    """Other ways to write the same number: a trailing zero, with and without
    thousands separators."""
    forms = [value + ("0" if "." in value else ".0")]
    if float(value) >= 1000:
        forms += [_thousands(value), value]
    return forms


def _with_unit(number: str, unit: str) -> str:
    if unit in ("%", "°C"):
        return number + unit
    if unit == "$":
        return "$" + number
    if unit == "$million":
        return f"${number} million"
    return f"{number} {unit}".strip()


def _text_variations(gold: dict) -> Iterator[Case]:
    answer = gold["gold"]
    yield _case(gold, "exact", answer, True)
    yield _case(gold, "case", answer.upper(), True)
    yield _case(gold, "case", answer.lower(), True)
    yield _case(gold, "punctuation", answer + ".", True)
    yield _case(gold, "punctuation", f'"{answer}"', True)
    if gold["kind"] in ("place", "name", "term"):
        yield _case(gold, "article", "The " + answer, True)
    if "-" in answer:
        yield _case(gold, "hyphenation", answer.replace("-", " "), True)
        yield _case(gold, "hyphenation", answer.replace("-", ""), True)
    yield _case(gold, "markup", f"**{answer}**", True)
    yield _case(gold, "markup", f"<b>{answer}</b>", True)
    if "frame" in gold:
        yield _case(gold, "verbose", gold["frame"].format(answer), True)
    for template in TEMPLATES:
        yield _case(gold, "verbose", template.format(answer), True)
    yield _case(gold, "verbose", f"Answer: **{answer}**", True)
    yield _case(gold, "verbose", f"{answer} (see page 12).", True)
    yield _case(gold, "verbose", f"The answer is {answer}, as stated in the 2022 report.", True)
    for template in NEGATIONS:
        yield _case(gold, "negated", template.format(answer), False)
    yield _case(gold, "negated", f"No, not {answer}.", False)
    yield _case(gold, "negated", f"It is definitely not {answer}.", False)
    yield _case(gold, "negated", f"Not {answer}, but {gold['wrong']}.", False)
    wrong = gold["wrong"]
    yield _case(gold, "two_answers", f"{answer}/{wrong}", False)
    yield _case(gold, "other_answer", wrong, False)
    if "frame" in gold:
        yield _case(gold, "other_answer", gold["frame"].format(wrong), False)
    for template in TWO_ANSWERS:
        yield _case(gold, "two_answers", template.format(answer, wrong), False)
    yield _case(gold, "two_answers", f"{wrong} or {answer}", False)
    yield _case(gold, "abstention_on_answer", "The report does not say.", False)


def _number_variations(gold: dict) -> Iterator[Case]:
    value, unit = gold["value"], gold["unit"]
    answer = gold["gold"]
    yield _case(gold, "exact", answer, True)
    for number in _number_forms(value):
        yield _case(gold, "number_format", _with_unit(number, unit), True)
    if unit == "%":
        yield _case(gold, "unit_format", f"{value} percent", True)
        yield _case(gold, "unit_format", f"{value} %", True)
    if unit and unit not in ("$", "$million", "million m3"):
        yield _case(gold, "unit_dropped", value, True)
    if unit not in ("", "%", "°C", "$", "$million"):
        yield _case(gold, "unit_format", f"{value}{unit}", True)
    yield _case(gold, "markup", f"<b>{answer}</b>", True)
    yield _case(gold, "markup", f"**{answer}**", True)
    yield _case(gold, "verbose", gold["frame"].format(answer), True)
    yield _case(
        gold,
        "verbose",
        f"In 2022, {gold['frame'][0].lower()}{gold['frame'][1:]}".format(answer),
        True,
    )
    for template in TEMPLATES:
        yield _case(gold, "verbose", template.format(answer), True)
    yield _case(gold, "verbose", f"Approximately {answer}, according to page 7.", True)
    yield _case(gold, "verbose", f"{answer}. This figure covers fiscal year 2022.", True)
    for template in NEGATIONS:
        yield _case(gold, "negated", template.format(answer), False)
    yield _case(gold, "negated", f"No, it is not {answer}.", False)
    yield _case(gold, "negated", f"It isn't {answer}.", False)
    wrong = gold["wrong"]
    yield _case(gold, "negated", f"Not {answer}, but {wrong}.", False)
    yield _case(gold, "wrong_number", wrong, False)
    yield _case(gold, "wrong_number", gold["frame"].format(wrong), False)
    for template in TWO_ANSWERS:
        yield _case(gold, "two_answers", template.format(answer, wrong), False)
    yield _case(gold, "two_answers", f"It rose from {wrong} to {answer}.", False)
    yield _case(gold, "bounded", f"more than {answer}", False)
    yield _case(gold, "bounded", f"up to {answer}", False)
    yield _case(gold, "abstention_on_answer", "This cannot be determined from the document.", False)


def _scaled_variations(gold: dict) -> Iterator[Case]:
    value, scale, unit = gold["value"], gold["scale"], gold["unit"]
    answer = gold["gold"]
    full = f"{float(value) * SCALES[scale]:,.0f}"
    yield _case(gold, "exact", answer, True)
    yield _case(gold, "number_format", value + ("0" if "." in value else ".0"), True)
    yield _case(gold, "scale_word", f"{value} {scale}", True)
    yield _case(gold, "scale_word", f"{value} {scale} {unit}".strip(), True)
    yield _case(gold, "scale_word", full, True)
    yield _case(gold, "verbose", gold["frame"].format(f"{value} {scale} {unit}".strip()), True)
    yield _case(gold, "verbose", f"The answer is {value} {scale}.", True)
    for template in NEGATIONS[:3]:
        yield _case(gold, "negated", template.format(f"{value} {scale}"), False)
    other_scale = "billion" if scale != "billion" else "million"
    yield _case(gold, "wrong_scale", f"{value} {other_scale}", False)
    yield _case(gold, "wrong_number", f"{gold['wrong']} {scale}", False)
    yield _case(gold, "wrong_number", gold["wrong"], False)
    yield _case(gold, "two_answers", f"{value} or {gold['wrong']} {scale}", False)


def _yesno_variations(gold: dict) -> Iterator[Case]:
    answer = gold["gold"]
    other = "No" if answer == "Yes" else "Yes"
    yield _case(gold, "exact", answer, True)
    yield _case(gold, "case", answer.upper(), True)
    yield _case(gold, "case", answer.lower() + ".", True)
    yield _case(gold, "markup", f"**{answer}**", True)
    yield _case(gold, "verbose", f"{answer}, {gold['frame']}.", True)
    yield _case(gold, "verbose", f"{answer}. According to the report, {gold['frame']}.", True)
    yield _case(gold, "other_answer", other, False)
    yield _case(gold, "other_answer", f"{other}.", False)
    yield _case(gold, "two_answers", f"{answer} and {other.lower()}", False)
    yield _case(gold, "two_answers", f"{answer} or {other.lower()}", False)
    yield _case(gold, "abstention_on_answer", "The report does not say.", False)
    yield _case(gold, "abstention_on_answer", "No information is given in the document.", False)


def _list_variations(gold: dict) -> Iterator[Case]:
    items = gold["items"]
    numeric = all(re.fullmatch(r"\d+", item) for item in items)

    def python(values: list[str]) -> str:
        return "[" + ", ".join(v if numeric else repr(v) for v in values) + "]"

    def plain(values: list[str]) -> str:
        return ", ".join(values[:-1]) + " and " + values[-1]

    yield _case(gold, "exact", gold["gold"], True)
    yield _case(
        gold, "list_syntax", json.dumps(items if not numeric else [int(i) for i in items]), True
    )
    yield _case(gold, "list_order", python(items[::-1]), True)
    yield _case(gold, "list_order", plain(items[::-1]), True)
    yield _case(gold, "list_syntax", plain(items), True)
    yield _case(gold, "list_syntax", ", ".join(items), True)
    yield _case(gold, "list_syntax", "; ".join(items), True)
    yield _case(gold, "list_syntax", "\n".join("- " + item for item in items), True)
    yield _case(gold, "case", python([item.lower() for item in items]), True)
    yield _case(gold, "partial_list", python(items[:-1]), False)
    yield _case(gold, "partial_list", plain(items[1:]) if len(items) > 2 else items[0], False)
    yield _case(gold, "extra_item", python([*items, gold["wrong_item"]]), False)
    yield _case(gold, "wrong_item", python([*items[:-1], gold["wrong_item"]]), False)
    yield _case(gold, "abstention_on_answer", "The report does not say.", False)


def _phrase_variations(gold: dict) -> Iterator[Case]:
    answer = gold["gold"]
    yield _case(gold, "exact", answer, True)
    yield _case(gold, "case", answer.upper(), True)
    yield _case(gold, "punctuation", answer + ".", True)
    yield _case(gold, "verbose", f"According to the report, {answer}.", True)
    yield _case(gold, "verbose", f"The answer is: {answer}.", True)
    yield _case(gold, "negated", f"It is not true that {answer}.", False)
    yield _case(gold, "negated", f"{answer} is not correct.", False)
    yield _case(gold, "other_answer", gold["wrong"], False)
    yield _case(gold, "other_answer", f"According to the report, {gold['wrong']}.", False)
    yield _case(gold, "two_answers", f"Either {answer} or {gold['wrong']}.", False)


def _not_answerable_variations(gold: dict) -> Iterator[Case]:
    for abstention in ABSTENTIONS:
        yield _case(gold, "abstention", abstention, True)
    wrong = gold["wrong"]
    yield _case(gold, "answer_on_no_answer", wrong, False)
    yield _case(gold, "answer_on_no_answer", f"The answer is {wrong}.", False)
    yield _case(gold, "answer_on_no_answer", f"According to the report, it is {wrong}.", False)


GENERATORS = {
    "place": _text_variations,
    "name": _text_variations,
    "term": _text_variations,
    "date": _text_variations,
    "number": _number_variations,
    "year": _number_variations,
    "scaled": _scaled_variations,
    "yesno": _yesno_variations,
    "list": _list_variations,
    "phrase": _phrase_variations,
    "not_answerable": _not_answerable_variations,
}


def cases() -> list[Case]:
    golds = [json.loads(line) for line in GOLDS.read_text(encoding="utf-8").splitlines() if line]
    return [case for gold in golds for case in GENERATORS[gold["kind"]](gold)]


def half_of(case: Case) -> str:
    return "dev" if case.gold_id % 2 else "held_out"


def evaluate(selected: list[Case], matcher: AnswerMatcher) -> list[tuple[Case, bool]]:
    outcomes = []
    for case in selected:
        result = matcher.match(
            case.output, case.gold, answer_format=case.answer_format, question=case.question
        )
        outcomes.append((case, result.matched == case.correct))
    return outcomes


def report(name: str, outcomes: list[tuple[Case, bool]], show_errors: int) -> None:
    right = sum(ok for _, ok in outcomes)
    negated = [case for case, ok in outcomes if case.variation == "negated" and not ok]
    print(f"\n## {name}: {len(outcomes)} cases")
    print(f"accuracy {100 * right / len(outcomes):.1f}% ({right}/{len(outcomes)})")
    print(f"negated answers accepted: {len(negated)}")
    by_variation: dict[str, list[bool]] = defaultdict(list)
    for case, ok in outcomes:
        by_variation[f"{'+' if case.correct else '-'} {case.variation}"].append(ok)
    print("\n| variation (+ correct, - incorrect) | cases | accuracy |")
    print("|---|---:|---:|")
    for variation in sorted(by_variation):
        oks = by_variation[variation]
        print(f"| {variation} | {len(oks)} | {100 * sum(oks) / len(oks):.1f}% |")
    errors = [case for case, ok in outcomes if not ok]
    for case in errors[:show_errors]:
        print(
            f"  wrong: {case.variation} {case.correct=} gold={case.gold!r} output={case.output!r}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--half", choices=("dev", "held_out", "both"), default="both")
    parser.add_argument("--show-errors", type=int, default=0)
    args = parser.parse_args()
    every = cases()
    matcher = AnswerMatcher()
    kinds = Counter(case.kind for case in every)
    print(f"{len(every)} cases from {len(set(c.gold_id for c in every))} golds: {dict(kinds)}")
    halves = ("dev", "held_out") if args.half == "both" else (args.half,)
    for half in halves:
        selected = [case for case in every if half_of(case) == half]
        report(half, evaluate(selected, matcher), args.show_errors)
    if args.half == "both":
        report("all", evaluate(every, matcher), 0)


if __name__ == "__main__":
    from cpu_header import print_cpu_header  # this folder: the script's own

    print_cpu_header()
    main()
