"""The layered score: paragraph baseline, weights, flip penalties, output curve and snap.

With the word, sentence and paragraph scores of a pair (see
:mod:`~opik_semantic_metrics.semantic.levels`) and its two flip checks (see
:mod:`~opik_semantic_metrics.semantic.flips`)::

    paragraph = (r - b) / (1 - b)                      r: raw-text cosine, b: baseline
    raw       = w_word * word + w_sentence * sentence + w_paragraph * paragraph
                - p_negation * negation_flip - p_numbers * changed_numbers
    score     = curve(raw)
    score     = 1.0 if score >= snap

The weights are relative: they are divided by their sum, so that ``raw`` is 1 when every
level is 1. The penalties lower the raw score of a pair where exactly one text negates,
or where the output states numbers the reference does not: the flips that the three
embedding levels hardly see. Identical texts have no flip, so they still score 1.

**The curve** maps ``raw`` into ``[0, 1]`` with 1 kept at 1, so that unrelated answers
(raw near or below the floor) score near 0. With ``softness`` ``t > 0`` it is a smooth
floor, ``g(raw) / g(1)`` with ``g(x) = t * log(1 + exp((x - floor) / t))``: strictly
increasing, so it keeps the order of every pair, and the hard floor's limit as ``t``
goes to 0. With ``t = 0`` it is the hard floor of the layered semantic score's recipe,
``max(0, raw - floor) / (1 - floor)``: every raw score at or below the floor ties at 0.
(The recipe writes ``max(0, raw - floor)``; divided by ``1 - floor`` so that identical
answers reach 1 rather than 0.75, which changes no order.) The snap turns float rounding
of identical answers into exactly 1.0.

The defaults (:data:`DEFAULT_WEIGHTS`, :data:`DEFAULT_NEGATION_PENALTY`,
:data:`DEFAULT_NUMBER_PENALTY`, :data:`DEFAULT_FLOOR`, :data:`DEFAULT_SOFTNESS`,
:data:`DEFAULT_SNAP`) were chosen on the STS Benchmark's train split with
all-MiniLM-L6-v2 (the weights and penalties for ranking, the curve for unrelated pairs
near 0 and scores near the human ones); the recipe's are :data:`RECIPE_WEIGHTS`, no
penalties, :data:`RECIPE_FLOOR`, ``softness=0`` and :data:`RECIPE_SNAP`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, TypeVar

import numpy as np
from numpy.typing import NDArray

from opik_semantic_metrics.inputs import is_finite_number, is_real_number

_FloatOrArray = TypeVar("_FloatOrArray", float, NDArray[np.float64])

#: The recipe's weights of the word, sentence and paragraph levels.
RECIPE_WEIGHTS: Final = (0.4, 0.4, 0.2)
#: The recipe's floor: raw scores at or below it score 0 under the hard floor.
RECIPE_FLOOR: Final = 0.25
#: The recipe's snap.
RECIPE_SNAP: Final = 0.95
#: Default weights of one-sentence texts (see the module docstring).
DEFAULT_WEIGHTS: Final = (0.1, 0.1, 0.8)
#: Default weights of texts of :data:`DEFAULT_LONG_SENTENCES` sentences or more.
DEFAULT_LONG_WEIGHTS: Final = (0.65, 0.35, 0.0)
#: Default sentence count from which a text's weights are :data:`DEFAULT_LONG_WEIGHTS`.
DEFAULT_LONG_SENTENCES: Final = 2
#: Default penalty of a pair where exactly one text negates.
DEFAULT_NEGATION_PENALTY: Final = 0.15
#: Plain cosines of the two texts between which the negation check counts partly: below
#: the first, none (the encoder already set the texts apart), from the second, fully.
NEGATION_COSINES: Final = (0.6, 0.8)
#: Default penalty of a pair whose output states only numbers the reference does not
#: (scaled by their share of the output's numbers).
DEFAULT_NUMBER_PENALTY: Final = 0.2
#: Columns of a row of levels as :meth:`Combination.raw_array` reads them.
LEVEL_COLUMNS: Final = (
    "word", "sentence", "paragraph", "negation_flip", "changed_numbers", "sentences"
)  # fmt: skip
#: Default floor: the raw score about which the curve bends towards 0.
DEFAULT_FLOOR: Final = 0.25
#: Default softness of the floor (0: the recipe's hard floor).
DEFAULT_SOFTNESS: Final = 0.15
#: Scores at or above the snap become 1.0 (``None``: no snapping).
DEFAULT_SNAP: Final = 0.99


def _ramp(value: _FloatOrArray, low: float, high: float) -> _FloatOrArray:
    """0 at or below ``low``, 1 from ``high``, linear between; element by element for an
    array. The negation gate and the move from short to long weights are both such ramps.

    Example:
        >>> _ramp(2.5, 1.0, 4.0), _ramp(np.array([0.0, 7.0]), 1.0, 4.0).tolist()
        (0.5, [0.0, 1.0])
    """
    share = np.clip((value - low) / (high - low), 0.0, 1.0)
    return share if isinstance(share, np.ndarray) else float(share)  # type: ignore[return-value]


def negation_unseen(cosine: float) -> float:
    """How much of a one-sided negation the encoder missed, from the texts' plain cosine.

    0 at or below the first of :data:`NEGATION_COSINES`, 1 from the second, linear
    between: an encoder that reads "not" (all-mpnet-base-v2 puts a sentence and its
    negation at a median cosine near 0.5) is not penalised again for what it saw, while
    one that barely does (all-MiniLM-L6-v2: near 0.8) is.

    Example:
        >>> negation_unseen(0.9), round(negation_unseen(0.7), 6), negation_unseen(0.5)
        (1.0, 0.5, 0.0)
    """
    return _ramp(cosine, *NEGATION_COSINES)


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


def _normalised(weights: Sequence[float], name: str) -> tuple[float, float, float]:
    """Three finite non-negative weights with a positive sum, divided by their sum.

    Raises:
        ValueError: Anything else.
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
            f"Expected `{name}` to be three non-negative numbers (word, sentence, "
            f"paragraph) with a positive sum, got {weights!r}."
        )
    floats = tuple(float(value) for value in values)
    if not math.isfinite(sum(floats)):
        # Weights near the float limit overflow their sum; they are relative.
        floats = tuple(value / max(floats) for value in floats)
    total = math.fsum(floats)
    word, sentence, paragraph = (value / total for value in floats)
    return (word, sentence, paragraph)


