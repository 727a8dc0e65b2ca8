"""References of the layered score: a string, or a list of strings that form one answer."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from opik_semantic_metrics.inputs import check_pairs, is_blank, reference_texts

Reference = str | Sequence[str]
#: Joins the parts of a reference given as a list into one answer.
LIST_SEPARATOR: Final = ", "


def reference_text(reference: object, what: str) -> str:
    """One reference as a string: a string as is, a non-empty list of strings joined.

    Raises:
        InputError: Anything else, naming the item (``what``) and the type found.
    """
    return joined(reference_texts(reference, what))


def joined(parts: Sequence[str]) -> str:
    """The parts of a list answer as one text, blank parts left out: ``["", " "]`` is an
    empty reference, not the separator alone, which reads as punctuation."""
    return LIST_SEPARATOR.join(part for part in parts if not is_blank(part))


def checked_pairs(candidates: object, references: object) -> tuple[list[str], list[str]]:
    """Validate inputs once, at the entry point; return outputs and joined references."""
    outputs, groups = check_pairs(candidates, references)
    return outputs, [joined(group) for group in groups]
