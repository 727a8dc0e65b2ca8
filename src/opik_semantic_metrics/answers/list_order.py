"""Comparing two lists of answers: whether order counts, and how many items match."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TypeVar

from opik_semantic_metrics.answers.normalize import prepare

Item = TypeVar("Item")

#: Words of a question that make a list's order matter (the MMESGBench answer analysis's
#: list, inflected).
ORDER_WORDS = (
    "first",
    "last",
    "order",
    "ordered",
    "ordering",
    "sequence",
    "sequential",
    "rank",
    "ranked",
    "ranking",
    "top",
    "ascending",
    "descending",
    "chronological",
    "chronologically",
)
ORDER_PATTERN = re.compile(r"\b(?:" + "|".join(ORDER_WORDS) + r")\b")
NOT_ABOUT_ORDER = re.compile(r"\bin order (?:to|for|that)\b")


def count_matched(
    answer_items: Sequence[Item],
    gold_items: Sequence[Item],
    ordered: bool,
    equal: Callable[[Item, Item], bool],
) -> int:
    """How many gold items the output matches: position by position when ordered,
    else a maximum one-to-one matching (augmenting paths, as tolerance makes
    "matches" a relation that need not be transitive)."""
    if ordered:
        return sum(equal(a, g) for a, g in zip(answer_items, gold_items, strict=False))
    partners = [[index for index, a in enumerate(answer_items) if equal(a, g)] for g in gold_items]
    owner: dict[int, int] = {}

    def assign(gold_index: int, seen: set[int]) -> bool:
        for answer_index in partners[gold_index]:
            if answer_index in seen:
                continue
            seen.add(answer_index)
            if answer_index not in owner or assign(owner[answer_index], seen):
                owner[answer_index] = gold_index
                return True
        return False

    return sum(assign(gold_index, set()) for gold_index in range(len(gold_items)))


def order_matters(question: str | None) -> bool:
    if not isinstance(question, str):
        return False
    text = NOT_ABOUT_ORDER.sub(" ", prepare(question))
    return ORDER_PATTERN.search(text) is not None
