"""SemanticMatch's settings, declared and documented once.

:class:`SemanticMatchSettings` is what the metric
(:class:`~opik_semantic_metrics.metrics.semantic_match.SemanticMatch`), its engine
(:class:`~opik_semantic_metrics.semantic.engine.SemanticMatchEngine`) and the combination
of the levels (:class:`~opik_semantic_metrics.semantic.combine.Combination`, through
:meth:`SemanticMatchSettings.combination`) share: the metric's keyword arguments are its
fields, the engine keeps it as ``engine.settings``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from types import MappingProxyType
from typing import Any, Final, Literal

import torch

from opik_semantic_metrics.semantic.cleaning import Cleaning
from opik_semantic_metrics.semantic.combine import (
    DEFAULT_FLOOR,
    DEFAULT_LONG_SENTENCES,
    DEFAULT_LONG_WEIGHTS,
    DEFAULT_NEGATION_PENALTY,
    DEFAULT_NUMBER_PENALTY,
    DEFAULT_SNAP,
    DEFAULT_SOFTNESS,
    DEFAULT_WEIGHTS,
    RECIPE_FLOOR,
    RECIPE_SNAP,
    RECIPE_WEIGHTS,
    Combination,
)

TokenVectors = Literal["contextual", "isolated"]
#: How word-piece vectors can be made (see :mod:`~opik_semantic_metrics.semantic.engine`).
TOKEN_VECTOR_MODES: Final = ("contextual", "isolated")
#: Random reference pairs whose mean cosine is the paragraph baseline.
BASELINE_PAIRS: Final = 100
#: The settings :meth:`SemanticMatchSettings.combination` reads.
COMBINATION_SETTINGS: Final = (
    "weights", "floor", "snap", "softness", "negation_penalty", "number_penalty",
    "long_weights", "long_sentences",
)  # fmt: skip


@dataclass(frozen=True, kw_only=True)
class SemanticMatchSettings:
    """Every setting of SemanticMatch, with its default.

    The values are checked where they are used (the engine, :meth:`Combination.create
    <opik_semantic_metrics.semantic.combine.Combination.create>`): a bad one is a
    ``ValueError`` when the metric or engine is built.

    Attributes:
        model: Hub id, local directory, or ``"all-MiniLM-L6-v2"`` (the packaged offline
            model, the default).
        weights: Relative weights of the word, sentence and paragraph levels of
            one-sentence texts (default (0.1, 0.1, 0.8); the recipe's are (0.4, 0.4, 0.2)).
        floor: Where the output curve bends unrelated answers to 0 (default 0.25; see
            :mod:`~opik_semantic_metrics.semantic.combine`).
        snap: Scores at or above it become 1.0 (default 0.99; ``None`` never snaps).
        softness: Width of the curve's bend (default 0.15); 0 is the recipe's hard
            floor, under which raw scores at or below ``floor`` all score exactly 0.
        negation_penalty: Subtracted, times the share of the output's words in
            sentences where exactly one of an aligned pair of sentences negates and times
            how much of that the texts' plain cosine missed (none at 0.6 or below, all
            from 0.8), from the raw score (default 0.15; 0 turns the check off; see
            :mod:`~opik_semantic_metrics.semantic.flips`).
        number_penalty: Subtracted, times the share of the output's numbers its aligned
            reference sentences do not state, from the raw score (default 0.2; 0 turns
            it off).
        long_weights: The weights of texts of ``long_sentences`` sentences or more
            (default (0.65, 0.35, 0.0)); between, they move linearly from ``weights``;
            ``None``: ``weights`` for every length.
        long_sentences: From how many sentences (the mean of the two texts') a pair
            takes ``long_weights``; 2 or more (default 2).
        token_vectors: ``"contextual"`` (default) or ``"isolated"`` word-piece vectors
            (see :mod:`~opik_semantic_metrics.semantic.engine`).
        cleaning: ``"keep_negations"`` (default: "not", "no", "nor", "isn't"... stay in
            the word and sentence levels) or the recipe's ``"all_stop_words"`` (see
            :mod:`~opik_semantic_metrics.semantic.cleaning`).
        paragraph_baseline: A fixed paragraph baseline instead of the fitted one;
            ``None`` (default) fits it with ``fit`` (0 until then).
        baseline_pairs: Random reference pairs averaged for the fitted baseline.
        seed: Seed of the random pairs, a whole number of 0 or more.
        device: ``"cpu"``, ``"cuda"``...; ``None`` picks CUDA when available. On a CPU,
            size threads with ``OMP_NUM_THREADS`` before Python starts (the docs' "GPU
            and fast mode" page).
        dtype: Model weight type: float32 by default; ``"fast"`` is bfloat16 on GPUs and
            CPUs with native bf16 (float16 on older GPUs, float32 on other CPUs; its
            deviation: ``docs/gpu-and-fast-mode.md``); any ``torch.dtype`` or its name.
        batch_size: Most texts per forward pass on a CPU (on a GPU, up to
            ``batch_size * 256`` padded tokens: ``batching/forward.py``), and most
            concurrent per-item calls coalesced into one batch.
        trust_remote_code: Allow models with code in their Hub repository.

    Example:
        >>> settings = SemanticMatchSettings(**RECIPE_SETTINGS)
        >>> settings.combination().weights, settings.cleaning
        ((0.4, 0.4, 0.2), 'all_stop_words')
    """

    model: str = "all-MiniLM-L6-v2"
    weights: Sequence[float] = DEFAULT_WEIGHTS
    floor: float = DEFAULT_FLOOR
    snap: float | None = DEFAULT_SNAP
    softness: float = DEFAULT_SOFTNESS
    negation_penalty: float = DEFAULT_NEGATION_PENALTY
    number_penalty: float = DEFAULT_NUMBER_PENALTY
    long_weights: Sequence[float] | None = DEFAULT_LONG_WEIGHTS
    long_sentences: int = DEFAULT_LONG_SENTENCES
    token_vectors: TokenVectors = "contextual"
    cleaning: Cleaning = "keep_negations"
    paragraph_baseline: float | None = None
    baseline_pairs: int = BASELINE_PAIRS
    seed: int = 0
    device: str | torch.device | None = None
    dtype: str | torch.dtype | None = None
    batch_size: int = 64
    trust_remote_code: bool = False

    def combination(self) -> Combination:
        """The weights, curve and flip penalties these settings name, checked.

        Raises:
            ValueError: As :meth:`Combination.create
                <opik_semantic_metrics.semantic.combine.Combination.create>`.
        """
        return Combination.create(**{name: getattr(self, name) for name in COMBINATION_SETTINGS})

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """Every setting's name, in declaration order."""
        return tuple(field.name for field in fields(cls))

    def changed(self, **changes: Any) -> SemanticMatchSettings:
        """These settings with ``changes``, by name.

        Raises:
            TypeError: A name that is no setting, named with the settings there are.
        """
        unknown = sorted(set(changes) - set(self.names()))
        if unknown:
            raise TypeError(
                f"SemanticMatch has no setting {unknown[0]!r}; its settings are "
                f"{', '.join(self.names())}."
            )
        return dataclasses.replace(self, **changes)


#: Every setting at its default.
DEFAULTS: Final = SemanticMatchSettings()


#: The layered semantic score's recipe, as settings (engine and metric arguments): its
#: weights (for texts of every length), hard floor, snap and whole stop-word list, without
#: flip penalties.
RECIPE_SETTINGS: Final[Mapping[str, Any]] = MappingProxyType(
    {
        "weights": RECIPE_WEIGHTS,
        "floor": RECIPE_FLOOR,
        "snap": RECIPE_SNAP,
        "softness": 0.0,
        "negation_penalty": 0.0,
        "number_penalty": 0.0,
        "long_weights": None,
        "cleaning": "all_stop_words",
    }
)
