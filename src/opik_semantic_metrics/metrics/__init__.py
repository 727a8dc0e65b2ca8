"""Opik metrics: thin wrappers over the engines, one metric per module."""

from opik_semantic_metrics.metrics.answer_match import AnswerMatch
from opik_semantic_metrics.metrics.bertscore import BERTScore

__all__ = ["AnswerMatch", "BERTScore"]
