"""What matching an answer gives (:class:`MatchResult`), and what the methods gather on
the way."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from opik_semantic_metrics.answers.contains import NO_CONTEXT, Context
from opik_semantic_metrics.answers.numbers import ParsedNumber
from opik_semantic_metrics.answers.reading import Answer

Method = Literal[
    "exact", "normalized", "contains", "numeric", "list", "not_answerable", "semantic", "no_match"
]


@dataclass(frozen=True)
class MatchResult:
    """Whether an output matches its gold answer, by which tier, and why.

    Attributes:
        matched: The output is a correct answer.
        method: The tier that matched (one of :data:`TIERS`), or ``"no_match"``.
        reason: A sentence a person can read.
        output_normalized, reference_normalized: The texts in normal form (joined form;
            ``""`` for a missing output or a ``None`` gold).
        output_number, reference_number: The numbers read, as text, or ``None``.
        ordered: Whether list order counted, when lists were compared; else ``None``.
        semantic_score: The semantic tier's score, when it ran.
        output_abstained: The output declines to answer.
        gold_not_answerable: The gold answer is "not answerable".
        flags: Other facts: ``output_missing``, ``output_not_finite``,
            ``list_too_long``, ``list_too_deep``, ``list_too_many_items``,
            ``gold_negated``, ``second_answer``, ``output_too_long``,
            ``negation_mismatch``, ``gold_number_missing``, ``output_number_extra``,
            ``other_name``, ``gold_name_missing``, ``semantic_unreadable``.
        matched_answer: The acceptable answer that matched (its text), or ``None``.
    """

    matched: bool
    method: Method
    reason: str
    output_normalized: str
    reference_normalized: str
    output_number: str | None = None
    reference_number: str | None = None
    ordered: bool | None = None
    semantic_score: float | None = None
    output_abstained: bool = False
    gold_not_answerable: bool = False
    flags: tuple[str, ...] = ()
    matched_answer: str | None = None


@dataclass(frozen=True)
class AnswerItem:
    """One output and its acceptable answers (any one is right), for
    :meth:`~opik_semantic_metrics.answers.tiers.AnswerMatcher.match_many`."""

    output: object
    references: tuple[object, ...]
    answer_format: str | None = None
    question: str | None = None


@dataclass
class Case:
    """One comparison as the tiers see it: both sides read once, and what they found."""

    answer: Answer
    gold: Answer | None
    answer_format: str | None
    question: str | None
    abstained: bool
    gold_not_answerable: bool
    outcome: Outcome
    #: Words that an answer repeats as context, not as a second answer: the question's,
    #: and those of the item's other acceptable answers.
    context: Context = NO_CONTEXT


@dataclass
class Outcome:
    """What the tiers found, gathered as they run."""

    notes: list[str] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)
    ordered: bool | None = None
    semantic_score: float | None = None
    #: The number an Int or Float output given as a sentence was read as.
    sentence_number: ParsedNumber | None = None
