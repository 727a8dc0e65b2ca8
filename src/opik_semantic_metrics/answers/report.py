"""Accuracy of a QA run under strict matching and under each AnswerMatch tier, as markdown.

The MMESGBench answer analysis compared accuracy under strict exact matching with accuracy under
more forgiving tiers and listed the items each change flipped; :func:`markdown_report`
writes that analysis for any run. Because the tiers are tried in order and the first
match decides, an item matched by tier *k* is matched by no earlier tier, so the
accuracy with tiers 1..k enabled is the share of items whose ``method`` is one of the
first *k* tiers, and one pass of the matcher gives every row of the table.

Two kinds of input, both knowing nothing of Opik's classes:

- Opik test results (``opik.evaluate(...).test_results`` or
  ``opik.evaluate_on_dict_items(...).test_results``) of a run that had ``AnswerMatch``
  among its scoring metrics: each item's result is read from the metadata of the score
  named ``metric_name``; items whose scoring failed are counted and listed apart, with
  the output and reference the metric was given. Items are numbered in dataset order
  (the natural order of their ids), not in the order Opik's threads finished them.
- plain tuples ``(output, reference[, answer_format[, question]])``, matched here with
  ``matcher`` (an :class:`~opik_semantic_metrics.answers.tiers.AnswerMatcher`, the
  default one if not given); an item the matcher cannot score (an
  :class:`~opik_semantic_metrics.errors.InputError`) is a failed item.

Accuracies are over the items that were scored; failed items are reported, never
dropped silently. A text that cannot be written as UTF-8 (an unpaired surrogate, why such
an item fails) is shown escaped, so the report can be printed and saved.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from opik_semantic_metrics.answers.reading import check_answer_format
from opik_semantic_metrics.answers.tiers import METHODS, TIERS, AnswerMatcher
from opik_semantic_metrics.compare.experiments import item_order
from opik_semantic_metrics.errors import InputError, ScorerError, shown
from opik_semantic_metrics.report.tables import Table

_TIER_LABELS = {
    "exact": "Strict: exact match",
    "normalized": "+ normalised text",
    "contains": "+ gold found in the output",
    "numeric": "+ numbers within tolerance",
    "list": "+ lists",
    "not_answerable": "+ not answerable",
    "semantic": "+ semantic",
}
_CELL_LIMIT = 60


@dataclass(frozen=True)
class ReportItem:
    """One item of a run, as the report sees it.

    Attributes:
        index: Position in the input (0-based).
        output, reference: The texts (as the metric's metadata keeps them).
        question: The question, when known.
        answer_format: The item's answer format, when known.
        method: The tier that matched, ``"no_match"``, or ``None`` when scoring failed.
        reason: The metric's reason (the error message for a failed item).
        output_abstained, gold_not_answerable: The metric's flags.
    """

    index: int
    output: str
    reference: str
    question: str | None
    answer_format: str | None
    method: str | None
    reason: str
    output_abstained: bool = False
    gold_not_answerable: bool = False


@dataclass(frozen=True)
class RunSummary:
    """The numbers behind the report.

    Attributes:
        items: Every item, in input order.
        semantic: The semantic scorer's name, or ``None`` when tier 6 was off.
        correct_through: For each tier, the items correct with it and every earlier
            tier enabled (cumulative).
        method_counts: Items per ``method`` (``"failed"`` for failed items).
    """

    items: tuple[ReportItem, ...]
    semantic: str | None
    correct_through: dict[str, int]
    method_counts: dict[str, int]

    @property
    def scored(self) -> tuple[ReportItem, ...]:
        """Items that were scored (not failed)."""
        return tuple(item for item in self.items if item.method is not None)

    @property
    def failed(self) -> tuple[ReportItem, ...]:
        """Items whose scoring failed."""
        return tuple(item for item in self.items if item.method is None)

    def flipped_by(self, tier: str) -> tuple[ReportItem, ...]:
        """Items wrong with the earlier tiers that ``tier`` made right."""
        return tuple(item for item in self.items if item.method == tier)


def summarize(
    results: Iterable[Any],
    *,
    matcher: AnswerMatcher | None = None,
    metric_name: str = "answer_match",
) -> RunSummary:
    """Read a run's results (Opik test results or plain tuples) into a :class:`RunSummary`.

    Args:
        results: Opik test results, or tuples ``(output, reference[, answer_format[,
            question]])``. A tuple the matcher cannot score (an ``InputError``, or a
            ``ScorerError`` from its semantic scorer) is listed as a failed item, as
            AnswerMatch's failed items are in an Opik run.
        matcher: Matches plain tuples; the default :class:`AnswerMatcher` if ``None``.
        metric_name: Name of the AnswerMatch score in Opik test results.

    Raises:
        ValueError: A test result without an AnswerMatch score named ``metric_name``, a
            tuple of the wrong length, or a mix of the two kinds.

    Example:
        >>> summary = summarize([("82.0", "82%", "Float"), ("Paris", "paris"), ("4", "5")])
        >>> summary.correct_through["exact"], summary.correct_through["semantic"]
        (0, 2)
        >>> summary.method_counts
        {'normalized': 1, 'numeric': 1, 'no_match': 1}
    """
    results = list(results)
    from_opik = [hasattr(result, "score_results") for result in results]
    if any(from_opik) and not all(from_opik):
        raise ValueError("Expected only Opik test results or only plain tuples, got a mix.")
    if results and all(from_opik):
        items, semantic = _items_from_test_results(results, metric_name)
    else:
        matcher = matcher if matcher is not None else AnswerMatcher()
        items = [_item_from_tuple(index, row, matcher) for index, row in enumerate(results)]
        semantic = None if matcher.semantic is None else _scorer_name(matcher.semantic)
    methods = Counter(item.method or "failed" for item in items)
    correct_through: dict[str, int] = {}
    correct = 0
    for tier in TIERS:
        correct += methods.get(tier, 0)
        correct_through[tier] = correct
    order = {method: position for position, method in enumerate((*METHODS, "failed"))}
    counts = dict(sorted(methods.items(), key=lambda pair: order[pair[0]]))
    return RunSummary(tuple(items), semantic, correct_through, counts)


def markdown_report(
    results: Iterable[Any],
    *,
    matcher: AnswerMatcher | None = None,
    metric_name: str = "answer_match",
    title: str = "AnswerMatch report",
    max_listed: int = 20,
) -> str:
    """The MMESGBench answer analysis's tables for a run, as markdown.

    Sections: accuracy under strict matching and with each tier added (cumulative),
    items per method, accuracy per answer format, abstentions, the items each tier
    flipped from wrong to right, the items still wrong, and the failed items.

    Args:
        results: As :func:`summarize`.
        matcher: As :func:`summarize`.
        metric_name: As :func:`summarize`.
        title: The report's heading.
        max_listed: Most items listed per section.

    Returns:
        Markdown text.

    Raises:
        ValueError: As :func:`summarize`, or ``max_listed`` is negative.

    Example:
        >>> print(markdown_report([("82.0", "82%", "Float"), ("4", "5")]).splitlines()[6])
        | Strict: exact match | 0 | 0.0% |  |
    """
    if max_listed < 0:
        raise ValueError(f"Expected max_listed of 0 or more, got {max_listed}.")
    summary = summarize(results, matcher=matcher, metric_name=metric_name)
    scored = len(summary.scored)
    lines = [f"## {title}", ""]
    lines.append(
        f"{scored} items scored"
        + (f", {len(summary.failed)} failed to score (listed at the end)" if summary.failed else "")
        + ". Each row adds one matching tier to the rows above it; # is an item's position"
        " in the input (Opik results: in dataset order), from 0."
    )
    rows = []
    previous = None
    for tier in TIERS:
        label = _TIER_LABELS[tier]
        if tier == "semantic":
            label += f" ({summary.semantic})" if summary.semantic else " (off)"
        correct = summary.correct_through[tier]
        gain = "" if previous is None else f"+{correct - previous}"
        rows.append((label, str(correct), _percent(correct, scored), gain))
        previous = correct
    lines += ["", *_markdown(("Matching", "Correct", "Accuracy", "Gain"), rows)]
    lines += ["", "### Items per method", ""]
    counts = [(method, str(count)) for method, count in summary.method_counts.items()]
    lines += _markdown(("Method", "Items"), counts)
    lines += _format_table(summary)
    lines += _abstentions(summary)
    for tier in TIERS[1:]:
        flipped = summary.flipped_by(tier)
        if flipped:
            lines += ["", f"### Flipped to correct by {tier} ({len(flipped)})", ""]
            lines += _item_table(flipped, max_listed, with_reason=False)
    wrong = summary.flipped_by("no_match")
    if wrong:
        lines += ["", f"### Still wrong ({len(wrong)})", ""]
        lines += _item_table(wrong, max_listed, with_reason=True)
    if summary.failed:
        lines += ["", f"### Failed to score ({len(summary.failed)})", ""]
        lines += _item_table(summary.failed, max_listed, with_reason=True)
    return "\n".join(lines) + "\n"


def _items_from_test_results(
    results: Sequence[Any], metric_name: str
) -> tuple[list[ReportItem], str | None]:
    items = []
    semantic = None
    # Opik lists results as its threads finish them: number them in dataset order.
    in_order = sorted(results, key=lambda result: item_order(str(result.test_case.dataset_item_id)))
    for index, result in enumerate(in_order):
        scores = [score for score in result.score_results if score.name == metric_name]
        if not scores:
            raise ValueError(
                f"Test result {index} has no score named {metric_name!r}: run AnswerMatch "
                "among the scoring metrics, or pass its name as `metric_name`."
            )
        score = scores[0]
        content = getattr(result.test_case, "dataset_item_content", None) or {}
        question = content.get("question", content.get("input"))
        question = question if isinstance(question, str) else None
        metadata = score.metadata or {}
        if score.scoring_failed:
            # What the metric was given (after any scoring_key_mapping), to show beside why.
            given = getattr(result.test_case, "mapped_scoring_inputs", None) or content
            items.append(
                ReportItem(
                    index,
                    _text(given.get("output")),
                    _text(given.get("reference")),
                    question,
                    _known_format(given.get("answer_format")),
                    None,
                    str(score.reason),
                )
            )
            continue
        if "method" not in metadata:
            raise ValueError(
                f"The score {metric_name!r} of test result {index} has no `method` in its "
                "metadata: it is not an AnswerMatch score."
            )
        semantic = semantic or metadata.get("semantic")
        items.append(
            ReportItem(
                index=index,
                output=str(metadata.get("output")),
                reference=str(metadata.get("reference")),
                question=question,
                answer_format=metadata.get("answer_format"),
                method=metadata["method"],
                reason=str(score.reason),
                output_abstained=bool(metadata.get("output_abstained")),
                gold_not_answerable=bool(metadata.get("gold_not_answerable")),
            )
        )
    return items, semantic


def _item_from_tuple(index: int, row: Any, matcher: AnswerMatcher) -> ReportItem:
    if not isinstance(row, tuple | list) or not 2 <= len(row) <= 4:
        raise ValueError(
            f"Expected item {index} to be (output, reference[, answer_format[, question]]), "
            f"got {shown(row, 80)}."
        )
    output, reference, answer_format, question = (*row, None, None)[:4]
    question = question if isinstance(question, str) else None
    texts = (_text(output), _text(reference))
    try:
        result = matcher.match(output, reference, answer_format=answer_format, question=question)
    # An item AnswerMatch would fail inside Opik is listed as failed here too.
    except (InputError, ScorerError) as error:
        return ReportItem(index, *texts, question, _known_format(answer_format), None, str(error))
    return ReportItem(
        index,
        *texts,
        question,
        check_answer_format(answer_format),  # checked by match(): "float" is "Float"
        result.method,
        result.reason,
        result.output_abstained,
        result.gold_not_answerable,
    )


def _format_table(summary: RunSummary) -> list[str]:
    formats = sorted({item.answer_format for item in summary.scored}, key=lambda f: f or "")
    if formats in ([], [None]):  # nothing scored, or no item with a format
        return []
    rows = []
    for answer_format in formats:
        group = [item for item in summary.scored if item.answer_format == answer_format]
        strict = sum(item.method == "exact" for item in group)
        correct = sum(item.method not in ("no_match", None) for item in group)
        rows.append(
            (
                answer_format or "unknown",
                str(len(group)),
                _percent(strict, len(group)),
                _percent(correct, len(group)),
            )
        )
    headers = ("Answer format", "Items", "Strict", "All tiers")
    return ["", "### Accuracy per answer format", "", *_markdown(headers, rows)]


def _abstentions(summary: RunSummary) -> list[str]:
    scored = summary.scored
    abstained = [item for item in scored if item.output_abstained]
    unanswerable = [item for item in scored if item.gold_not_answerable]
    wrongly = sum(not item.gold_not_answerable for item in abstained)
    declined = sum(item.output_abstained for item in unanswerable)
    return [
        "",
        "### Abstentions",
        "",
        f"- Outputs that decline to answer: {len(abstained)} ({wrongly} on questions that "
        f"have an answer, counted wrong).",
        f"- Questions that are not answerable: {len(unanswerable)} ({declined} declined, "
        "counted right).",
    ]


def _item_table(items: Sequence[ReportItem], max_listed: int, *, with_reason: bool) -> list[str]:
    headers = ("#", "Question", "Gold", "Output", *(("Reason",) if with_reason else ()))
    rows = []
    for item in items[:max_listed]:
        cells = [str(item.index), item.question or "", item.reference, item.output]
        if with_reason:
            cells.append(item.reason)
        rows.append(tuple(_cell(cell) for cell in cells))
    lines = _markdown(headers, rows)
    if len(items) > max_listed:
        lines.append(f"\n...and {len(items) - max_listed} more.")
    return lines


def _cell(text: str) -> str:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        # An unpaired surrogate (why such an item failed to score) would make the report
        # fail to print or be written to a file: shown escaped, as in the error message.
        text = shown(text, _CELL_LIMIT)
    text = " ".join(text.split())
    return text if len(text) <= _CELL_LIMIT else text[: _CELL_LIMIT - 1] + "…"


def _markdown(headers: tuple[str, ...], rows: Sequence[tuple[str, ...]]) -> list[str]:
    return Table(headers, tuple(rows)).to_markdown().splitlines()


def _percent(count: int, total: int) -> str:
    return f"{100 * count / total:.1f}%" if total else "n/a"


def _text(value: Any) -> str:
    return value[: _CELL_LIMIT * 4] if isinstance(value, str) else shown(value, _CELL_LIMIT * 4)


def _known_format(answer_format: Any) -> str | None:
    """The canonical answer format, or ``None`` for one AnswerMatch does not know."""
    try:
        return check_answer_format(answer_format)
    except InputError:
        return None


def _scorer_name(semantic: Any) -> str:
    return semantic if isinstance(semantic, str) else getattr(semantic, "__name__", "scorer")
