"""What a metric instance becomes to travel to Ray's actors: its settings and fitted state.

A metric holds a loaded model, locks and worker threads, none of which can be pickled,
and a model is better loaded once by each actor than shipped through the object store.
So :func:`blueprint_of` reads what the metric declares of itself
(:class:`~opik_semantic_metrics.metrics.base.PackageMetric`: every constructor setting,
its fitted state, the row arguments it reads, the scores it returns) into a
:class:`MetricBlueprint`, and each actor calls :meth:`MetricBlueprint.build` once: the same
metric class, built with the same settings and given the same state, on the actor's
device. A setting that is itself a metric (AnswerMatch's ``semantic=``) travels as a
blueprint of its own; one that names a file travels as the file's bytes. Scoring then goes
through the metric's own :meth:`~opik_semantic_metrics.metrics.base.PackageMetric.score_rows`,
so no score is computed twice in two ways. Nothing here knows a metric by name.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from opik_semantic_metrics.errors import shown
from opik_semantic_metrics.metrics.base import PackageMetric, RowArguments


@dataclass(frozen=True)
class MetricBlueprint:
    """A metric's class, settings and fitted state, picklable, to rebuild it elsewhere.

    Attributes:
        kind: Which metric (:attr:`~opik_semantic_metrics.metrics.base.PackageMetric.kind`).
        name: The metric's name (its scores are named after it).
        score_names: The names of the scores one item gets, in order.
        reads: The row arguments it reads.
        settings: Its constructor's settings; a metric among them as a blueprint.
        state: Its fitted state (``None``: nothing fitted).
        files: The bytes of each setting that names a file, written to a temporary
            file where the metric is rebuilt (workers need not share a disk).
        uses_model: Whether scoring runs a model.
    """

    kind: str
    name: str
    score_names: tuple[str, ...]
    reads: RowArguments
    settings: dict[str, Any] = field(default_factory=dict)
    state: Any = None
    files: dict[str, bytes] = field(default_factory=dict)
    uses_model: bool = True

    @property
    def required(self) -> tuple[str, ...]:
        """Arguments every row must supply."""
        return self.reads.required

    @property
    def arguments(self) -> tuple[str, ...]:
        """Every argument the metric reads, required first."""
        return self.reads.all

    @property
    def error_column(self) -> str:
        """The column that holds a row's error message (``None`` where it scored)."""
        return f"{self.name}_error"

    def build(self, device: str) -> PackageMetric:
        """The metric, rebuilt with its settings and state on ``device``."""
        metric_class = PackageMetric.registered()[self.kind]
        settings = {
            key: value.build(device) if isinstance(value, MetricBlueprint) else value
            for key, value in self.settings.items()
        }
        for key, data in self.files.items():
            handle, path = tempfile.mkstemp(prefix=f"{self.kind}-{key}-")
            with os.fdopen(handle, "wb") as file:
                file.write(data)
            settings[key] = path
        metric = metric_class.untracked(settings, device)
        metric.restore_fitted_state(self.state)
        return metric

    def score_rows(
        self, metric: PackageMetric, rows: Mapping[str, Sequence[Any]]
    ) -> list[list[float]]:
        """The scores of the rows (argument -> values), in :attr:`score_names` order.

        Raises:
            Exception: Whatever the metric raises for these rows (a bad row fails its
                whole call: the caller narrows it down).
        """
        return [[float(result.value) for result in row] for row in metric.score_rows(rows)]


def blueprint_of(metric: Any) -> MetricBlueprint:
    """The blueprint of one of this package's metrics, from what it declares of itself.

    Raises:
        ValueError: Not one of this package's metrics, or a setting that cannot be sent
            to Ray's workers (a function that does not pickle).
    """
    if not isinstance(metric, PackageMetric) or not metric.kind:
        raise ValueError(
            "Expected one of this package's metrics "
            f"({', '.join(type_.__name__ for type_ in PackageMetric.registered().values())}), "
            f"got {type(metric).__name__}."
        )
    settings: dict[str, Any] = {}
    files: dict[str, bytes] = {}
    for key, value in metric.settings.items():
        if key in metric.entry.file_settings and value is not None:
            files[key] = Path(value).read_bytes()
        elif isinstance(value, PackageMetric):
            settings[key] = blueprint_of(value)
        else:
            _check_sendable(metric, key, value)
            settings[key] = value
    return MetricBlueprint(
        kind=metric.kind,
        name=metric.name,
        score_names=metric.score_names(),
        reads=metric.row_arguments(),
        settings=settings,
        state=metric.fitted_state(),
        files=files,
        uses_model=metric.uses_model,
    )


def _check_sendable(metric: PackageMetric, key: str, value: Any) -> None:
    """Refuse, before any actor starts, a setting that cannot be pickled."""
    import ray.cloudpickle

    try:
        ray.cloudpickle.dumps(value)
    except Exception as error:
        raise ValueError(
            f"{type(metric).__name__}'s setting {key}={shown(value, 60)} cannot be sent to "
            f"Ray's workers: {error}. Pass a value that pickles (a function that pickles, "
            "or one of this package's metrics)."
        ) from error
