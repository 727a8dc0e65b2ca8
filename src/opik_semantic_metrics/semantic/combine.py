"""The layered score: paragraph baseline, weights, floor and snap.

With the word, sentence and paragraph scores of a pair (see
:mod:`~opik_semantic_metrics.semantic.levels`)::

    paragraph = (r - b) / (1 - b)                      r: raw-text cosine, b: baseline
    raw       = w_word * word + w_sentence * sentence + w_paragraph * paragraph
    score     = min(1, max(0, (raw - floor) / (1 - floor)))
    score     = 1.0 if score >= snap

The weights are relative: they are divided by their sum, so that ``raw`` is 1 when every
level is 1.

**The floor.** The layered semantic score's recipe subtracts the floor and clamps at
zero, ``max(0, raw - 0.25)``, then snaps scores ``>= 0.95`` to 1. Taken literally,
identical answers (every level 1) score 0.75 and can never reach the snap. Here the
floor is a baseline like the
paragraph's: ``raw`` is rescaled so that ``floor`` maps to 0 and 1 stays 1. Unrelated
answers (raw below the floor) still score exactly 0, identical answers score 1 (snapped
from float rounding), and the order of all other pairs is the order of the literal
formula, since the rescaling is increasing.

**The weights.** The recipe's weights are (0.4, 0.4, 0.2); the defaults are
(0.2, 0.2, 0.6), chosen on STS-B's train split, because with the recipe's weights the
combined score ranks STS-B pairs below its own paragraph level, and the defaults beat
every single level (figures: ``docs/design/layered-semantic-score.md``;
``benchmarks/semantic_validity.py`` prints them). Weights, floor and snap are all
arguments.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from opik_semantic_metrics.inputs import is_finite_number, is_real_number

#: The weights of the word, sentence and paragraph levels in the layered semantic
#: score's recipe.
SEED_WEIGHTS: Final = (0.4, 0.4, 0.2)
#: Default weights, chosen on STS-B (see the module docstring).
DEFAULT_WEIGHTS: Final = (0.2, 0.2, 0.6)
#: Raw scores at or below the floor score 0 (the recipe's estimate of unrelated answers).
DEFAULT_FLOOR: Final = 0.25
#: Scores at or above the snap become 1.0 (``None``: no snapping).
DEFAULT_SNAP: Final = 0.95


def rescale_by_baseline(cosine: float, baseline: float) -> float:
    """``(cosine - baseline) / (1 - baseline)``: the baseline maps to 0, 1 stays 1.

    Example:
        >>> round(rescale_by_baseline(0.6, 0.2), 4)
        0.5
    """
    return (cosine - baseline) / (1.0 - baseline)


#: The largest paragraph baseline ``b``. The paragraph level divides by ``1 - b``, so it
#: magnifies the float32 rounding of a cosine (about 1e-7) ``1 / (1 - b)`` times: up to 0.99
#: that stays within 1e-5. A baseline nearer 1 (references fitted on were near copies of
#: each other) would turn rounding into scores: identical texts scored 0.2.
MAX_PARAGRAPH_BASELINE = 0.99


def check_baseline(baseline: float) -> float:
    """A paragraph baseline, checked: a real number in ``[-1, MAX_PARAGRAPH_BASELINE]``.

    Raises:
        ValueError: Out of range, or not a number.
    """
    if not is_real_number(baseline):
        raise ValueError(f"Expected `paragraph_baseline` to be a number, got {baseline!r}.")
    if not -1.0 <= baseline <= MAX_PARAGRAPH_BASELINE:
        raise ValueError(
            f"Expected `paragraph_baseline` in [-1, {MAX_PARAGRAPH_BASELINE}], got {baseline}."
        )
    return float(baseline)


@dataclass(frozen=True)
class Combination:
    """Weights, floor and snap of the layered score.

    Build it with :meth:`create`, which checks the arguments and normalises the weights.

    Attributes:
        weights: Word, sentence and paragraph weights, summing to 1.
        floor: Raw scores at or below it score 0; in ``[0, 1)``.
        snap: Scores at or above it become 1.0; ``None`` never snaps.

    Example:
        >>> combination = Combination.create(weights=(2, 2, 1), floor=0.25, snap=0.95)
        >>> combination.weights
        (0.4, 0.4, 0.2)
        >>> combination.raw(1.0, 1.0, 1.0), combination.final(1.0)
        (1.0, 1.0)
        >>> combination.final(0.25), combination.final(0.1), round(combination.final(0.7), 4)
        (0.0, 0.0, 0.6)
    """

    weights: tuple[float, float, float]
    floor: float
    snap: float | None

    @classmethod
    def create(
        cls,
        weights: Sequence[float] = DEFAULT_WEIGHTS,
        floor: float = DEFAULT_FLOOR,
        snap: float | None = DEFAULT_SNAP,
    ) -> Combination:
        """Check the arguments and normalise the weights.

        Raises:
            ValueError: Not three finite non-negative weights with a positive sum; a floor
                outside ``[0, 1)``; a snap outside ``(0, 1]``.
        """
        # A NumPy array of weights is no Sequence, but reads the same.
        is_sequence = isinstance(weights, Sequence) or hasattr(weights, "__array__")
        values = tuple(weights) if is_sequence and not isinstance(weights, str) else ()
        if (
            len(values) != 3
            or not all(is_finite_number(value) for value in values)
            or min(values) < 0
            or sum(values) <= 0
        ):
            raise ValueError(
                "Expected `weights` to be three non-negative numbers (word, sentence, "
                f"paragraph) with a positive sum, got {weights!r}."
            )
        if not is_real_number(floor) or not 0.0 <= floor < 1.0:
            raise ValueError(f"Expected `floor` in [0, 1), got {floor!r}.")
        if snap is not None and (not is_real_number(snap) or not 0.0 < snap <= 1.0):
            raise ValueError(f"Expected `snap` in (0, 1] or None, got {snap!r}.")
        values = tuple(float(value) for value in values)
        if not math.isfinite(sum(values)):
            # Weights near the float limit overflow their sum; they are relative.
            values = tuple(value / max(values) for value in values)
        total = math.fsum(values)
        word, sentence, paragraph = (value / total for value in values)
        return cls((word, sentence, paragraph), float(floor), None if snap is None else float(snap))

    def raw(self, word: float, sentence: float, paragraph: float) -> float:
        """The weighted sum of the three levels."""
        w_word, w_sentence, w_paragraph = self.weights
        return w_word * word + w_sentence * sentence + w_paragraph * paragraph

    def rescaled(self, raw: float) -> float:
        """``raw`` with the floor mapped to 0 and 1 kept, clamped to ``[0, 1]``."""
        return min(1.0, max(0.0, (raw - self.floor) / (1.0 - self.floor)))

    def snaps(self, raw: float) -> bool:
        """Whether ``raw`` is close enough to 1 to be snapped."""
        return self.snap is not None and self.rescaled(raw) >= self.snap

    def final(self, raw: float) -> float:
        """The score in ``[0, 1]``: rescaled past the floor, clamped, then snapped."""
        return 1.0 if self.snaps(raw) else self.rescaled(raw)
