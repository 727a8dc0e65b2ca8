"""What the package's four Opik metrics share, so that each metric file holds its own logic.

- :class:`PackageMetric` checks the settings every metric takes (``track``) when it is
  built, turns an engine's refusal of one item (:class:`~opik_semantic_metrics.errors.InputError`,
  and for AnswerMatch a failed semantic scorer) into the ``MetricComputationError`` with
  which Opik fails that item and goes on (:meth:`PackageMetric.failing_item`), and fails
  a call whose model gave a score that is no number (:meth:`PackageMetric.check_scores`:
  a model's output, not the user's input, so not a check of
  :mod:`~opik_semantic_metrics.inputs`).
- :func:`record_metadata` writes an engine's frozen record (a token match, an error
  span) into a result's ``metadata`` as a plain dictionary.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator, Sequence
from typing import Any

from opik.evaluation.metrics import base_metric

from opik_semantic_metrics.errors import InputError
from opik_semantic_metrics.inputs import check_flag, is_finite_number, item_name
from opik_semantic_metrics.metrics.failure import metric_failure


class PackageMetric(base_metric.BaseMetric):
    """An Opik metric of this package: Opik's ``BaseMetric`` with the shared failure path.

    Args:
        name: Metric name.
        track: Track the metric's calls in Opik; a bool (a string such as ``"False"``
            would switch tracking on, so it is refused).
        project_name: Opik project for the tracked calls.

    Raises:
        ValueError: ``track`` is not a bool.
    """

    def __init__(self, name: str, track: bool, project_name: str | None) -> None:
        super().__init__(name=name, track=check_flag(track, "track"), project_name=project_name)

    @contextlib.contextmanager
    def failing_item(self, *refusals: type[Exception]) -> Iterator[None]:
        """Within it, an engine's refusal (``InputError``, or the ``refusals`` given) is
        raised as a ``MetricComputationError`` starting with the metric's class name:
        Opik fails that item and the run goes on.

        Example:
            >>> from opik_semantic_metrics import AnswerMatch
            >>> with AnswerMatch(track=False).failing_item():
            ...     raise InputError("Expected a string.")
            Traceback (most recent call last):
            ...
            opik.exceptions.MetricComputationError: AnswerMatch: Expected a string.
        """
        refused: tuple[type[Exception], ...] = (InputError, *refusals)
        try:
            yield
        except refused as error:
            raise metric_failure(f"{type(self).__name__}: {error}") from error

    def check_scores(self, scores: Sequence[float]) -> None:
        """Fail the call where the model gave a score that is no number.

        A checkpoint whose weights hold NaN, or an overflow in float16, gives NaN for every
        text: logged as a score, it would make Opik's mean of the experiment NaN. What a
        model produced is no input of the user's, so this check lives here, with the
        metric's other failures, not in :mod:`~opik_semantic_metrics.inputs`.

        Raises:
            MetricComputationError: A score is NaN or infinite; the item is named where
                there are several.

        Example:
            >>> from opik_semantic_metrics import AnswerMatch
            >>> AnswerMatch(track=False).check_scores([0.8, float("nan")])  # doctest: +ELLIPSIS
            Traceback (most recent call last):
            ...
            opik.exceptions.MetricComputationError: AnswerMatch: the model gave item 1 ...
        """
        for index, score in enumerate(scores):
            if not is_finite_number(score):
                where = item_name("item", index, len(scores))
                raise metric_failure(
                    f"{type(self).__name__}: the model gave {where} the score {score}, which is "
                    "no number: its weights may hold NaN, or its dtype (float16, bfloat16) "
                    "overflowed."
                )


def record_metadata(record: Any) -> dict[str, Any] | None:
    """An engine's frozen record as ``metadata`` holds it: its fields as a dictionary;
    ``None`` stays ``None``.

    Example:
        >>> from opik_semantic_metrics.bertscore.results import TokenMatch
        >>> record_metadata(TokenMatch("cat", "cat", 0.99))
        {'candidate_token': 'cat', 'reference_token': 'cat', 'similarity': 0.99}
    """
    return None if record is None else dataclasses.asdict(record)
