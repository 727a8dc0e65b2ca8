"""Semantic metrics for Opik: BERTScore faithful to ``bert_score``, and more.

Engines (model loading, batching, scoring) live in sub-packages that know nothing of
Opik; the thin Opik metric classes are in :mod:`opik_semantic_metrics.metrics`.
"""

from opik_semantic_metrics.errors import InputError, ModelUnavailableError, ScorerError
from opik_semantic_metrics.metrics.answer_match import AnswerMatch
from opik_semantic_metrics.metrics.bertscore import BERTScore
from opik_semantic_metrics.metrics.comet import COMET
from opik_semantic_metrics.metrics.semantic_match import SemanticMatch

__version__ = "0.1.0"

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
