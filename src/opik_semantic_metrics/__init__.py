"""Semantic metrics for Opik: BERTScore faithful to ``bert_score``, and more.

Engines (model loading, batching, scoring) live in sub-packages that know nothing of
Opik; the thin Opik metric classes are in :mod:`opik_semantic_metrics.metrics`.

The metric classes are imported on first use (``from opik_semantic_metrics import
BERTScore`` works as usual): importing Opik and PyTorch takes seconds, which the command
line and the engines, which need neither Opik nor every metric, should not pay.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from opik_semantic_metrics.catalog import metric_modules
from opik_semantic_metrics.errors import InputError, ModelUnavailableError, ScorerError
from opik_semantic_metrics.version import __version__

if TYPE_CHECKING:
    from opik_semantic_metrics.metrics.answer_match import AnswerMatch
    from opik_semantic_metrics.metrics.bertscore import BERTScore
    from opik_semantic_metrics.metrics.comet import COMET
    from opik_semantic_metrics.metrics.semantic_match import SemanticMatch


#: Metric class -> the module defining it, imported when the class is first asked for
#: (from :mod:`opik_semantic_metrics.catalog`, which names each metric once).
_METRICS = metric_modules()

__all__ = [
    "COMET",
    "AnswerMatch",
    "BERTScore",
    "InputError",
    "ModelUnavailableError",
    "ScorerError",
    "SemanticMatch",
    "__version__",
]


def __getattr__(name: str) -> object:
    module = _METRICS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups find it without coming here
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_METRICS})
