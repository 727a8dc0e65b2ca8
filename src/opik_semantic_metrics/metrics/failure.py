"""Failing one item inside Opik's threaded evaluation without ending the run.

A metric says "this item cannot be scored" by raising Opik's ``MetricComputationError``;
Opik marks that item's score as failed and goes on. But Opik 2.2's evaluator, on
catching any metric exception, imports ``openai`` and ``litellm`` to ask whether it was
a rate-limit error. When several of its worker threads make that first import at once,
Python's import locks can raise ``_DeadlockError`` in one of them, which escapes the
evaluator and ends the whole evaluation (seen in this project's tests with 16 threads).

So every metric here builds its failures with :func:`metric_failure`, which makes that
import once, under a lock, in the failing thread, before Opik's handler runs: every
later import finds the modules loaded. Runs without failures never pay for it.

litellm, when first imported, downloads its model price list from GitHub (and offline
retries it in a background thread) unless ``LITELLM_LOCAL_MODEL_COST_MAP`` is true. That
import only serves Opik's question, so it is made with the variable set, where the user
has not set it, and the variable is then removed again: a failed item makes no network
call. A process that imports litellm first this way keeps litellm's packaged price list.
"""

from __future__ import annotations

import contextlib
import importlib
import os

from opik.exceptions import MetricComputationError

from opik_semantic_metrics.forking import fork_safe_lock

#: What Opik's exception analyser imports on its failure path.
_MODULES_OPIK_IMPORTS_ON_FAILURE = ("openai", "litellm.exceptions")
#: Makes litellm read its packaged model price list instead of downloading it.
_LITELLM_LOCAL_PRICES = "LITELLM_LOCAL_MODEL_COST_MAP"

_imported = False
_import_lock = fork_safe_lock()


def metric_failure(message: str) -> MetricComputationError:
    """A ``MetricComputationError`` that is safe to raise from Opik's worker threads.

    Example:
        >>> raise metric_failure("BERTScore: expected a string, got NoneType.")
        Traceback (most recent call last):
        ...
        opik.exceptions.MetricComputationError: BERTScore: expected a string, got NoneType.
    """
    global _imported
    if not _imported:
        with _import_lock:
            if not _imported:
                _import_without_network()
                _imported = True
    return MetricComputationError(message)


def _import_without_network() -> None:
    chosen = _LITELLM_LOCAL_PRICES in os.environ
    if not chosen:
        os.environ[_LITELLM_LOCAL_PRICES] = "True"
    try:
        for module in _MODULES_OPIK_IMPORTS_ON_FAILURE:
            # Where one is missing, Opik's own check fails the same way without us.
            with contextlib.suppress(ImportError):
                importlib.import_module(module)
    finally:
        if not chosen:
            os.environ.pop(_LITELLM_LOCAL_PRICES, None)
