"""Semantic metrics for Opik: BERTScore faithful to ``bert_score``, and more.

Engines (model loading, batching, scoring) live in sub-packages that know nothing of
Opik; the thin Opik metric classes are in :mod:`opik_semantic_metrics.metrics`.

The metric classes are imported on first use (``from opik_semantic_metrics import
BERTScore`` works as usual): importing Opik and PyTorch takes seconds, which the command
line and the engines, which need neither Opik nor every metric, should not pay.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from opik_semantic_metrics.catalog import lazy_metric_exports
from opik_semantic_metrics.errors import InputError, ModelUnavailableError, ScorerError
from opik_semantic_metrics.version import __version__

if TYPE_CHECKING:
    from opik_semantic_metrics.metrics.answer_match import AnswerMatch
    from opik_semantic_metrics.metrics.bertscore import BERTScore
    from opik_semantic_metrics.metrics.comet import COMET
    from opik_semantic_metrics.metrics.semantic_match import SemanticMatch


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


__getattr__, __dir__ = lazy_metric_exports(globals())
