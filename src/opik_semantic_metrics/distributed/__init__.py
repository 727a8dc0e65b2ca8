"""Scoring datasets on a Ray cluster: ``pip install "opik-semantic-metrics[ray]"``.

:func:`score_dataset` scores a dataset of any size with one of this package's metrics on a
pool of Ray Data actors, on a laptop or a cluster; :func:`log_to_opik` sends the scores
to an Opik experiment without scoring again.
"""

try:
    import ray.data  # noqa: F401
except ImportError as error:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "opik_semantic_metrics.distributed needs Ray Data: "
        'pip install "opik-semantic-metrics[ray]".'
    ) from error

from opik_semantic_metrics.distributed.opik_logging import (
    experiment_scores,
    feedback_scores,
    log_to_opik,
)
from opik_semantic_metrics.distributed.resources import Resources, plan_resources
from opik_semantic_metrics.distributed.scoring import (
    ScoringSummary,
    score_dataset,
    scoring_summary,
)

__all__ = [
    "Resources",
    "ScoringSummary",
    "experiment_scores",
    "feedback_scores",
    "log_to_opik",
    "plan_resources",
    "score_dataset",
    "scoring_summary",
]
