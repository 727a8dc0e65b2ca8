"""Opik metrics: thin wrappers over the engines, one metric per module."""

from opik_semantic_metrics.metrics.bertscore import BERTScore
from opik_semantic_metrics.metrics.comet import COMET

__all__ = ["COMET", "BERTScore"]
