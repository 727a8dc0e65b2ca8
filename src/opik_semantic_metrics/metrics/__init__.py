"""Opik metrics: thin wrappers over the engines, one metric per module.

Each metric is imported on first use, from the module :mod:`opik_semantic_metrics.catalog`
names for it: importing one metric (or :mod:`~opik_semantic_metrics.metrics.base`) does
not load the others' engines.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from opik_semantic_metrics.catalog import lazy_metric_exports

if TYPE_CHECKING:
    from opik_semantic_metrics.metrics.answer_match import AnswerMatch
    from opik_semantic_metrics.metrics.bertscore import BERTScore
    from opik_semantic_metrics.metrics.comet import COMET
    from opik_semantic_metrics.metrics.semantic_match import SemanticMatch

__all__ = ["COMET", "AnswerMatch", "BERTScore", "SemanticMatch"]


__getattr__, __dir__ = lazy_metric_exports(globals())
