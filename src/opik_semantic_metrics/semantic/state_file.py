"""The layered score's fitted state as a JSON file: its format, writing and reading.

The file holds the idf of the word pieces, the paragraph baseline and where it came from,
the model it was fitted for (word-piece ids differ between models) and the calibration,
if any. Version 1 has no calibration, version 2 a calibration without flip penalties,
version 3 one whose flip checks read the texts whole; version 4 (written now) says how its
checks read the texts and whether its weights move with the sentence count.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Final

from opik_semantic_metrics.input_files import read_json
from opik_semantic_metrics.output_files import replace_file
from opik_semantic_metrics.semantic.combine import (
    DEFAULT_LONG_SENTENCES,
    Combination,
    check_baseline,
)
from opik_semantic_metrics.semantic.idf import SmoothedIdf
from opik_semantic_metrics.semantic.results import DEFAULT_PARAGRAPH_BASELINE, FittedState

_STATE_FORMAT: Final = "opik-semantic-metrics/semantic-match-state"
_STATE_VERSION: Final = 4
#: Versions :func:`read_state` reads: 1 has no calibration, 2 a calibration
#: without flip penalties (it was fitted and scored without them, so they load as 0), 3
#: one with whole-text flip checks and one weight triple (they load so).
_READABLE_VERSIONS: Final = (1, 2, 3, 4)
_BASELINE_SOURCES: Final = ("fitted", "fixed", "default")


def _check_state_source(source: object, idf: SmoothedIdf, baseline: float) -> None:
    """Refuse a saved baseline source that its idf and baseline contradict.

    Only an engine never fitted saves ``"default"`` (uniform idf, the default baseline),
    and only a fit on at least two distinct references saves ``"fitted"``.
    """
    if source not in _BASELINE_SOURCES:
        raise ValueError(f"unknown baseline source {source!r}")
    if source == "default" and (idf.num_documents != 0 or baseline != DEFAULT_PARAGRAPH_BASELINE):
        raise ValueError("a default baseline source with a fitted idf or baseline")
    if source == "fitted" and idf.num_documents < 2:
        raise ValueError("a fitted baseline from fewer than two references")


def _combination_json(combination: Combination) -> dict[str, object]:
    return {
        "weights": list(combination.weights),
        "floor": combination.floor,
        "snap": combination.snap,
        "softness": combination.softness,
        "negation_penalty": combination.negation_penalty,
        "number_penalty": combination.number_penalty,
        "long_weights": None
        if combination.long_weights is None
        else list(combination.long_weights),
        "long_sentences": combination.long_sentences,
        "aligned_flips": combination.aligned_flips,
    }


def _combination_from_json(data: object, version: int) -> Combination | None:
    """A saved calibration, checked as the engine's arguments are; ``None`` for none."""
    if data is None:
        return None
    if not isinstance(data, dict):
        raise ValueError(f"a calibration must be an object, got {type(data).__name__}")
    weights, floor, snap, softness = data["weights"], data["floor"], data["snap"], data["softness"]
    # Version 2 calibrations were fitted and scored without flip penalties.
    penalties = (data["negation_penalty"], data["number_penalty"]) if version >= 3 else (0.0, 0.0)
    # Before version 4: one weight triple, and flip checks that read the texts whole.
    long_weights, long_sentences, aligned = None, DEFAULT_LONG_SENTENCES, False
    if version >= 4:
        long_weights, long_sentences = data["long_weights"], data["long_sentences"]
        aligned = data["aligned_flips"]
        if not isinstance(aligned, bool):
            raise ValueError(f"aligned_flips must be true or false, got {aligned!r}")
    negation, numbers = penalties
    combination = Combination.create(
        weights, floor, snap, softness, negation, numbers, long_weights, long_sentences, aligned,
    )  # fmt: skip
    # Weights saved normalised load unchanged: normalising them again could move the last bit.
    word, sentence, paragraph = (float(weight) for weight in weights)
    return dataclasses.replace(combination, weights=(word, sentence, paragraph))


def write_state(path: str | Path, state: FittedState, model: str) -> None:
    """Write a fitted state, fitted for ``model``, to a JSON file."""
    document = {
        "format": _STATE_FORMAT,
        "version": _STATE_VERSION,
        "model": model,
        "idf": state.idf.to_json(),
        "paragraph_baseline": state.paragraph_baseline,
        "baseline_source": state.baseline_source,
        "calibration": None if state.calibration is None else _combination_json(state.calibration),
    }
    # A write that fails halfway leaves the state that was there whole.
    replace_file(path, json.dumps(document).encode("utf-8"))


def read_state(
    path: str | Path, model: str, vocabulary_size: int, fixed_baseline: float | None
) -> FittedState:
    """Read a state written by :func:`write_state` for ``model``, whose vocabulary has
    ``vocabulary_size`` word pieces (a ``fixed_baseline`` wins over the saved one).

    Raises:
        ValueError: The file cannot be read (see
            :func:`~opik_semantic_metrics.input_files.read_json`), is not a saved
            state, or is one fitted for another model.
    """
    try:
        document = read_json(path)
        if (
            document.get("format") != _STATE_FORMAT
            or document.get("version") not in _READABLE_VERSIONS
        ):
            raise ValueError(f"expected format {_STATE_FORMAT!r} version 1 to {_STATE_VERSION}")
        saved_model = document["model"]
        idf = SmoothedIdf.from_json(document["idf"])
        baseline = check_baseline(document["paragraph_baseline"])
        source = document["baseline_source"]
        _check_state_source(source, idf, baseline)
        calibration = _combination_from_json(document.get("calibration"), document["version"])
        if any(token_id >= vocabulary_size for token_id in idf.table.weights):
            raise ValueError(f"a token id beyond the model's {vocabulary_size} word pieces")
    except (AttributeError, KeyError, TypeError, ValueError) as error:
        raise ValueError(f"{str(path)!r} is not a saved SemanticMatch state: {error}") from error
    if saved_model != model:
        raise ValueError(
            f"{str(path)!r} was fitted for {saved_model!r}, but this engine uses "
            f"{model!r}: word-piece ids differ between models."
        )
    if fixed_baseline is not None:
        return FittedState(idf, fixed_baseline, "fixed", calibration)
    return FittedState(idf, baseline, source, calibration)
