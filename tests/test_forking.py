"""A forked child scores, whatever the parent's threads held at the fork."""

from __future__ import annotations

import multiprocessing
import os
import threading

import pytest

from opik_semantic_metrics import BERTScore
from opik_semantic_metrics.forking import fork_safe_lock

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="this platform cannot fork")


def _report_locked(lock: threading.Lock, queue: multiprocessing.Queue) -> None:
    queue.put(lock.acquire(timeout=5))


def _score_in_child(metric: BERTScore, queue: multiprocessing.Queue) -> None:
    queue.put(
        metric.score(output="A cat sits on the mat.", reference="A cat sat on the mat.")[0].value
    )


def _fork_while_held(lock: threading.Lock, target, *args) -> tuple[int | None, object]:
    """Run ``target(*args, queue)`` in a child forked while another thread holds ``lock``."""
    inside, leave = threading.Event(), threading.Event()

    def hold() -> None:
        with lock:
            inside.set()
            leave.wait(10)

    holder = threading.Thread(target=hold)
    holder.start()
    assert inside.wait(10)
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=target, args=(*args, queue))
    child.start()
    leave.set()  # the parent's thread lets go right after the fork; the child's copy stays held
    holder.join()
    child.join(timeout=60)
    if child.is_alive():  # waiting for ever on a lock no thread of its own will release
        child.kill()
        child.join()
        return None, None
    return child.exitcode, queue.get(timeout=5)


def test_a_lock_held_by_another_thread_at_the_fork_is_free_in_the_child():
    lock = fork_safe_lock()
    assert _fork_while_held(lock, _report_locked, lock) == (0, True)
    # A plain lock is what hung the child: this one is still held there.
    assert _fork_while_held(plain := threading.Lock(), _report_locked, plain) == (0, False)


def test_a_child_forked_while_the_parent_tokenizes_scores_as_the_parent(minilm_path):
    # Built here, in the forking thread, with a forward pass on every core (the metric's
    # probe): a child then hung in PyTorch's first parallel kernel, and, with a parent's
    # worker inside the tokenizer at the fork, on the tokenizer's lock.
    metric = BERTScore(model=str(minilm_path), device="cpu", track=False)
    expected = metric.score(output="A cat sits on the mat.", reference="A cat sat on the mat.")
    exitcode, f1 = _fork_while_held(metric.engine.encoder.tokenizer_lock, _score_in_child, metric)
    assert exitcode == 0
    assert f1 == pytest.approx(expected[0].value, abs=1e-6)
