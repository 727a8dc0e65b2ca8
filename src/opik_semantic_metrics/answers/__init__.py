"""Tiered answer matching for QA benchmarks; knows nothing of Opik.

- :mod:`~opik_semantic_metrics.answers.normalize`: text normal forms.
- :mod:`~opik_semantic_metrics.answers.numbers`: numbers, alone or in sentences.
- :mod:`~opik_semantic_metrics.answers.lists`: safe reading of list answers.
- :mod:`~opik_semantic_metrics.answers.list_order`: comparing lists, in order or not.
- :mod:`~opik_semantic_metrics.answers.reading`: one side of a comparison, read once.
- :mod:`~opik_semantic_metrics.answers.contains`: the gold answer found in a longer output.
- :mod:`~opik_semantic_metrics.answers.abstentions`: outputs that decline, phrased freely.
- :mod:`~opik_semantic_metrics.answers.similarity`: the semantic method's scorers and guards.
- :mod:`~opik_semantic_metrics.answers.results`: :class:`MatchResult`.
- :mod:`~opik_semantic_metrics.answers.tiers`: :class:`AnswerMatcher`, the ordered methods.
- :mod:`~opik_semantic_metrics.answers.report`: accuracy per tier over a run, as markdown.
"""

from opik_semantic_metrics.answers.results import MatchResult
from opik_semantic_metrics.answers.tiers import AnswerMatcher

__all__ = ["AnswerMatcher", "MatchResult"]
