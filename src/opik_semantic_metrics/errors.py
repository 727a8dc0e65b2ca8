"""Errors raised by the engines, and :func:`shown`, which writes a caller's value in a message.

The engines never import Opik, so they raise these; the Opik metric classes in
:mod:`opik_semantic_metrics.metrics` turn :class:`InputError` and :class:`ScorerError`
into Opik's ``MetricComputationError`` so that one bad item fails that item only.
"""

from __future__ import annotations

import math
import reprlib


class ModelUnavailableError(RuntimeError):
    """A model could not be had: not cached, offline, gated, or not found.

    The message names the model and says what to do about it.
    """


class InputError(ValueError):
    """An input the engine cannot score: wrong type, malformed list, mismatched lengths."""


class ScorerError(RuntimeError):
    """A scorer the caller gave an engine (AnswerMatch's semantic tier) failed, or returned
    no score; the scorer's own exception, if any, is the cause."""


def shown(value: object, limit: int = 120) -> str:
    """A short ``repr`` of a caller's value, for a message or a report cell; never raises.

    The value is written by :mod:`reprlib`, which bounds the work for large containers (a
    few items a level, a few levels) and names an object whose ``__repr__`` raises by its
    type, and cut to ``limit`` characters. An int past Python's limit on digits written
    as text (4,300 by default: ``repr(10**5000)`` raises ``ValueError``), alone or inside
    a container, is described instead.

    Example:
        >>> shown("Paris"), shown(10**5000)
        ("'Paris'", 'an int of about 5001 digits')
    """
    writer = reprlib.Repr()
    writer.maxstring = writer.maxother = writer.maxlong = limit
    try:
        return writer.repr(value)[:limit]
    except Exception:
        if isinstance(value, int):
            digits = int(abs(value).bit_length() * math.log10(2)) + 1
            return f"an int of about {digits} digits"
        return f"a value of type {type(value).__name__} that repr() cannot write"
