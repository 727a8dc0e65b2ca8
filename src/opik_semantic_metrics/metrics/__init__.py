"""Opik metrics: thin wrappers over the engines, one metric per module.

Each metric is imported on first use, from the module :mod:`opik_semantic_metrics.catalog`
names for it: importing one metric (or :mod:`~opik_semantic_metrics.metrics.base`) does
not load the others' engines.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from opik_semantic_metrics.catalog import metric_modules

if TYPE_CHECKING:
    from opik_semantic_metrics.metrics.answer_match import AnswerMatch
    from opik_semantic_metrics.metrics.bertscore import BERTScore
    from opik_semantic_metrics.metrics.comet import COMET
    from opik_semantic_metrics.metrics.semantic_match import SemanticMatch

__all__ = ["COMET", "AnswerMatch", "BERTScore", "SemanticMatch"]

_METRICS = metric_modules()


def __getattr__(name: str) -> object:
    module = _METRICS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups find it without coming here
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_METRICS})
