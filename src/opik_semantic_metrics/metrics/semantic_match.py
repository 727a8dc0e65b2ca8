"""SemanticMatch as an Opik metric: the layered word/sentence/paragraph score.

A thin wrapper over :class:`~opik_semantic_metrics.semantic.engine.SemanticMatchEngine`;
the model is loaded once per process and shared by every instance and thread, and
concurrent :meth:`SemanticMatch.score` calls from Opik's worker threads share forward
passes.

Bad input, by design:

- ``output`` that is not a string (``None``, numbers, lists): ``MetricComputationError``
  naming the type; Opik then marks that item's score as failed and leaves it out of
  averages, and the run goes on.
- ``reference`` that is neither a string nor a non-empty list of strings: the same. A
  list is *one* answer in parts (joined with ``", "``), as in the list questions of the
  layered semantic score's recipe,
  not several alternative references (unlike BERTScore's lists).
- an empty ``output`` or ``reference`` (or one of only whitespace, control and zero-width
  characters), or one of punctuation and symbols alone ("?", "✓": no words, so 0.0 even
  against themselves): 0.0, with the reason stated in ``reason`` and
  ``metadata["status"]``. A text of stop words alone is scored on all its words; two
  stop-word-only answers with the same words ("No." and "no") are identical answers and
  score 1.0.
- a text none of whose words the model knows (its tokenizer reads them as [UNK] or drops
  them): 0.0 likewise, and 1.0
  when output and reference are the same such text.
- a text longer than the model's limit (256 tokens for all-MiniLM-L6-v2): cut, as
  sentence-transformers does, and flagged in ``metadata`` and ``reason``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import torch
from opik.evaluation.metrics import score_result

from opik_semantic_metrics.errors import InputError
from opik_semantic_metrics.inputs import as_list
from opik_semantic_metrics.metrics.base import PackageMetric, cut_texts_note
from opik_semantic_metrics.metrics.failure import metric_failure
from opik_semantic_metrics.metrics.reference_fit import ReferenceCounts, ReferenceFit
from opik_semantic_metrics.models.devices import dtype_name
from opik_semantic_metrics.semantic.calibration import DEFAULT_FOLDS, CalibrationReport
from opik_semantic_metrics.semantic.cleaning import Cleaning
from opik_semantic_metrics.semantic.engine import SemanticMatchEngine
from opik_semantic_metrics.semantic.references import reference_text
from opik_semantic_metrics.semantic.results import FittedState, SemanticMatchResult
from opik_semantic_metrics.semantic.settings import DEFAULTS, SemanticMatchSettings, TokenVectors
from opik_semantic_metrics.semantic.statuses import Status

_UNSCORED_REASONS: dict[Status, str] = {
    "empty_output": "the output is empty",
    "empty_reference": "the reference is empty",
    "no_content_output": "the output has no words, only punctuation",
    "no_content_reference": "the reference has no words, only punctuation",
    "same_stop_words": "output and reference are the same stop-word-only answer",
    # A tokenizer reads a script outside its vocabulary as [UNK], and BERT's drops
    # characters it does not know at all (private use, unassigned): no word piece either way.
    "unknown_words_output": "the model knows none of the output's words (its tokenizer "
    "reads them as [UNK] or drops them)",
    "unknown_words_reference": "the model knows none of the reference's words (its tokenizer "
    "reads them as [UNK] or drops them)",
    "same_unknown_words": "output and reference are the same answer, in words the model "
    "does not know",
}


class SemanticMatch(PackageMetric):
    """Layered semantic similarity of an output to a reference answer, in ``[0, 1]``.

    Three cosine-based levels (idf-weighted word-piece alignment, sentence embedding of
    the texts without stop words but with their negations, sentence embedding of the raw
    texts rescaled by a baseline of unrelated pairs) are weighted, lowered where one text
    negates and the other does not or where the output states numbers the reference does
    not (flips that embeddings hardly see), bent towards 0 past a floor and snapped to 1
    near the top; see :mod:`opik_semantic_metrics.semantic.combine` for the formula.
    :meth:`calibrate` fits the weights, penalties and curve to pairs people have scored;
    ``SemanticMatch(**RECIPE_SETTINGS)`` (from
    :mod:`opik_semantic_metrics.semantic.settings`) scores as the layered recipe does.
    Identical answers score 1.0 and unrelated ones near 0.0; a text of punctuation or symbols
    alone ("?", "✓") is no answer and scores 0.0, even against itself.

    Call :meth:`fit` (or :meth:`fit_from_dataset`) on the dataset's references first:
    it weighs rare word pieces more (idf) and measures the paragraph baseline. Without
    it every piece weighs 1 and the baseline is 0, and the metadata says so.

    Every argument but the last three below is a setting of the score (``model``,
    ``weights``, ``floor``, ``snap``, ``token_vectors``, ``paragraph_baseline``,
    ``device``, ``batch_size``, ``dtype``, ``softness``, ``cleaning``,
    ``negation_penalty``, ``number_penalty``, ``long_weights``, ``long_sentences``), each
    documented once, with its default (``DEFAULTS``), in
    :class:`~opik_semantic_metrics.semantic.settings.SemanticMatchSettings`.

    Args:
        name: Metric name.
        track: Track the metric's calls in Opik.
        project_name: Opik project for the tracked calls.

    Raises:
        ValueError: A bad argument.

    Example:
        >>> metric = SemanticMatch(track=False, device="cpu")
        >>> metric.score(output="Heart attack.", reference="Heart attack.").value
        1.0
        >>> result = metric.score(output="Heart attack.", reference="The train leaves at noon.")
        >>> result.value < 0.05, result.metadata["status"]
        (True, 'scored')
    """

    def __init__(
        self,
        model: str = DEFAULTS.model,
        weights: Sequence[float] = DEFAULTS.weights,
        floor: float = DEFAULTS.floor,
        snap: float | None = DEFAULTS.snap,
        token_vectors: TokenVectors = DEFAULTS.token_vectors,
        paragraph_baseline: float | None = DEFAULTS.paragraph_baseline,
        device: str | torch.device | None = DEFAULTS.device,
        name: str = "semantic_match",
        track: bool = True,
        project_name: str | None = None,
        *,
        batch_size: int = DEFAULTS.batch_size,
        dtype: str | torch.dtype | None = DEFAULTS.dtype,
        softness: float = DEFAULTS.softness,
        cleaning: Cleaning = DEFAULTS.cleaning,
        negation_penalty: float = DEFAULTS.negation_penalty,
        number_penalty: float = DEFAULTS.number_penalty,
        long_weights: Sequence[float] | None = DEFAULTS.long_weights,
        long_sentences: int = DEFAULTS.long_sentences,
    ) -> None:
        super().__init__(name=name, track=track, project_name=project_name)
        # Every constructor argument but the metric's own three is a setting, by name.
        given = {key: value for key, value in self.settings.items() if key != "name"}
        self.engine = SemanticMatchEngine(settings=SemanticMatchSettings(**given, device=device))

    # -- fitting -----------------------------------------------------------------------

    def fitted_state(self) -> FittedState:
        """The engine's fitted state: idf, paragraph baseline, calibration."""
        return self.engine.state

    def restore_fitted_state(self, state: Any) -> None:
        """Use a state fitted elsewhere (of a metric with the same settings)."""
        self.engine.state = state

    def reference_fit(self) -> ReferenceFit:
        """idf and the paragraph baseline on a reference column, as :meth:`fit` fits them
        (not required: unfitted, every piece weighs 1 and the baseline is 0)."""
        return _CorpusFit(self)

    def score_rows(self, rows: Mapping[str, Sequence[Any]]) -> list[list[score_result.ScoreResult]]:
        """:meth:`score_batch` of the ``output`` and ``reference`` columns."""
        return [[result] for result in self.score_batch(rows["output"], rows["reference"])]

    def fit(self, references: Sequence[str | Sequence[str]]) -> SemanticMatch:
        """Fit idf and the paragraph baseline on a corpus of reference answers, and
        prepare them (:meth:`prepare`).

        Returns:
            This metric, fitted (``metric = SemanticMatch().fit(references)`` works).

        Raises:
            MetricComputationError: An empty corpus, a malformed reference, or fewer than
                two distinct references (when the baseline is not fixed).
        """
        with self.failing_item():
            self.engine.fit(references)
        return self

    def prepare(self, references: Sequence[str | Sequence[str]]) -> int:
        """Encode a dataset's references before ``opik.evaluate`` runs, in one batched
        pass, so that each item then encodes only its output (:meth:`fit` does it too).

        Scores are the same with or without it; the references are kept in the
        process-wide embedding cache, within its bound.

        Returns:
            How many distinct texts (raw and cleaned references) are cached.

        Raises:
            MetricComputationError: A malformed reference, named.
        """
        with self.failing_item():
            return self.engine.prepare(references)

    def fit_from_items(
        self, items: Sequence[Mapping[str, Any]], reference_key: str = "reference"
    ) -> SemanticMatch:
        """Fit on the ``reference_key`` field of dataset items (dictionaries); returns
        this metric.

        Raises:
            MetricComputationError: ``items`` is not a list (or other sequence, not a
                string), an item is not a mapping or has no such field, or as :meth:`fit`.
        """
        with self.failing_item():
            as_list(items, "items")
        references = []
        for index, item in enumerate(items):
            if not isinstance(item, Mapping) or reference_key not in item:
                raise metric_failure(
                    f"{type(self).__name__}: expected item {index} to be a mapping with a "
                    f"{reference_key!r} field."
                )
            references.append(item[reference_key])
        return self.fit(references)

    def fit_from_dataset(self, dataset: Any, reference_key: str = "reference") -> SemanticMatch:
        """Fit on the references of an Opik dataset (``dataset.get_items()``); returns
        this metric."""
        return self.fit_from_items(dataset.get_items(), reference_key)

    def calibrate(
        self,
        outputs: Sequence[str],
        references: Sequence[str | Sequence[str]],
        human_scores: Sequence[float],
        *,
        folds: int = DEFAULT_FOLDS,
        seed: int = 0,
    ) -> CalibrationReport:
        """Fit the weights, the flip penalties and the output curve to pairs people have
        scored.

        Fit first (:meth:`fit`, on the dataset's references); a later fit drops the
        calibration. The pairs are cross-validated in ``folds`` folds, then the weights
        and curve are fitted on all of them and used by every later score (and kept by
        :meth:`save`). See :meth:`SemanticMatchEngine.calibrate
        <opik_semantic_metrics.semantic.engine.SemanticMatchEngine.calibrate>`.

        Args:
            outputs, references: The labelled pairs.
            human_scores: Per pair, a person's similarity score, on any scale where more
                is more similar.
            folds: Cross-validation folds, 2 or more.
            seed: Seed of the split into folds.

        Returns:
            The fitted combination and, per fold, its held-out Spearman x100 and the
            default's on the same pairs.

        Raises:
            MetricComputationError: A malformed output or reference (as :meth:`score_batch`).
            ValueError: Not one finite human score per pair, too few pairs that can be
                scored, human scores all equal, or a bad ``folds``.
        """
        with self.failing_item():
            return self.engine.calibrate(outputs, references, human_scores, folds=folds, seed=seed)

    def save(self, path: str | Path) -> None:
        """Save the fitted state (idf, paragraph baseline, calibration) as JSON."""
        self.engine.save(path)

    def load(self, path: str | Path) -> SemanticMatch:
        """Load a state saved by :meth:`save` for the same model.

        Returns:
            This metric, fitted (``metric = SemanticMatch().load(path)`` works).

        Raises:
            ValueError: Not a saved state, or one fitted for another model.
        """
        self.engine.load(path)
        return self

    # -- scoring -----------------------------------------------------------------------

    def score(
        self, output: str, reference: str | Sequence[str], **ignored_kwargs: Any
    ) -> score_result.ScoreResult:
        """Score one output; concurrent calls from Opik's threads share forward passes.

        Args:
            output: The text to evaluate.
            reference: The reference answer: a string, or a list of strings forming one
                answer.
            **ignored_kwargs: Other dataset fields, ignored.

        Returns:
            A ScoreResult in ``[0, 1]``; ``metadata`` holds the three levels, the raw
            combined score and the settings, ``reason`` a readable summary.

        Raises:
            MetricComputationError: ``output`` is not a string, ``reference`` is not a
                string or a non-empty list of strings, or the model's vectors give a
                score that is NaN (a damaged checkpoint, an overflow).
        """
        with self.failing_item():
            result = self.engine.score_one(output, reference)
        self.check_scores([_checked_score(result)])
        return self._score_result(result)

    def score_batch(
        self, outputs: Sequence[str], references: Sequence[str | Sequence[str]]
    ) -> list[score_result.ScoreResult]:
        """Score many outputs in batched forward passes; one ScoreResult per item.

        Raises:
            MetricComputationError: An item :meth:`score` would fail, or lists of
                different lengths: checked first, they fail the whole call, naming the item.
        """
        with self.failing_item():
            results = self.engine.score(outputs, references)
        self.check_scores([_checked_score(result) for result in results])
        return [self._score_result(result) for result in results]

    def _score_result(self, result: SemanticMatchResult) -> score_result.ScoreResult:
        engine = self.engine
        state = engine.state
        combination = engine.active_combination
        # The weights this pair was scored with: they move with its sentence count.
        word_weight, sentence_weight, paragraph_weight = combination.weights_for(
            result.sentences or 1.0
        )
        metadata = {
            "status": result.status,
            "word": result.word,
            "word_precision": result.word_precision,
            "word_recall": result.word_recall,
            "sentence": result.sentence,
            "paragraph": result.paragraph,
            "paragraph_cosine": result.paragraph_cosine,
            "negation_flip": result.negation_flip,
            "changed_numbers": result.changed_numbers,
            "sentences": result.sentences,
            "raw_score": result.raw_score,
            "snapped": result.snapped,
            "output_truncated": result.output_truncated,
            "reference_truncated": result.reference_truncated,
            "model": engine.model_name,
            "dtype": dtype_name(engine.encoder.dtype),
            "token_vectors": engine.token_vectors,
            "cleaning": engine.cleaning,
            "weights": {
                "word": word_weight,
                "sentence": sentence_weight,
                "paragraph": paragraph_weight,
            },
            "long_weights": None
            if combination.long_weights is None
            else dict(
                zip(("word", "sentence", "paragraph"), combination.long_weights, strict=True)
            ),
            "long_sentences": combination.long_sentences,
            "aligned_flips": combination.aligned_flips,
            "floor": combination.floor,
            "snap": combination.snap,
            "softness": combination.softness,
            "negation_penalty": combination.negation_penalty,
            "number_penalty": combination.number_penalty,
            "calibrated": state.calibration is not None,
            "fitted": state.fitted,
            "idf": (
                f"fitted on {state.idf.num_documents} references"
                if state.fitted
                else "uniform (not fitted: every word piece weighs 1)"
            ),
            "paragraph_baseline": state.paragraph_baseline,
            "paragraph_baseline_source": state.baseline_source,
        }
        return score_result.ScoreResult(
            name=self.name, value=result.score, reason=self._reason(result), metadata=metadata
        )

    def _reason(self, result: SemanticMatchResult) -> str:
        """One line a person can read in the Opik UI."""
        if result.status != "scored":
            return f"SemanticMatch {result.score:.1f}: {_UNSCORED_REASONS[result.status]}."
        combination = self.engine.active_combination
        state = self.engine.state
        parts = [
            f"SemanticMatch {result.score:.3f} (word {result.word:.3f}, sentence "
            f"{result.sentence:.3f}, paragraph {result.paragraph:.3f}; raw {result.raw_score:.3f})"
        ]
        if result.negation_flip and combination.negation_penalty:
            penalty = combination.negation_penalty * result.negation_flip
            if result.negation_flip == 1.0:
                parts.append(f"one text negates, the other not (-{penalty:.3g})")
            else:
                parts.append(
                    f"a one-sided negation counted at {result.negation_flip:.0%} (its "
                    "sentences' share of the output's words, times what the encoder's cosine "
                    f"missed of it) (-{penalty:.3g})"
                )
        if result.changed_numbers and combination.number_penalty:
            parts.append(
                f"{result.changed_numbers:.0%} of the output's numbers (by sentence) are not in "
                f"the reference (-{combination.number_penalty * result.changed_numbers:.3g})"
            )
        if result.snapped:
            parts.append(f"snapped to 1.0 (>= {combination.snap})")
        elif result.score == 0.0:
            parts.append(f"raw score at or below the floor {combination.floor}")
        if not state.fitted:
            parts.append("idf not fitted (uniform)")
        if state.baseline_source == "default":
            parts.append("paragraph baseline not fitted (0)")
        cut = cut_texts_note(
            result.output_truncated, result.reference_truncated, self.engine.max_length
        )
        if cut is not None:
            parts.append(cut)
        return "; ".join(parts) + "."


