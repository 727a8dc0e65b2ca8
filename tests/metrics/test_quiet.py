"""A metric built and used with ``track=False`` starts nothing of Opik's and says nothing.

Opik's client (its message queue, its connection monitor) starts with the first trace,
and prints where it logs to; a metric that is not tracked must not get that far. Run in a
fresh interpreter: the test session's Opik state is not a new user's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent(
    """
    import json, sys, threading
    attempts = []

    def audit(event, arguments):
        if event in ("socket.getaddrinfo", "socket.connect"):
            attempts.append(repr(arguments[:2]))

    sys.addaudithook(audit)
    from opik_semantic_metrics import AnswerMatch

    metric = AnswerMatch(track=False)
    results = [metric.score(output="82%", reference="82.0").value]
    results.append(metric.score(output="five", reference="6").value)
    print(json.dumps({
        "results": results,
        "threads": [t.name for t in threading.enumerate()],
        "attempts": attempts,
    }))
    """
)


@pytest.mark.slow
def test_an_untracked_metric_starts_no_opik_client_and_makes_no_network_call():
    # A configured server (on this machine, where nothing answers), to which a tracked
    # metric would log: its client's threads start, it prints where it logs, and it
    # connects. Analytics is Opik's own switch (on by default outside pytest): off here,
    # as the documentation's quiet offline settings have it.
    environment = {
        **os.environ,
        "OPIK_URL_OVERRIDE": "http://127.0.0.1:9/api",
        "OPIK_ANALYTICS_ENABLE": "false",
    }
    environment.pop("OPIK_TRACK_DISABLE", None)
    completed = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        capture_output=True,
        text=True,
        timeout=600,
        env=environment,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    outcome = json.loads(completed.stdout.splitlines()[-1])
    assert outcome["results"] == [1.0, 0.0]
    assert not [name for name in outcome["threads"] if "Replay" in name or "Queue" in name]
    assert outcome["attempts"] == []
    assert "OPIK" not in completed.stderr and "comet.com" not in completed.stderr
