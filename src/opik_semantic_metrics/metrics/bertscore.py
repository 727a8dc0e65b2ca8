"""BERTScore as an Opik metric: F1, precision and recall, faithful to bert_score.

A thin wrapper over :class:`~opik_semantic_metrics.bertscore.engine.BERTScoreEngine`;
the model is loaded once per process, when the first metric using it is built, and
shared by every instance and thread.

Bad input, by design:

- ``output`` that is not a string (``None``, numbers, lists): ``MetricComputationError``
  naming the type; Opik then marks that item's score as failed and leaves it out of
  averages, and the run goes on.
- ``reference`` that is neither a string nor a non-empty list of strings, a text with an
  unpaired surrogate (no tokenizer reads one), or ``idf=True`` before :meth:`fit_idf`:
  the same.
- an empty or whitespace-only ``output`` or ``reference``: scores 0.0, as bert_score
  documents (raw scores; with rescaling, 0 is rescaled like any other raw score), with
  the fact stated in ``reason`` and ``metadata``.
- a text longer than the model's limit (512 tokens for most): cut to the limit, as
  bert_score does, and flagged in ``metadata`` (``candidate_truncated``,
  ``reference_truncated``) and ``reason``.
- with ``idf=True``, a P or R that is undefined because every token of the text has
  idf weight 0 (it occurs in every reference of the idf corpus): bert_score returns NaN;
  we return 0.0 and list the score in ``metadata["undefined"]``.
- raw P and R of opposite signs (a model whose token similarities go negative, on text
  it cannot read): the raw F1 is 0, flagged in ``metadata["opposite_signs"]`` and
  ``reason``; bert_score's ``2PR / (P + R)`` is unbounded there (see ``bertscore/greedy.py``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import torch
from opik.evaluation.metrics import score_result

from opik_semantic_metrics.bertscore.engine import (
    BERTScoreEngine,
    BERTScoreResult,
)
from opik_semantic_metrics.bertscore.idf import IdfTable, idf_from_document_frequencies
from opik_semantic_metrics.errors import InputError
from opik_semantic_metrics.inputs import reference_texts
from opik_semantic_metrics.metrics.base import PackageMetric, cut_texts_note, record_metadata
from opik_semantic_metrics.metrics.reference_fit import ReferenceCounts, ReferenceFit
from opik_semantic_metrics.records import bertscore_record

#: The three scores of an item, in order.
_SCORES = ("f1", "precision", "recall")


class BERTScore(PackageMetric):
    """BERTScore (Zhang et al., 2020) of an output against one or several references.

    Args:
        model: Hub id, local directory, or ``"all-MiniLM-L6-v2"`` (the packaged offline
            model). ``None`` follows bert_score: the default model of ``lang``
            (``en``, the default: ``roberta-large`` at layer 17).
        num_layers: Layer to use; ``None`` takes bert_score's tuned layer for known models
            and the last layer otherwise.
        idf: Weigh tokens by idf fitted on a reference corpus with :meth:`fit_idf`.
        rescale_with_baseline: Rescale with a baseline (bert_score's packaged file for
            ``lang`` and the model, or ``baseline_path``).
        baseline_path: A baseline file of your own in bert_score's format.
        lang: Language code for the default model and the packaged baseline.
        device: ``"cpu"``, ``"cuda"``...; ``None`` picks CUDA when available. On a CPU, size
            threads with ``OMP_NUM_THREADS`` before Python starts (the docs' "GPU and fast
            mode" page).
        name: Metric name; the three results are ``<name>_f1``, ``<name>_precision``,
            ``<name>_recall``.
        track: Track the metric's calls in Opik.
        project_name: Opik project for the tracked calls.
        batch_size: Most texts per forward pass of :meth:`score_batch`.
        micro_batch_size: Most concurrent :meth:`score` calls (Opik's worker threads)
            in batches at a time; on a CPU shared between two batcher workers
            (see :class:`~opik_semantic_metrics.bertscore.engine.BERTScoreEngine`).
        dtype: Model weight type: float32 by default; ``"fast"`` for bfloat16/float16
            where the hardware has it (``docs/gpu-and-fast-mode.md`` for its deviation,
            and its scores' dependence on batching).
        idf_references: References to fit idf on at construction.

    Raises:
        ValueError: Inconsistent settings (a layer the model lacks, rescaling without a
            baseline, an unknown ``dtype``...).
        ModelUnavailableError: The model cannot be had (it loads here, not per item).

    Example:
        >>> metric = BERTScore(model="all-MiniLM-L6-v2", device="cpu", track=False)
        >>> f1, precision, recall = metric.score(
        ...     output="A cat sits on the mat.", reference="A cat sat on the mat."
        ... )
        >>> f1.name, round(f1.value, 4)
        ('bertscore_f1', 0.9387)
    """

    def __init__(
        self,
        model: str | None = None,
        num_layers: int | None = None,
        idf: bool = False,
        rescale_with_baseline: bool = False,
        baseline_path: str | Path | None = None,
        lang: str | None = None,
        device: str | torch.device | None = None,
        name: str = "bertscore",
        track: bool = True,
        project_name: str | None = None,
        *,
        batch_size: int = 64,
        micro_batch_size: int = 16,
        dtype: str | torch.dtype | None = None,
        idf_references: Sequence[str | Sequence[str]] | None = None,
    ) -> None:
        super().__init__(name=name, track=track, project_name=project_name)
        self.engine = BERTScoreEngine(
            model,
            num_layers,
            lang=lang,
            idf=idf,
            idf_references=idf_references,
            rescale_with_baseline=rescale_with_baseline,
            baseline_path=baseline_path,
            device=device,
            dtype=dtype,
            batch_size=batch_size,
            micro_batch_size=micro_batch_size,
        )

    def fitted_state(self) -> IdfTable | None:
        """The idf table (fitted by :meth:`fit_idf` or ``idf_references``), if any."""
        return self.engine.idf_table

    def restore_fitted_state(self, state: Any) -> None:
        """Use an idf table fitted elsewhere, as :meth:`fit_idf` sets it."""
        self.engine.idf_table = state

    def score_names(self) -> tuple[str, ...]:
        """``<name>_f1``, ``<name>_precision``, ``<name>_recall``."""
        return tuple(f"{self.name}_{key}" for key in _SCORES)

    def score_rows(self, rows: Mapping[str, Sequence[Any]]) -> list[list[score_result.ScoreResult]]:
        """:meth:`score_batch` of the ``output`` and ``reference`` columns."""
        return self.score_batch(rows["output"], rows["reference"])

    def reference_fit(self) -> ReferenceFit | None:
        """With ``idf=True``: idf fitted on a reference column (required until fitted)."""
        return _IdfFit(self) if self.engine.idf else None

    def fit_idf(self, references: Sequence[str | Sequence[str]]) -> None:
        """Fit idf weights on a dataset's references (needed when ``idf=True``); they are
        prepared (:meth:`prepare`) too."""
        with self.failing_item():
            self.engine.fit_idf(references)

    def prepare(self, references: Sequence[str | Sequence[str]]) -> int:
        """Encode a dataset's references before ``opik.evaluate`` runs, in one batched
        pass, so that each item then encodes only its output.

        Scores are the same with or without it; the references are kept in the
        process-wide embedding cache, within its bound.

        Args:
            references: Per item, a reference text or a list of them.

        Returns:
            How many distinct reference texts are cached.

        Raises:
            MetricComputationError: An item :meth:`score` would refuse, named.
        """
        with self.failing_item():
            return self.engine.prepare(references)

    def score(
        self, output: str, reference: str | Sequence[str], **ignored_kwargs: Any
    ) -> list[score_result.ScoreResult]:
        """Score one output; concurrent calls from Opik's threads share forward passes.

        Args:
            output: The text to evaluate.
            reference: A reference text, or a list of them (each score is then the
                maximum over the references, as in bert_score).
            **ignored_kwargs: Other dataset fields, ignored.

        Returns:
            ``[f1, precision, recall]`` as ScoreResults.

        Raises:
            MetricComputationError: ``output`` is not a string, ``reference`` is not a
                string or a non-empty list of strings, a text holds an unpaired surrogate,
                or ``idf=True`` and :meth:`fit_idf` has not been called.
        """
        with self.failing_item():
            result = self.engine.score_one(output, reference)
        return self._score_results(result)

    def score_batch(
        self, outputs: Sequence[str], references: Sequence[str | Sequence[str]]
    ) -> list[list[score_result.ScoreResult]]:
        """Score many outputs in batched forward passes; one ``[f1, P, R]`` list per item.

        Raises:
            MetricComputationError: An item :meth:`score` would fail, or lists of
                different lengths: checked first, they fail the whole call, naming the item.
        """
        with self.failing_item():
            results = self.engine.score(outputs, references)
        return [self._score_results(result) for result in results]

    def _score_results(self, result: BERTScoreResult) -> list[score_result.ScoreResult]:
        engine = self.engine
        values = {"f1": result.f1, "precision": result.precision, "recall": result.recall}
        undefined = [key for key, value in values.items() if math.isnan(value)]
        values = {key: 0.0 if math.isnan(value) else value for key, value in values.items()}
        metadata: dict[str, Any] = {
            **values,
            **bertscore_record(engine),
            "candidate_truncated": result.candidate_truncated,
            "reference_truncated": result.reference_truncated,
            "candidate_empty": result.candidate_empty,
            "reference_empty": result.reference_empty,
            "opposite_signs": result.opposite_signs,
            "best_reference": result.best_reference,
            "candidate_unknown_tokens": result.candidate_unknown_tokens,
            "reference_unknown_tokens": result.reference_unknown_tokens,
            "best_match": record_metadata(result.best_match),
            "worst_match": record_metadata(result.worst_match),
        }
        if undefined:
            metadata["undefined"] = undefined
        reason = _reason(values, result, engine, undefined)
        return [
            score_result.ScoreResult(
                name=f"{self.name}_{key}", value=values[key], reason=reason, metadata=metadata
            )
            for key in _SCORES
        ]


def _reason(
    values: dict[str, float],
    result: BERTScoreResult,
    engine: BERTScoreEngine,
    undefined: list[str],
) -> str:
    """One line a person can read in the Opik UI."""
    setting = f"{engine.model_name} L{engine.num_layers}"
    if engine.idf:
        setting += ", idf"
    if engine.rescale_with_baseline:
        setting += ", rescaled"
    parts = [
        f"BERTScore F1 {values['f1']:.3f} (P {values['precision']:.3f}, "
        f"R {values['recall']:.3f}; {setting})"
    ]
    if result.candidate_empty or result.reference_empty:
        side = "output" if result.candidate_empty else "reference"
        parts.append(f"the {side} is empty, so the raw scores are 0 (bert_score's rule)")
    elif result.best_match is not None and result.worst_match is not None:
        best, worst = result.best_match, result.worst_match
        parts.append(
            f"best match '{best.candidate_token}'->'{best.reference_token}' "
            f"{best.similarity:.2f}, weakest '{worst.candidate_token}'->"
            f"'{worst.reference_token}' {worst.similarity:.2f}"
        )
    if result.opposite_signs:
        parts.append("P and R have opposite signs, so the raw F1 is 0 (2PR/(P+R) is unbounded)")
    cut = cut_texts_note(
        result.candidate_truncated, result.reference_truncated, engine.encoder.max_length
    )
    if cut is not None:
        parts.append(cut)
    if undefined:
        # All weights 0: idf 0 for every token, or (idf on or off) special tokens only, as
        # an output that is the text "[SEP]".
        parts.append(f"{', '.join(undefined)} undefined (every token weighs 0), reported as 0")
    return "; ".join(parts) + "."


class _IdfFit(ReferenceFit):
    """BERTScore's idf on a reference column, equal to :meth:`BERTScore.fit_idf` on it."""

    def __init__(self, metric: BERTScore) -> None:
        self.metric = metric
        self.required = metric.engine.idf_table is None

    def count(self, references: Sequence[Any]) -> ReferenceCounts[int]:
        """In how many reference texts each token id occurs, tokenised as
        :meth:`BERTScore.fit_idf` does; a reference that is not text is left out."""
        texts: list[str] = []
        for reference in references:
            try:
                texts.extend(reference_texts(reference, "reference"))
            except InputError:
                continue
        counts = ReferenceCounts[int](texts=len(texts))
        for encoded in self.metric.engine.text_encoder.encode_many(texts):
            counts.keys.update(set(encoded.ids))
        return counts

    def state(self, counts: ReferenceCounts[int]) -> IdfTable:
        """The idf table of the counted texts.

        Raises:
            ValueError: No reference is text.
        """
        if counts.texts == 0:
            raise ValueError("no reference is text: idf cannot be fitted.")
        return idf_from_document_frequencies(counts.keys, counts.texts)
