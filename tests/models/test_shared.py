"""LoadOnce: one load per key, however many threads ask at once."""

from __future__ import annotations

import threading
import time

import pytest

from opik_semantic_metrics.models.shared import LoadOnce


def test_threads_asking_at_once_get_one_value_made_once():
    registry: LoadOnce[str, object] = LoadOnce()
    made: list[object] = []
    start = threading.Barrier(8)

    def make() -> object:
        time.sleep(0.05)  # a slow load, so the other threads ask while it runs
        made.append(object())
        return made[-1]

    got: list[object] = []

    def ask() -> None:
        start.wait()
        got.append(registry.get("model", make))

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(made) == 1 and got == made * 8


def test_a_load_of_another_key_does_not_wait():
    registry: LoadOnce[str, str] = LoadOnce()
    slow_started, release = threading.Event(), threading.Event()

    def slow() -> str:
        slow_started.set()
        release.wait(timeout=10)
        return "slow"

    thread = threading.Thread(target=registry.get, args=("slow", slow))
    thread.start()
    slow_started.wait(timeout=10)
    assert registry.get("fast", lambda: "fast") == "fast"  # while "slow" still loads
    release.set()
    thread.join()
    assert registry.get("slow", lambda: "again") == "slow"


def test_a_failed_load_is_tried_again():
    registry: LoadOnce[str, str] = LoadOnce()

    def fail() -> str:
        raise OSError("no such model")

    with pytest.raises(OSError, match="no such model"):
        registry.get("model", fail)
    assert registry.get("model", lambda: "loaded") == "loaded"
