"""Tiered answer matching for QA benchmarks; knows nothing of Opik.

- :mod:`~opik_semantic_metrics.answers.normalize`: text and number normal forms.
- :mod:`~opik_semantic_metrics.answers.lists`: safe reading of list answers.
- :mod:`~opik_semantic_metrics.answers.contains`: the gold answer found in a longer output.
- :mod:`~opik_semantic_metrics.answers.abstentions`: outputs that decline, phrased freely.
- :mod:`~opik_semantic_metrics.answers.tiers`: :class:`AnswerMatcher`, the ordered tiers.
- :mod:`~opik_semantic_metrics.answers.report`: accuracy per tier over a run, as markdown.
"""

from opik_semantic_metrics.answers.tiers import AnswerMatcher, MatchResult

__all__ = ["AnswerMatcher", "MatchResult"]
