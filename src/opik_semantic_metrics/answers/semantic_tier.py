"""The ``semantic`` tier: after every rule tier has failed on every acceptable answer,
a semantic score of at least the threshold matches, where the guards of
:func:`~opik_semantic_metrics.answers.similarity.semantic_guard` allow a score at all.

The scorer is called once for all the pairs of a batch
(:meth:`SemanticTier.scores`), so scoring a dataset whose items have many acceptable
answers runs the model in batches, not once per answer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from opik_semantic_metrics.answers.lists import python_value
from opik_semantic_metrics.answers.results import Case
from opik_semantic_metrics.answers.similarity import (
    KEYWORDS,
    SemanticScorer,
    keyword_coverage,
    semantic_guard,
    semantic_scores,
)
from opik_semantic_metrics.errors import shown
from opik_semantic_metrics.inputs import is_finite_number


class SemanticTier:
    """The semantic tier's scorer and threshold, checked once.

    Args:
        semantic: ``None`` (off), ``"keywords"``, or a scorer ``(output, reference) ->
            float`` (with a ``score_pairs`` method, scored in batches).
        semantic_threshold: Least score that matches; 1.0 by default with
            ``"keywords"``, required with a scorer.

    Raises:
        ValueError: As :class:`~opik_semantic_metrics.answers.tiers.AnswerMatcher` says.
    """

    def __init__(
        self,
        semantic: SemanticScorer | Literal["keywords"] | None,
        semantic_threshold: float | None,
    ) -> None:
        if semantic is not None and semantic != KEYWORDS and not callable(semantic):
            raise ValueError(
                f"Expected `semantic` to be None, {KEYWORDS!r} or a callable "
                f"(output, reference) -> float, got {type(semantic).__name__}."
            )
        threshold = python_value(semantic_threshold)  # numpy.float32(0.5) too
        if threshold is None and semantic == KEYWORDS:
            threshold = 1.0
        if semantic is not None and threshold is None:
            raise ValueError("A semantic scorer needs a `semantic_threshold`.")
        if semantic is None and threshold is not None:
            # Most likely a `semantic=` forgotten: the semantic method would be off without a word.
            raise ValueError("`semantic_threshold` is read only with a `semantic` scorer.")
        self.scorer = semantic
        self.threshold: float | None = None
        if threshold is not None:
            if not is_finite_number(threshold):
                raise ValueError(
                    f"Expected `semantic_threshold` to be a finite number, got {shown(threshold)}."
                )
            if semantic == KEYWORDS and not 0 < threshold <= 1:
                raise ValueError(
                    f"Keyword coverage lies in [0, 1]; expected a threshold in (0, 1], "
                    f"got {threshold}."
                )
            self.threshold = threshold

    def ready(self, case: Case) -> bool:
        """Whether the semantic tier may judge the case: a text answer, a gold with a
        meaning to compare, and no guard against it (a negation on one side only, a
        number or a name of the gold's missing from the output)."""
        answer, gold, outcome = case.answer, case.gold, case.outcome
        if self.scorer is None or case.abstained or case.gold_not_answerable or gold is None:
            return False
        if case.answer_format not in (None, "Str"):
            return False
        if gold.number is not None or gold.list_like or not answer.forms.joined:
            return False
        refusal = semantic_guard(answer.text, gold.text, case.context)
        if refusal is not None:
            flag, note = refusal
            if flag is not None:
                outcome.flags.append(flag)
            outcome.notes.append(note)
            return False
        return True

    def scores(self, cases: Sequence[Case]) -> list[float | None]:
        """The semantic score of each waiting case, in one call of the scorer."""
        if not cases:
            return []
        semantic = self.scorer
        if isinstance(semantic, str):  # KEYWORDS
            return [
                keyword_coverage(case.answer.forms.spaced.split(), case.gold.forms.spaced.split())  # type: ignore[union-attr]
                for case in cases
            ]
        assert semantic is not None
        pairs = [(case.answer.text, case.gold.text) for case in cases]  # type: ignore[union-attr]
        return semantic_scores(semantic, pairs)

    def decide(self, case: Case, score: float | None) -> str | None:
        """The reason of a match at ``score``, or ``None`` (the case's notes say why)."""
        outcome = case.outcome
        keywords = isinstance(self.scorer, str)
        kind = "keyword coverage" if keywords else "semantic score"
        if score is None:
            if keywords:
                outcome.notes.append("the gold has no word longer than 3 characters to look for")
            else:
                outcome.flags.append("semantic_unreadable")
                outcome.notes.append("the semantic scorer cannot read a word of the texts")
            return None
        outcome.semantic_score = score
        threshold = self.threshold
        assert threshold is not None
        if score >= threshold:
            return f"The {kind} {score:.3f} reaches the threshold {threshold:g}."
        outcome.notes.append(f"{kind} {score:.3f} below the threshold {threshold:g}")
        return None
