"""AnswerMatch as an Opik metric: tiered answer matching for QA benchmarks.

A thin wrapper over :class:`~opik_semantic_metrics.answers.tiers.AnswerMatcher`: exact ->
normalised text -> gold found in the output -> numeric -> list -> not answerable ->
semantic (optional), stopping at the first tier that matches. The score is 1.0 or 0.0;
``metadata["method"]`` names the tier, and the normal forms, numbers, semantic score and
flags explain it.

Bad input, by design:

- ``output`` ``None``, NaN or an infinity: 0.0 with a reason (flagged
  ``output_missing`` / ``output_not_finite``), not an error: a missing answer is a
  wrong answer, and an error would drop the item from Opik's averages and inflate the
  accuracy.
- ``reference`` ``None`` or NaN: the gold answer "not answerable" (as MMESGBench and
  the MMESGBench answer analysis use it). Neither ``reference`` nor
  ``acceptable_answers`` given (a dataset field not mapped): ``MetricComputationError``,
  not "not answerable" for every item.
- numbers instead of strings: compared as numbers (``82`` matches ``"82%"``); Python
  lists: list answers.
- anything else not an answer (dicts, sets, bytes, objects, an infinite reference, a
  list nested deeper than 4 or with more than 200 values, an unknown
  ``answer_format``): ``MetricComputationError`` naming the problem, so Opik marks that
  item's score as failed and the run goes on.
- a semantic scorer that fails or returns something that is not a finite number (a
  NumPy scalar or a 0-d PyTorch tensor counts as a number; an int past a float's range
  does not): ``MetricComputationError`` naming the scorer.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from opik.evaluation.metrics import base_metric, score_result

from opik_semantic_metrics.answers.abstentions import DEFAULT_ABSTENTIONS
from opik_semantic_metrics.answers.lists import python_value
from opik_semantic_metrics.answers.reading import (
    NOT_GIVEN,
    acceptable_answer_list,
    check_answer_format,
)
from opik_semantic_metrics.answers.results import AnswerItem, MatchResult
from opik_semantic_metrics.answers.similarity import KEYWORDS, SemanticScorer
from opik_semantic_metrics.answers.tiers import DEFAULT_TOLERANCE, AnswerMatcher
from opik_semantic_metrics.errors import ScorerError, shown
from opik_semantic_metrics.inputs import is_finite_number
from opik_semantic_metrics.metrics.base import PackageMetric
from opik_semantic_metrics.metrics.bertscore import BERTScore
from opik_semantic_metrics.models.registry import MINILM_HUB_ID

#: Default semantic threshold for BERTScore F1 with all-MiniLM-L6-v2 (layer 6, no idf,
#: not rescaled): chosen on LLM answers judged by people (EVOUNA's TriviaQA part,
#: development half), where it keeps false accepts under 3% of the wrong answers at
#: nearly the best agreement; it also parts correct verbose answers from wrong ones on the
#: same topics (``benchmarks/answer_match_threshold.py``). Figures in
#: ``docs/design/answer-match-threshold.md``.
BERTSCORE_MINILM_F1_THRESHOLD = 0.55
#: Longest text kept in ``metadata`` (the output, the reference and their normal forms).
METADATA_TEXT_LIMIT = 300

Semantic = base_metric.BaseMetric | Callable[[str, str], float] | Literal["keywords"] | None


class AnswerMatch(PackageMetric):
    """Whether an output answers a QA item correctly, by ordered matching tiers.

    Args:
        tolerance: Largest absolute difference between equal numbers (default 0.01,
            :data:`~opik_semantic_metrics.answers.tiers.DEFAULT_TOLERANCE`).
        relative_tolerance: Largest difference relative to the larger number, a fraction
            below 1 (0.05 for 5%); with both, the larger allowance wins.
        ordered: ``True``: list order matters; ``False``: never; ``None``: when the
            question (``input``) asks for an order ("first", "rank", "top"...).
        semantic: The ``semantic`` method, for ``Str`` answers: ``None`` (off),
            ``"keywords"`` (every gold word longer than 3 characters present), an Opik
            metric whose
            ``score(output=..., reference=...)`` returns a ScoreResult or a list whose
            first element is the main score (``BERTScore`` returns ``[f1, precision,
            recall]``), or a callable ``(output, reference) -> float``.
        semantic_threshold: Least semantic score that matches. ``None``: 1.0 for
            ``"keywords"``, :data:`BERTSCORE_MINILM_F1_THRESHOLD` for ``BERTScore`` on
            all-MiniLM-L6-v2 (default layer, no idf, not rescaled); required otherwise.
        name: Metric name.
        track: Track the metric's calls in Opik.
        project_name: Opik project for the tracked calls.
        percent_as_fraction: Also accept ``"82%"`` against ``"0.82"``.
        abstentions: Phrases by which an output declines to answer.
        abstention_patterns: Also read freely phrased abstentions ("The report does not
            say.", "This cannot be determined from the document.").

    Raises:
        ValueError: A bad tolerance or threshold, a ``semantic`` of another kind, or a
            scorer without a threshold where no default is known.

    Example:
        >>> metric = AnswerMatch(track=False)
        >>> result = metric.score(output="82.0", reference="82%", answer_format="Float")
        >>> result.value, result.metadata["method"]
        (1.0, 'numeric')
        >>> result.reason
        'Numbers equal within ±0.01: 82 and 82%.'
        >>> metric.score(output="['C', 'B', 'A']", reference="['A', 'B', 'C']").value
        1.0
        >>> metric.score(
        ...     output="['C', 'B', 'A']", reference="['A', 'B', 'C']", input="Rank them."
        ... ).value
        0.0
    """

    def __init__(
        self,
        tolerance: float = DEFAULT_TOLERANCE,
        relative_tolerance: float | None = None,
        ordered: bool | None = None,
        semantic: Semantic = None,
        semantic_threshold: float | None = None,
        name: str = "answer_match",
        track: bool = True,
        project_name: str | None = None,
        *,
        percent_as_fraction: bool = False,
        abstentions: Sequence[str] = DEFAULT_ABSTENTIONS,
        abstention_patterns: bool = True,
    ) -> None:
        super().__init__(name=name, track=track, project_name=project_name)
        scorer, self.semantic_name = _semantic_scorer(semantic)
        if semantic_threshold is None and isinstance(semantic, BERTScore):
            semantic_threshold = _bertscore_threshold(semantic)
        self.matcher = AnswerMatcher(
            tolerance,
            relative_tolerance,
            ordered,
            percent_as_fraction=percent_as_fraction,
            abstentions=abstentions,
            abstention_patterns=abstention_patterns,
            semantic=scorer,
            semantic_threshold=semantic_threshold,
        )

    @property
    def uses_model(self) -> bool:
        """Only a semantic metric that runs a model does; the other methods are rules."""
        semantic = self.settings.get("semantic")
        return isinstance(semantic, PackageMetric) and semantic.uses_model

    def score_rows(self, rows: Mapping[str, Sequence[Any]]) -> list[list[score_result.ScoreResult]]:
        """:meth:`score` of each row, with one call of the semantic scorer for all the
        rows' answers that reach it.

        Raises:
            MetricComputationError: A row :meth:`score` would refuse (the whole call
                fails, as a batch does; Ray's scoring then splits it to find the row).
        """
        count = len(next(iter(rows.values())))
        with self.failing_item(ScorerError):
            items = [
                self._item(**{name: values[i] for name, values in rows.items()})
                for i in range(count)
            ]
            results = self.matcher.match_many(items)
        return [
            [self._score_result(result, item)] for result, item in zip(results, items, strict=True)
        ]

    def score(
        self,
        output: Any,
        reference: Any = NOT_GIVEN,
        input: Any = None,  # Opik's name for the dataset item's question
        answer_format: str | None = None,
        question: str | None = None,
        acceptable_answers: Any = None,
        **ignored_kwargs: Any,
    ) -> score_result.ScoreResult:
        """Match one output against its gold answer, or any of its acceptable answers.

        Args:
            output: The model's answer (a string, number, list or ``None``).
            reference: The gold answer (a string, number, list, or ``None`` for "not
                answerable"). A Python list here is *one* list answer (MMESGBench's
                ``List`` format); several acceptable answers go in ``acceptable_answers``.
            input: The question, when it is a string.
            answer_format: ``Str``, ``Int``, ``Float``, ``List`` or ``None`` (a not
                answerable question), as in MMESGBench; Python ``None`` for unknown.
            question: The question, used when ``input`` is not a string.
            acceptable_answers: Several right answers, any one of which matches (a list,
                tuple or NumPy array of them, as TriviaQA and Natural Questions give
                aliases); with ``reference``, the reference is tried first.
                ``metadata["matched_answer"]`` names the one that matched.
            **ignored_kwargs: Other dataset fields, ignored.

        Returns:
            A ScoreResult of 1.0 (match) or 0.0, whose ``metadata`` holds ``method``
            (exact, normalized, contains, numeric, list, not_answerable, semantic,
            no_match), the answer that matched, the normal forms, the numbers read, the
            semantic score and the flags.

        Raises:
            MetricComputationError: An output or reference that is not an answer, no
                ``reference`` and no ``acceptable_answers``, an unknown
                ``answer_format``, or a semantic scorer that failed.
        """
        with self.failing_item(ScorerError):
            item = self._item(output, reference, input, answer_format, question, acceptable_answers)
            result = self.matcher.match_many([item])[0]
        return self._score_result(result, item)

    def _item(
        self,
        output: Any,
        reference: Any = NOT_GIVEN,
        input: Any = None,
        answer_format: str | None = None,
        question: str | None = None,
        acceptable_answers: Any = None,
        **ignored_kwargs: Any,
    ) -> AnswerItem:
        """One row read as the matcher's item (refused as :meth:`score` says)."""
        if isinstance(input, str):
            question = input
        references = acceptable_answer_list(reference, acceptable_answers)
        answer_format = check_answer_format(answer_format)  # "float" -> "Float"
        return AnswerItem(output, references, answer_format, question)

    def _score_result(self, result: MatchResult, item: AnswerItem) -> score_result.ScoreResult:
        return score_result.ScoreResult(
            name=self.name,
            value=1.0 if result.matched else 0.0,
            reason=result.reason,
            metadata=self._metadata(result, item),
        )

    def _metadata(self, result: MatchResult, item: AnswerItem) -> dict[str, Any]:
        references = item.references
        metadata: dict[str, Any] = {
            "method": result.method,
            "matched": result.matched,
            "answer_format": item.answer_format,
            "output": _clip(python_value(item.output)),
            "reference": _clip(python_value(references[0])),
            "acceptable_answers": len(references),
            "matched_answer": _clip(result.matched_answer),
            "output_normalized": _clip(result.output_normalized),
            "reference_normalized": _clip(result.reference_normalized),
            "output_number": result.output_number,
            "reference_number": result.reference_number,
            "ordered": result.ordered,
            "output_abstained": result.output_abstained,
            "gold_not_answerable": result.gold_not_answerable,
            "flags": list(result.flags),
            "tolerance": float(self.matcher.tolerance),
            "semantic": self.semantic_name,
        }
        if self.semantic_name is not None:
            metadata["semantic_score"] = result.semantic_score
            metadata["semantic_threshold"] = self.matcher.semantic_threshold
        return metadata


def _semantic_scorer(
    semantic: Semantic,
) -> tuple[SemanticScorer | Literal["keywords"] | None, str | None]:
    """The engine's scorer for ``semantic``, and a name for it in metadata."""
    if semantic is None:
        return None, None
    if isinstance(semantic, str):
        if semantic != KEYWORDS:
            raise ValueError(
                f"Expected `semantic` to be {KEYWORDS!r} as a string, got {semantic!r}."
            )
        return KEYWORDS, KEYWORDS
    if isinstance(semantic, type):
        # BERTScore.score unbound would fail every item, one at a time.
        raise ValueError(
            f"Expected `semantic` to be a metric or a function, got the class "
            f"{semantic.__name__}: pass an instance, e.g. {semantic.__name__}()."
        )
    if callable(getattr(semantic, "score", None)) or callable(semantic):
        adapter = SemanticAdapter(semantic)
        return adapter, adapter.__name__
    raise ValueError(
        f"Expected `semantic` to be None, {KEYWORDS!r}, a metric with a score() method or a "
        f"callable (output, reference) -> float, got {type(semantic).__name__}."
    )


class SemanticAdapter:
    """The one way AnswerMatch calls a semantic scorer: a metric's
    ``score(output=..., reference=...)`` or a function ``(output, reference)``, its main
    value as a float, ``None`` where the scorer's model cannot read the texts.

    The matcher turns what it raises into a ``ScorerError`` naming it, and
    :meth:`AnswerMatch.score` that into a failed item.

    Args:
        source: A metric with a ``score`` method, or a callable.
    """

    def __init__(self, source: Any) -> None:
        self.source = source
        self.is_metric = callable(getattr(source, "score", None))
        if self.is_metric:
            name = str(getattr(source, "name", type(source).__name__))
        else:
            name = getattr(source, "__name__", type(source).__name__)
        self.__name__ = name  # what reports call the scorer

    def __call__(self, output: str, reference: str) -> float | None:
        if self.is_metric:
            returned = self.source.score(output=output, reference=reference)
        else:
            returned = self.source(output, reference)
        return self._value(returned)

    def score_pairs(self, pairs: Sequence[tuple[str, str]]) -> list[float | None]:
        """Many pairs: in one ``score_batch`` call where the metric has one (BERTScore,
        SemanticMatch: batched forward passes), else one call a pair."""
        score_batch = getattr(self.source, "score_batch", None) if self.is_metric else None
        if score_batch is None:
            return [self(output, reference) for output, reference in pairs]
        outputs = [output for output, _ in pairs]
        references = [reference for _, reference in pairs]
        return [self._value(returned) for returned in score_batch(outputs, references)]

    def _value(self, returned: Any) -> float | None:
        """The main score of what the metric returned (``None``: it cannot read the
        texts); a result with no score is the scorer's failure, named."""
        if _reads_unknown_tokens(returned):
            return None
        value = _main_value(returned)
        if value is None:
            raise ScorerError(
                f"the semantic scorer {self.__name__} returned {shown(returned)}, "
                "not a finite score."
            )
        return value


def _reads_unknown_tokens(returned: Any) -> bool:
    """Whether a BERTScore result says its model read a token of either text only as
    unknown: "ሰላም" and "ቡና" are both [UNK] to MiniLM, and score F1 1.0 against each other."""
    main = returned[0] if isinstance(returned, list | tuple) and returned else returned
    metadata = getattr(main, "metadata", None)
    if not isinstance(metadata, dict):
        return False
    return bool(
        metadata.get("candidate_unknown_tokens") or metadata.get("reference_unknown_tokens")
    )


def _main_value(returned: Any) -> float | None:
    """A ScoreResult's value, the first element of a list, or a plain number; ``None``
    for anything else, or a number that is not finite as a float."""
    if isinstance(returned, list | tuple):
        if not returned:
            return None
        returned = returned[0]
    if isinstance(returned, score_result.ScoreResult):
        if returned.scoring_failed:
            return None
        returned = returned.value
    # A scorer computing with NumPy or PyTorch returns numpy.float32 or a 0-d tensor.
    returned = python_value(returned)
    return float(returned) if is_finite_number(returned) else None


def _bertscore_threshold(metric: BERTScore) -> float:
    """The calibrated default for BERTScore on MiniLM; other settings need their own."""
    engine = metric.engine
    if (
        engine.model_name == MINILM_HUB_ID
        and engine.num_layers == 6
        and not engine.idf
        and not engine.rescale_with_baseline
    ):
        return BERTSCORE_MINILM_F1_THRESHOLD
    raise ValueError(
        "AnswerMatch has a default `semantic_threshold` only for BERTScore on "
        f"all-MiniLM-L6-v2 (layer 6, no idf, not rescaled); for {engine.hash} pass one "
        "(see benchmarks/answer_match_threshold.py for how to choose it)."
    )


def _clip(value: Any) -> Any:
    """Texts cut to METADATA_TEXT_LIMIT characters; other JSON-able values as they are."""
    if value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= METADATA_TEXT_LIMIT else text[: METADATA_TEXT_LIMIT - 1] + "…"
