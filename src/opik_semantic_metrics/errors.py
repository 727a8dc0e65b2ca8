"""Errors raised by the engines.

The engines never import Opik, so they raise these; the Opik metric classes in
:mod:`opik_semantic_metrics.metrics` turn :class:`InputError` into Opik's
``MetricComputationError`` so that one bad item fails that item only.
"""

from __future__ import annotations


class ModelUnavailableError(RuntimeError):
    """A model could not be had: not cached, offline, gated, or not found.

    The message names the model and says what to do about it.
    """


class InputError(ValueError):
    """An input the engine cannot score: wrong type, malformed list, mismatched lengths."""
