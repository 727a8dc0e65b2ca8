"""How a result was scored, under one set of key names wherever it is written.

A metric's ``metadata`` (what Opik stores with each score), the command line's ``--json``
header and the comparability check
(:mod:`~opik_semantic_metrics.compare.comparable`) all read these records, so that a
setting has one name everywhere: ``model``, ``layer``, ``hash``, ``dtype``...,
``model_revision`` and ``class_identifier`` for COMET. No Opik import: the command line
writes them too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from opik_semantic_metrics.models.devices import dtype_name
from opik_semantic_metrics.version import __version__

if TYPE_CHECKING:
    from opik_semantic_metrics.bertscore.engine import BERTScoreEngine
    from opik_semantic_metrics.comet.engine import CometEngine


def bertscore_record(engine: BERTScoreEngine) -> dict[str, Any]:
    """The settings a BERTScore was computed with."""
    from opik_semantic_metrics.bertscore.engine import FAITHFUL_TO_BERT_SCORE

    return {
        "model": engine.model_name,
        "layer": engine.num_layers,
        "idf": engine.idf,
        "rescaled": engine.rescale_with_baseline,
        "hash": engine.hash,
        "dtype": dtype_name(engine.encoder.dtype),
        "bert_score_version": FAITHFUL_TO_BERT_SCORE,
    }


def comet_record(engine: CometEngine) -> dict[str, Any]:
    """The model and versions a COMET score was computed with."""
    from opik_semantic_metrics.comet.engine import FAITHFUL_TO_COMET

    return {
        "model": engine.model_name,
        "model_revision": engine.revision,
        "class_identifier": engine.class_identifier,
        "comet_version": FAITHFUL_TO_COMET,
        "version": __version__,
        "dtype": dtype_name(engine.loaded.dtype),
    }
