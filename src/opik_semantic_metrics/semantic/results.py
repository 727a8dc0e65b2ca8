"""What the layered score gives: a text's encoding, the fitted state, a pair's result."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

import torch

from opik_semantic_metrics.semantic.combine import Combination
from opik_semantic_metrics.semantic.idf import SmoothedIdf
from opik_semantic_metrics.semantic.statuses import SAME_STATUSES, Status

#: The paragraph baseline without a fit: no rescaling.
DEFAULT_PARAGRAPH_BASELINE: Final = 0.0


@dataclass(frozen=True)
class TextEncoding:
    """What one forward pass over a text gives.

    Attributes:
        sentence: ``(width,)`` L2-normalised sentence embedding.
        piece_ids: Ids of the text's alphanumeric word pieces, in order.
        piece_vectors: ``(pieces, width)`` their L2-normalised contextual vectors.
        truncated: The text was longer than the model's limit and was cut.
    """

    sentence: torch.Tensor
    piece_ids: tuple[int, ...]
    piece_vectors: torch.Tensor
    truncated: bool


@dataclass(frozen=True)
class FittedState:
    """Corpus statistics the score depends on.

    Attributes:
        idf: Smoothed idf of the word pieces (uniform when not fitted).
        paragraph_baseline: ``b`` of the paragraph level.
        baseline_source: ``"fitted"``, ``"fixed"`` (given by the caller) or ``"default"``.
        calibration: Weights and curve fitted to labelled pairs by
            :meth:`SemanticMatchEngine.calibrate`, used instead of the engine's own;
            ``None`` when not calibrated.
    """

    idf: SmoothedIdf
    paragraph_baseline: float
    baseline_source: Literal["fitted", "fixed", "default"]
    calibration: Combination | None = None

    @property
    def fitted(self) -> bool:
        """True once idf has been fitted on a reference corpus."""
        return self.idf.num_documents > 0


@dataclass(frozen=True)
class SemanticMatchResult:
    """The layered score of one output against its reference.

    Layer fields are ``None`` where the pair was not scored (see ``status``).

    Attributes:
        score: The final score in ``[0, 1]``.
        raw_score: The weighted sum of the levels less the flip penalties, before the
            curve and snap.
        word, word_precision, word_recall: The word level (F1) and its two halves.
        sentence: Cosine of the cleaned texts' sentence embeddings.
        paragraph: The raw texts' cosine rescaled by the baseline.
        paragraph_cosine: The raw texts' cosine (a plain sentence-embedding cosine).
        negation_flip: The share of the output's words in sentences where exactly one
            of the sentence and its aligned reference sentence negates (1.0 or 0.0 for
            one-sentence texts, see :mod:`~opik_semantic_metrics.semantic.flips`), times
            how much of it the plain cosine missed
            (:func:`~opik_semantic_metrics.semantic.combine.negation_unseen`).
        changed_numbers: The share of the output's numbers its aligned reference
            sentences do not state, each sentence weighted by its share of the words.
        sentences: The mean of the two texts' sentence counts, which sets the pair's
            weights (see :mod:`~opik_semantic_metrics.semantic.combine`).
        snapped: The score was snapped to 1.0.
        status: ``"scored"``, or why not (see
            :mod:`~opik_semantic_metrics.semantic.statuses`).
        output_truncated, reference_truncated: A text was cut to the model's limit.
    """

    score: float
    raw_score: float | None
    word: float | None
    word_precision: float | None
    word_recall: float | None
    sentence: float | None
    paragraph: float | None
    paragraph_cosine: float | None
    negation_flip: float | None
    changed_numbers: float | None
    sentences: float | None
    snapped: bool
    status: Status
    output_truncated: bool
    reference_truncated: bool


def unscored(status: Status) -> SemanticMatchResult:
    """The result of a pair a rule of :mod:`~opik_semantic_metrics.semantic.statuses`
    applies to: 1.0 for the same answer, else 0.0, with no levels."""
    return SemanticMatchResult(
        score=1.0 if status in SAME_STATUSES else 0.0,
        raw_score=None,
        word=None,
        word_precision=None,
        word_recall=None,
        sentence=None,
        paragraph=None,
        paragraph_cosine=None,
        negation_flip=None,
        changed_numbers=None,
        sentences=None,
        snapped=False,
        status=status,
        output_truncated=False,
        reference_truncated=False,
    )
