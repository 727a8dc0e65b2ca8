"""A metric's settings as a JSON document, and the metric built back from one.

The document is what a metric declares of itself
(:attr:`~opik_semantic_metrics.metrics.base.PackageMetric.settings`), written in JSON's
types: ``{"metric": "bertscore", "settings": {"model": ..., ...}}``, a metric among the
settings (AnswerMatch's ``semantic=``) as a document of its own, a weight type by its
name, a path as text. It records how scores were made, and rebuilds the metric that made
them; fitted state (idf, SemanticMatch's fit) is not in it: restore it with
:meth:`~opik_semantic_metrics.metrics.base.PackageMetric.restore_fitted_state`, or save it
where the metric saves it.

Example:
    >>> from opik_semantic_metrics import AnswerMatch
    >>> document = settings_document(AnswerMatch(tolerance=0.5, track=False))
    >>> settings = document["settings"]
    >>> document["metric"], settings["tolerance"], settings["abstention_patterns"]
    ('answer_match', 0.5, True)
    >>> metric_from_document(document).settings["tolerance"]
    0.5
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import torch

from opik_semantic_metrics.errors import shown
from opik_semantic_metrics.metrics.base import PackageMetric
from opik_semantic_metrics.models.devices import dtype_name


def settings_document(metric: PackageMetric) -> dict[str, Any]:
    """The metric's kind and settings, in JSON's types.

    Raises:
        ValueError: A setting JSON cannot hold (a function given as AnswerMatch's
            ``semantic``), named.
    """
    return {
        "metric": metric.kind,
        "settings": {
            key: _as_json(value, f"{type(metric).__name__}'s setting {key}")
            for key, value in metric.settings.items()
        },
    }


def metric_from_document(
    document: Mapping[str, Any], *, device: str | torch.device | None = None
) -> PackageMetric:
    """The metric a :func:`settings_document` describes, built on ``device``, untracked.

    Raises:
        ValueError: Not a settings document, or a metric this package does not have.
    """
    kinds = PackageMetric.registered()
    try:
        metric_class = kinds[document["metric"]]
        settings = dict(document["settings"])
    except (KeyError, TypeError) as error:
        raise ValueError(
            f"Expected a settings document {{'metric': one of {sorted(kinds)}, "
            f"'settings': {{...}}}}, got {shown(document, 80)}."
        ) from error
    for key, value in settings.items():
        if _is_document(value):
            settings[key] = metric_from_document(value, device=device)
    return metric_class.untracked(settings, device)


def _as_json(value: Any, what: str) -> Any:
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, PackageMetric):
        return settings_document(value)
    if isinstance(value, torch.dtype):
        return dtype_name(value)
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if isinstance(value, list | tuple):
        return [_as_json(item, what) for item in value]
    raise ValueError(f"{what}={shown(value, 60)} cannot be written as JSON.")


def _is_document(value: Any) -> bool:
    return isinstance(value, Mapping) and set(value) == {"metric", "settings"}
