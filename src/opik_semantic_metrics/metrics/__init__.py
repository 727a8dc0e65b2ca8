"""Opik metrics: thin wrappers over the engines, one metric per module."""

from opik_semantic_metrics.metrics.answer_match import AnswerMatch
from opik_semantic_metrics.metrics.bertscore import BERTScore
from opik_semantic_metrics.metrics.comet import COMET
from opik_semantic_metrics.metrics.semantic_match import SemanticMatch

__all__ = ["COMET", "AnswerMatch", "BERTScore", "SemanticMatch"]
