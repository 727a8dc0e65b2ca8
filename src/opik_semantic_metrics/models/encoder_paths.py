"""The one switch between the hand-written CPU encoder paths and transformers' own forward.

Two hand-written paths speed up the encoders of BERTScore and SemanticMatch, written for
the CPU: linear layers packed once for oneDNN
(:mod:`~opik_semantic_metrics.models.packed_linear`, CPU only) and BERT-family layers run
on real tokens only (:mod:`~opik_semantic_metrics.models.unpadded`, wherever its probe
passes). Each is used only where a probe shows it
gives the model's own output; transformers' plain forward stays the reference they are
tested against. The environment variable :data:`CPU_ENCODER_ENV` chooses:

- ``optimized`` (the default, also when the variable is unset or empty): the hand-written
  paths, where their probes pass;
- ``transformers``: the plain transformers forward only, for checking a score against the
  reference path or ruling the hand-written code out.

It is read when a model loads; a model already loaded in the process keeps the path it
loaded with. The design record is ``docs/design/cpu-encoder-paths.md``.
"""

from __future__ import annotations

import os
from typing import Literal

#: The environment variable that chooses the CPU encoder path.
CPU_ENCODER_ENV = "OPIK_SEMANTIC_METRICS_CPU_ENCODER"

CpuEncoderPath = Literal["optimized", "transformers"]
CPU_ENCODER_PATHS: tuple[CpuEncoderPath, ...] = ("optimized", "transformers")


def cpu_encoder_path() -> CpuEncoderPath:
    """The CPU encoder path :data:`CPU_ENCODER_ENV` chooses (``"optimized"`` by default).

    Raises:
        ValueError: The variable holds another value (a typo must not fall back silently).

    Example:
        >>> cpu_encoder_path() in CPU_ENCODER_PATHS
        True
    """
    value = os.environ.get(CPU_ENCODER_ENV, "").strip().lower() or "optimized"
    for path in CPU_ENCODER_PATHS:
        if value == path:
            return path
    raise ValueError(
        f"Expected {CPU_ENCODER_ENV} to be one of {', '.join(CPU_ENCODER_PATHS)}, "
        f"got {os.environ[CPU_ENCODER_ENV]!r}."
    )


def hand_written_paths_enabled() -> bool:
    """Whether models loaded now may use the hand-written CPU encoder paths."""
    return cpu_encoder_path() == "optimized"
