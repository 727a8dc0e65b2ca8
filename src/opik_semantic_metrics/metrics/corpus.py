"""The experiment-level scores under their ``metrics`` import path.

:func:`system_score_function`, :func:`compare` and :func:`collect_item_scores` live in
:mod:`opik_semantic_metrics.compare.corpus`, beside the other comparisons; this module
names the same objects so that code importing them from here keeps working.
"""

from opik_semantic_metrics.compare.corpus import (
    ItemScores,
    collect_item_scores,
    compare,
    system_score_function,
)

__all__ = ["ItemScores", "collect_item_scores", "compare", "system_score_function"]
