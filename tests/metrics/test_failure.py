"""Failing items never end an Opik run, even when many fail at once from 16 threads."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest
from opik.exceptions import MetricComputationError

from opik_semantic_metrics.metrics.failure import metric_failure

# Runs in a fresh interpreter: the race is on the *first* import of litellm, which the
# test session may already have done.
SCRIPT = textwrap.dedent(
    """
    import sys
    import opik
    from opik_semantic_metrics import AnswerMatch

    assert "litellm" not in sys.modules
    items = [{"answer": None if i % 2 else "82%", "gold": "82.0"} for i in range(64)]
    result = opik.evaluate_on_dict_items(
        items=items,
        task=lambda item: {"output": item["answer"], "reference": item["gold"]},
        scoring_metrics=[AnswerMatch(track=False, name="answer")],
        scoring_threads=16,
    )
    scores = [test.score_results[0] for test in result.test_results]
    print(len(scores), sum(s.value == 1.0 and not s.scoring_failed for s in scores))
    """
)


def test_metric_failure_is_opiks_error_type():
    error = metric_failure("BERTScore: bad item")
    assert isinstance(error, MetricComputationError)
    assert str(error) == "BERTScore: bad item"


@pytest.mark.slow
def test_concurrent_failures_do_not_end_the_run():
    # AnswerMatch scores a None output 0.0; a dict output makes it fail: use both.
    script = SCRIPT.replace('None if i % 2 else "82%"', '{"x": 1} if i % 2 else "82%"')
    completed = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=600
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert completed.stdout.split()[-2:] == ["64", "32"]


# Every network call that code of litellm or openai attempts, after one item fails.
NETWORK_PROBE = textwrap.dedent(
    """
    import os, sys, traceback
    attempts = []

    def audit(event, arguments):
        if event in ("socket.getaddrinfo", "socket.connect"):
            files = [frame.filename for frame in traceback.extract_stack()]
            if any(f"{os.sep}litellm{os.sep}" in f or f"{os.sep}openai{os.sep}" in f
                   for f in files):
                attempts.append(repr(arguments[:2]))

    sys.addaudithook(audit)
    import opik
    from opik_semantic_metrics import AnswerMatch

    items = [{"answer": "82%", "gold": "82.0"}, {"answer": {"x": 1}, "gold": "82.0"}]
    result = opik.evaluate_on_dict_items(
        items=items,
        task=lambda item: {"output": item["answer"], "reference": item["gold"]},
        scoring_metrics=[AnswerMatch(track=False, name="answer")],
        verbose=0,
    )
    failed = [test.score_results[0].scoring_failed for test in result.test_results]
    print(failed, "litellm" in sys.modules, os.environ.get("LITELLM_LOCAL_MODEL_COST_MAP"))
    print(attempts)
    """
)


@pytest.mark.slow
def test_a_failed_item_makes_no_network_call_and_leaves_the_environment_as_it_was():
    environment = {k: v for k, v in os.environ.items() if k != "LITELLM_LOCAL_MODEL_COST_MAP"}
    completed = subprocess.run(
        [sys.executable, "-c", NETWORK_PROBE],
        capture_output=True,
        text=True,
        timeout=600,
        env=environment,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    outcome, attempts = completed.stdout.splitlines()[-2:]
    # Opik's failure path imported litellm (so the probe watched it), and it stayed quiet.
    assert outcome == "[False, True] True None"
    assert attempts == "[]"
    assert "model cost map" not in completed.stderr