def _checked_score(result: SemanticMatchResult) -> float:
    """The score a NaN from the model shows in: the raw score, because the floor turns
    a NaN raw score into a final 0.0 (no raw score where a text was empty)."""
    return result.score if result.raw_score is None else result.raw_score


class _CorpusFit(ReferenceFit):
    """SemanticMatch's fit on a reference column, equal to :meth:`SemanticMatch.fit` on it:
    each reference text is counted, and the state is fitted on the counted texts."""

    def __init__(self, metric: SemanticMatch) -> None:
        self.metric = metric

    def count(self, references: Sequence[Any]) -> ReferenceCounts[str]:
        """How often each reference text occurs (a list joined into one answer, as
        :meth:`SemanticMatch.fit` reads it); a reference that is not text is left out."""
        counts = ReferenceCounts[str]()
        for reference in references:
            try:
                text = reference_text(reference, "reference")
            except InputError:
                continue
            counts.keys[text] += 1
            counts.texts += 1
        return counts

    def state(self, counts: ReferenceCounts[str]) -> FittedState:
        """The state :meth:`SemanticMatch.fit` gives on the counted texts (their order
        does not matter to it); the metric keeps its own.

        Raises:
            ValueError: No reference, or (the baseline not fixed) fewer than two distinct
                ones.
        """
        engine = self.metric.engine
        previous = engine.state
        try:
            return engine.fit(sorted(counts.keys.elements()))
        finally:
            engine.state = previous
