"""COMET as an Opik metric: translation quality, equal to unbabel-comet 2.2.7.

A thin wrapper over :class:`~opik_semantic_metrics.comet.engine.CometEngine`; the model is
loaded once per process, when the metric is built, and shared by every instance and thread.

In an Opik dataset the source text is the item's ``input`` (a key named ``source`` never
reaches a metric: it collides with Opik's own item field), the translation is the task's
``output`` and the reference is ``reference``.

Bad input, by design:

- ``input`` or ``output`` that is not a string (``None``, numbers, lists):
  ``MetricComputationError`` naming the type; Opik marks that item's score as failed,
  leaves it out of averages, and the run goes on.
- a ``reference`` of ``None`` (an empty cell) with a model that needs one
  (``wmt22-comet-da`` and every regression model): the same error, saying so.
- no ``reference`` field at all, with a model that needs one: Opik's
  ``ScoreMethodMissingArguments``, naming ``reference`` and ``scoring_key_mapping``, which
  stops the run at its first item, as Opik does for a metric whose field is missing:
  such a dataset nearly always names its references otherwise (``expected_output``).
  A reference-free model (COMETKiwi, QE models) ignores ``reference`` whatever it is;
  XCOMET uses it when given and scores without it (quality estimation) when it is
  missing or ``None``.
- a ``reference`` that is given but not a string, for a model that reads references: the
  same error.
- empty or whitespace-only texts: scored as COMET scores them (the model sees only its
  special tokens); no special case.
- a text longer than the model's limit (510 tokens for XLM-R models): cut as COMET cuts
  it, and named in ``metadata["truncated"]`` and ``reason``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import torch
from opik.evaluation.metrics import score_result
from opik.exceptions import ScoreMethodMissingArguments

from opik_semantic_metrics.comet.checkpoint import DEFAULT_MODEL
from opik_semantic_metrics.comet.engine import CometEngine, CometResult
from opik_semantic_metrics.compare.corpus import system_score_function
from opik_semantic_metrics.compare.stats import CONFIDENCE, RESAMPLES, SEED
from opik_semantic_metrics.metrics.base import PackageMetric, RowArguments, record_metadata
from opik_semantic_metrics.records import comet_record


class _NoReferenceField:
    """``reference``'s default: the dataset item has no such field (``None`` is a field
    whose cell is empty)."""

    def __repr__(self) -> str:
        return "<no reference field>"


_NO_REFERENCE_FIELD: Any = _NoReferenceField()


class COMET(PackageMetric):
    """COMET (Rei et al., 2020) of a translation given its source (and reference).

    Args:
        model: Hub id of a COMET model (``Unbabel/wmt22-comet-da`` by default;
            ``Unbabel/wmt22-cometkiwi-da`` and ``Unbabel/XCOMET-XL`` are gated: accept
            their licence on the Hub and log in), a model directory, or a ``model.ckpt``.
        batch_size: Most sequences per forward pass, and most concurrent :meth:`score`
            calls coalesced into one batch.
        device: ``"cpu"``, ``"cuda"``...; ``None`` picks CUDA when available. On a CPU, size
            threads with ``OMP_NUM_THREADS`` before Python starts (the docs' "GPU and fast
            mode" page).
        dtype: Encoder weight type: float32 by default (equal to unbabel-comet);
            ``"fast"`` for bfloat16/float16 where the hardware has it
            (``docs/gpu-and-fast-mode.md`` for its deviation).
        name: Metric name.
        track: Track the metric's calls in Opik.
        project_name: Opik project for the tracked calls.

    Raises:
        ValueError: ``batch_size`` below 1, an unknown ``dtype``, or an unsupported model
            class or setting.
        ModelUnavailableError: The model cannot be had, or its checkpoint holds pickled code.

    Example:
        A tiny test model (``tests/fixtures/comet``); unbabel-comet gives it 0.2156 too:

        >>> metric = COMET("tests/fixtures/comet/regression-xlmr", device="cpu", track=False)
        >>> result = metric.score(
        ...     input="The cat sat on the mat.",
        ...     output="Die Katze saß auf der Matte.",
        ...     reference="Die Katze sitzt auf der Matte.",
        ... )
        >>> result.name, round(result.value, 4)
        ('comet', 0.2156)
    """

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        batch_size: int = 16,
        device: str | torch.device | None = None,
        name: str = "comet",
        track: bool = True,
        project_name: str | None = None,
        dtype: str | torch.dtype | None = None,
    ) -> None:
        super().__init__(name=name, track=track, project_name=project_name)
        self.engine = CometEngine(model, device=device, dtype=dtype, batch_size=batch_size)

    def score(
        self,
        input: str,
        output: str,
        reference: str | None = _NO_REFERENCE_FIELD,
        **ignored_kwargs: Any,
    ) -> score_result.ScoreResult:
        """Score one translation; concurrent calls from Opik's threads share forward passes.

        Args:
            input: The source text.
            output: The translation to evaluate.
            reference: The reference translation; ignored by reference-free models, and
                optional for XCOMET.
            **ignored_kwargs: Other dataset fields, ignored.

        Returns:
            The segment score, with the model, versions, truncation, partial scores and
            (word-level models such as XCOMET) the error spans in ``metadata``.

        Raises:
            MetricComputationError: A non-string text, a ``None`` reference for a model
                that needs one, or a score that is NaN (a damaged checkpoint, an overflow).
            ScoreMethodMissingArguments: No ``reference`` at all for a model that needs one.
        """
        if reference is _NO_REFERENCE_FIELD:
            if self.engine.requires_references:
                raise ScoreMethodMissingArguments(
                    self.name, ["reference"], ["input", "output", *ignored_kwargs]
                )
            reference = None
        with self.failing_item():
            result = self.engine.score_one(input, output, reference)
        self.check_scores([result.score])
        return self._score_result(result)

    def row_arguments(self) -> RowArguments:
        """``input`` and ``output``, and ``reference`` where the model needs it (else
        read where given)."""
        if self.engine.requires_references:
            return RowArguments(("input", "output", "reference"))
        return self.entry.reads

    def score_rows(self, rows: Mapping[str, Sequence[Any]]) -> list[list[score_result.ScoreResult]]:
        """:meth:`score_batch` of the ``input``, ``output`` and ``reference`` columns."""
        results = self.score_batch(rows["input"], rows["output"], rows.get("reference"))
        return [[result] for result in results]

    def prepare(
        self,
        inputs: Sequence[str] | None = None,
        references: Sequence[str | None] | None = None,
    ) -> int:
        """Encode a dataset's sources (``input``) and references before ``opik.evaluate``
        runs, in one batched pass, so that each item then encodes only its output.

        Scores are the same with or without it; the texts are kept in the process-wide
        embedding cache, within its bound. Unified models (COMETKiwi, XCOMET) share no
        encodings between items: there it does nothing.

        Returns:
            How many distinct texts are cached.

        Raises:
            MetricComputationError: A source or reference :meth:`score` would refuse.
        """
        with self.failing_item():
            return self.engine.prepare(inputs, references)

    def score_batch(
        self,
        inputs: Sequence[str],
        outputs: Sequence[str],
        references: Sequence[str | None] | None = None,
    ) -> list[score_result.ScoreResult]:
        """Score many translations in batched forward passes; one result per item.

        Raises:
            MetricComputationError: An item :meth:`score` would fail, or lists of
                different lengths: checked first, they fail the whole call, naming the item.
        """
        with self.failing_item():
            results = self.engine.score(inputs, outputs, references)
        self.check_scores([result.score for result in results])
        return [self._score_result(result) for result in results]

    def experiment_scoring_functions(
        self, *, confidence: float = CONFIDENCE, resamples: int = RESAMPLES, seed: int = SEED
    ) -> list[Callable[[list[Any]], list[score_result.ScoreResult]]]:
        """Functions for ``opik.evaluate(experiment_scoring_functions=...)``: the system score.

        COMET's system score is the mean of the segment scores; it comes with a bootstrap
        confidence interval, and failed items are counted, not averaged in (see
        :func:`~opik_semantic_metrics.compare.corpus.system_score_function`).
        """
        return [
            system_score_function(self.name, confidence=confidence, resamples=resamples, seed=seed)
        ]

    def _score_result(self, result: CometResult) -> score_result.ScoreResult:
        metadata: dict[str, Any] = {
            **comet_record(self.engine),
            "used_reference": result.used_reference,
            "truncated": list(result.truncated),
        }
        if result.partial_scores:
            metadata["partial_scores"] = dict(result.partial_scores)
        if result.error_spans is not None:
            metadata["error_spans"] = [record_metadata(span) for span in result.error_spans]
        return score_result.ScoreResult(
            name=self.name, value=result.score, reason=self._reason(result), metadata=metadata
        )

    def _reason(self, result: CometResult) -> str:
        """One line a person can read in the Opik UI."""
        reference = "with reference" if result.used_reference else "without reference"
        parts = [
            f"COMET {result.score:.4f} ({self.engine.model_name}, "
            f"{self.engine.class_identifier}, {reference})"
        ]
        if result.error_spans is not None:
            counts: dict[str, int] = {}
            for span in result.error_spans:
                counts[span.severity] = counts.get(span.severity, 0) + 1
            described = ", ".join(f"{count} {severity}" for severity, count in counts.items())
            parts.append(
                f"{len(result.error_spans)} error spans" + (f" ({described})" if described else "")
            )
        if result.truncated:
            parts.append(f"cut to the model's limit: {', '.join(result.truncated)}")
        return "; ".join(parts) + "."
