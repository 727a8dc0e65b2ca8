"""Fitting a metric on a dataset's reference column: one way, block by block.

A metric whose scores depend on statistics of the references (BERTScore's idf,
SemanticMatch's idf and paragraph baseline) says how it is fitted with a
:class:`ReferenceFit` (:meth:`PackageMetric.reference_fit
<opik_semantic_metrics.metrics.base.PackageMetric.reference_fit>`): :meth:`ReferenceFit.count`
reads some references into :class:`ReferenceCounts` that add up over blocks, and
:meth:`ReferenceFit.state` turns the whole column's counts into the state
:meth:`~opik_semantic_metrics.metrics.base.PackageMetric.restore_fitted_state` takes. Ray
counts the blocks on its actors and adds them up
(:func:`~opik_semantic_metrics.distributed.corpus_pass.column_counts`); in one process it
is ``fit.state(fit.count(references))``. Either way the state equals the one the metric's
own ``fit`` gives on the same references, in any order.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

#: What a count is of: a token id, a whole text.
Key = TypeVar("Key", bound=Hashable)


@dataclass
class ReferenceCounts(Generic[Key]):
    """Counts over some references that add up, over blocks, to the whole column's.

    Attributes:
        texts: How many reference texts were counted (a reference that is no text is left
            out: its row fails when scored).
        keys: How many of those texts each key occurs in (a token id, a whole text).
    """

    texts: int = 0
    keys: Counter[Key] = field(default_factory=Counter)

    def __add__(self, other: ReferenceCounts[Key]) -> ReferenceCounts[Key]:
        """The counts of both blocks together.

        Example:
            >>> total = ReferenceCounts(2, Counter({7: 2})) + ReferenceCounts(1, Counter({7: 1}))
            >>> total.texts, total.keys[7]
            (3, 3)
        """
        return ReferenceCounts(self.texts + other.texts, self.keys + other.keys)


class ReferenceFit(ABC):
    """How one metric is fitted on a reference column.

    Attributes:
        required: The metric cannot score before it is fitted (BERTScore with
            ``idf=True`` and no idf yet): ``score_dataset`` fits it without being asked.
    """

    required: bool = False

    @abstractmethod
    def count(self, references: Sequence[Any]) -> ReferenceCounts[Any]:
        """The counts of some references (one block of the column)."""

    @abstractmethod
    def state(self, counts: ReferenceCounts[Any]) -> Any:
        """The fitted state of the whole column's counts; the metric is left as it was.

        Raises:
            ValueError: The counts hold nothing to fit on.
        """