def _curve(
    floor: float,
    snap: float | None,
    softness: float,
    negation_penalty: float,
    number_penalty: float,
) -> tuple[float, float | None, float, float, float]:
    """The curve's and the penalties' arguments, checked (see :meth:`Combination.create`)."""
    if not is_real_number(floor) or not 0.0 <= floor < 1.0:
        raise ValueError(f"Expected `floor` in [0, 1), got {floor!r}.")
    if snap is not None and (not is_real_number(snap) or not 0.0 < snap <= 1.0):
        raise ValueError(f"Expected `snap` in (0, 1] or None, got {snap!r}.")
    for name, value in (
        ("softness", softness),
        ("negation_penalty", negation_penalty),
        ("number_penalty", number_penalty),
    ):
        if not is_real_number(value) or not 0.0 <= value <= 1.0:
            raise ValueError(f"Expected `{name}` in [0, 1], got {value!r}.")
    return (
        float(floor),
        None if snap is None else float(snap),
        float(softness),
        float(negation_penalty),
        float(number_penalty),
    )


@dataclass(frozen=True)
class Combination:
    """Weights, output curve and snap of the layered score.

    Build it with :meth:`create`, which checks the arguments and normalises the weights.

    Its first eight fields are the same-named settings of
    :class:`~opik_semantic_metrics.semantic.settings.SemanticMatchSettings`, where each is
    documented, checked: ``weights`` and ``long_weights`` divided by their sum, the
    numbers as floats.

    Attributes:
        aligned_flips: The flip checks compare each output sentence with its aligned
            reference sentence (see :mod:`~opik_semantic_metrics.semantic.flips`);
            ``False``: the whole texts, as calibrations saved before version 4 were fitted.

    Example:
        >>> combination = Combination.create(weights=(2, 2, 1), floor=0.25, snap=0.95,
        ...                                  softness=0.0, negation_penalty=0.1)
        >>> combination.weights
        (0.4, 0.4, 0.2)
        >>> combination.raw(1.0, 1.0, 1.0), combination.final(1.0)
        (1.0, 1.0)
        >>> combination.raw(1.0, 1.0, 1.0, negation_flip=1.0, changed_numbers=0.5)
        0.8
        >>> combination.final(0.25), combination.final(0.1), round(combination.final(0.7), 4)
        (0.0, 0.0, 0.6)
        >>> smooth = Combination.create(floor=0.25, softness=0.05)
        >>> 0 < smooth.final(0.1) < smooth.final(0.25) < 0.05, smooth.final(1.0)
        (True, 1.0)
    """

    weights: tuple[float, float, float]
    floor: float
    snap: float | None
    softness: float = 0.0
    negation_penalty: float = 0.0
    number_penalty: float = 0.0
    long_weights: tuple[float, float, float] | None = None
    long_sentences: int = DEFAULT_LONG_SENTENCES
    aligned_flips: bool = True

    @classmethod
    def create(
        cls,
        weights: Sequence[float] = DEFAULT_WEIGHTS,
        floor: float = DEFAULT_FLOOR,
        snap: float | None = DEFAULT_SNAP,
        softness: float = DEFAULT_SOFTNESS,
        negation_penalty: float = DEFAULT_NEGATION_PENALTY,
        number_penalty: float = DEFAULT_NUMBER_PENALTY,
        long_weights: Sequence[float] | None = DEFAULT_LONG_WEIGHTS,
        long_sentences: int = DEFAULT_LONG_SENTENCES,
        aligned_flips: bool = True,
    ) -> Combination:
        """Check the arguments and normalise the weights.

        Raises:
            ValueError: Not three finite non-negative weights with a positive sum (either
                kind); a floor outside ``[0, 1)``; a snap outside ``(0, 1]``; a softness
                or a penalty outside ``[0, 1]``; ``long_sentences`` not a whole number of
                2 or more.
        """
        if (
            isinstance(long_sentences, bool)
            or not isinstance(long_sentences, int | np.integer)
            or long_sentences < 2
        ):
            raise ValueError(
                "Expected `long_sentences` to be a whole number of 2 or more, got "
                f"{long_sentences!r}."
            )
        return cls(
            _normalised(weights, "weights"),
            *_curve(floor, snap, softness, negation_penalty, number_penalty),
            None if long_weights is None else _normalised(long_weights, "long_weights"),
            int(long_sentences),
            bool(aligned_flips),
        )

    def blend(self, sentences: float) -> float:
        """How far a pair whose texts have ``sentences`` sentences (their mean) is from
        ``weights`` (0) towards ``long_weights`` (1)."""
        if self.long_weights is None:
            return 0.0
        return _ramp(sentences, 1.0, self.long_sentences)

    def weights_for(self, sentences: float) -> tuple[float, float, float]:
        """The weights of a pair whose texts have ``sentences`` sentences (their mean)."""
        share = self.blend(sentences)
        if self.long_weights is None or share == 0.0:
            return self.weights
        if share == 1.0:
            return self.long_weights
        word, sentence, paragraph = (
            (1.0 - share) * short + share * long
            for short, long in zip(self.weights, self.long_weights, strict=True)
        )
        return (word, sentence, paragraph)

    def raw(
        self,
        word: float,
        sentence: float,
        paragraph: float,
        negation_flip: float = 0.0,
        changed_numbers: float = 0.0,
        sentences: float = 1.0,
    ) -> float:
        """The weighted sum of the three levels (weights for texts of ``sentences``
        sentences, :meth:`weights_for`), less the flip penalties."""
        w_word, w_sentence, w_paragraph = self.weights_for(sentences)
        return (
            w_word * word
            + w_sentence * sentence
            + w_paragraph * paragraph
            - self.negation_penalty * negation_flip
            - self.number_penalty * changed_numbers
        )

    def raw_array(self, levels: NDArray[np.float64]) -> NDArray[np.float64]:
        """:meth:`raw` of each row of ``levels``, whose columns are :data:`LEVEL_COLUMNS`
        (without the last, every row is of one-sentence texts)."""
        penalties = np.array([self.negation_penalty, self.number_penalty])
        raw = levels[:, :3] @ np.array(self.weights) - levels[:, 3:5] @ penalties
        if self.long_weights is not None and levels.shape[1] > 5:
            share = _ramp(levels[:, 5], 1.0, self.long_sentences)
            change = levels[:, :3] @ (np.array(self.long_weights) - np.array(self.weights))
            raw = raw + share * change
        return np.asarray(raw, dtype=np.float64)

    def rescaled(self, raw: float) -> float:
        """``raw`` through the curve: 1 kept at 1, the floor towards 0, within ``[0, 1]``."""
        return float(self.rescaled_array(np.array([raw], dtype=np.float64))[0])

    def rescaled_array(self, raw: NDArray[np.float64]) -> NDArray[np.float64]:
        """:meth:`rescaled` of each raw score (one formula for one score and many); a NaN
        raw score gives 0."""
        if self.softness == 0.0:
            curve = (raw - self.floor) / (1.0 - self.floor)
        else:
            curve = self._bend(raw) / self._bend(np.array([1.0]))
        return np.where(np.isnan(curve), 0.0, np.clip(curve, 0.0, 1.0))

    def _bend(self, raw: NDArray[np.float64]) -> NDArray[np.float64]:
        """``t * log(1 + exp((raw - floor) / t))``, without overflow."""
        z = (raw - self.floor) / self.softness
        return self.softness * (np.maximum(z, 0.0) + np.log1p(np.exp(-np.abs(z))))

    def snaps(self, raw: float) -> bool:
        """Whether ``raw`` is close enough to 1 to be snapped."""
        return self.snap is not None and self.rescaled(raw) >= self.snap

    def final(self, raw: float) -> float:
        """The score in ``[0, 1]``: through the curve, then snapped."""
        return 1.0 if self.snaps(raw) else self.rescaled(raw)

    def final_array(self, raw: NDArray[np.float64]) -> NDArray[np.float64]:
        """:meth:`final` of each raw score."""
        rescaled = self.rescaled_array(raw)
        if self.snap is None:
            return rescaled
        return np.where(rescaled >= self.snap, 1.0, rescaled)
