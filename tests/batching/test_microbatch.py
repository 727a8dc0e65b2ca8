"""MicroBatcher: concurrent submits are coalesced, and each caller gets its own outcome."""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import pytest

from opik_semantic_metrics.batching.microbatch import MicroBatcher


class SlowSquarer:
    """A batch function that takes a little time per call, like a forward pass."""

    def __init__(self) -> None:
        self.batches: list[list[int]] = []
        self._lock = threading.Lock()

    def __call__(self, items: list[int]) -> list[int]:
        with self._lock:
            self.batches.append(list(items))
        time.sleep(0.01)
        if any(item < 0 for item in items):
            raise ValueError(f"negative item in {items}")
        return [item * item for item in items]


def _wait_until(condition: Callable[[], bool]) -> None:
    """Wait for a state of the batcher, rather than for a delay a busy machine outlasts; the
    bound is only reached by a batcher that never gets there."""
    deadline = time.monotonic() + 60.0
    while not condition():
        assert time.monotonic() < deadline, "the batcher never reached the state waited for"
        time.sleep(0.001)


def test_sixteen_threads_are_coalesced_and_each_gets_its_own_result():
    process = SlowSquarer()
    batcher = MicroBatcher(process, max_batch_size=8)
    with ThreadPoolExecutor(16) as pool:
        results = list(pool.map(batcher.submit, range(400)))
    assert results == [item * item for item in range(400)]
    assert sorted(item for batch in process.batches for item in batch) == list(range(400))
    assert max(len(batch) for batch in process.batches) <= 8
    assert len(process.batches) < 400 / 3  # coalescing really happened
    assert (batcher.batches_run, batcher.items_run) == (len(process.batches), 400)


def test_one_failing_item_fails_only_its_caller():
    process = SlowSquarer()
    batcher = MicroBatcher(process, max_batch_size=16)
    items = [*range(1, 32), -5]

    def outcome(item: int) -> int | str:
        try:
            return batcher.submit(item)
        except ValueError as error:
            return str(error)

    with ThreadPoolExecutor(16) as pool:
        outcomes = dict(zip(items, pool.map(outcome, items), strict=True))
    assert outcomes.pop(-5) == "negative item in [-5]"
    assert outcomes == {item: item * item for item in range(1, 32)}


def test_a_lone_caller_does_not_wait_for_company():
    batcher = MicroBatcher(lambda items: [item + 1 for item in items], max_wait_s=30.0)
    done = threading.Event()
    results = []

    def call_in_sequence() -> None:
        results.extend(batcher.submit(item) for item in range(5))
        done.set()

    threading.Thread(target=call_in_sequence, daemon=True).start()
    # With a 30 s bound, a caller that waited for company would not finish in 5 s.
    assert done.wait(5.0)
    assert results == [1, 2, 3, 4, 5]
    assert batcher.batches_run == 5


def test_a_lone_caller_runs_its_items_in_its_own_thread_and_starts_no_worker():
    threads: list[int] = []

    def process(items: list[int]) -> list[int]:
        threads.append(threading.get_ident())
        return [-item for item in items]

    batcher = MicroBatcher(process, workers=2)
    assert [batcher.submit(item) for item in range(4)] == [0, -1, -2, -3]
    assert threads == [threading.get_ident()] * 4
    assert batcher._workers == []


def test_a_lone_callers_failure_is_raised_to_it_and_the_next_item_still_runs():
    batcher = MicroBatcher(SlowSquarer())
    with pytest.raises(ValueError, match=r"negative item in \[-1\]"):
        batcher.submit(-1)
    assert batcher.submit(3) == 9


def test_concurrent_batches_run_on_one_worker_thread_not_the_callers():
    batches: list[tuple[int, int]] = []

    def process(items: list[int]) -> list[int]:
        batches.append((threading.get_ident(), len(items)))
        time.sleep(0.005)
        return items

    batcher = MicroBatcher(process, max_batch_size=4)
    callers: set[int] = set()

    def submit(item: int) -> int:
        callers.add(threading.get_ident())
        return batcher.submit(item)

    with ThreadPoolExecutor(8) as pool:
        assert list(pool.map(submit, range(64))) == list(range(64))
    # An item arriving while nothing runs and nothing waits is run by its caller (a lone
    # caller); every coalesced batch runs on the one worker.
    coalesced = {thread for thread, size in batches if size > 1}
    assert len(coalesced) == 1 and not coalesced & callers


def test_an_idle_worker_ends_and_the_next_queued_item_starts_another():
    release = threading.Event()

    def process(items: list[int]) -> list[int]:
        release.wait(5.0)
        return [item + 1 for item in items]

    batcher = MicroBatcher(process, idle_s=0.05)

    def two_at_once(first: int) -> list[int]:
        # The first call runs in its caller's thread; the second, arriving meanwhile,
        # is queued for a worker.
        release.clear()
        with ThreadPoolExecutor(2) as pool:
            running = pool.submit(batcher.submit, first)
            _wait_until(lambda: batcher._running == 1)
            queued = pool.submit(batcher.submit, first + 1)
            _wait_until(lambda: batcher._running == 2)  # a worker runs it
            release.set()
            return [running.result(), queued.result()]

    assert two_at_once(1) == [2, 3]
    [first] = batcher._workers
    first.join(timeout=5.0)
    assert not first.is_alive() and batcher._workers == []
    assert two_at_once(10) == [11, 12]
    assert batcher._workers and batcher._workers[0] is not first


def test_an_item_no_worker_can_be_started_for_is_run_by_its_caller():
    """From Python 3.12, no thread can start once Python shuts down: an atexit handler
    that scores must still get its result, and the next call too."""
    release = threading.Event()

    def process(items: list[int]) -> list[int]:
        if 1 in items:
            release.wait(5.0)
        return [item + 1 for item in items]

    def refuse(thread: threading.Thread) -> None:
        raise RuntimeError("can't create new thread at interpreter shutdown")

    batcher = MicroBatcher(process)
    with ThreadPoolExecutor(1) as pool:
        running = pool.submit(batcher.submit, 1)  # a lone caller, still running
        _wait_until(lambda: batcher._running == 1)
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(threading.Thread, "start", refuse)
            # Queued behind the running call, its worker refused: run here instead.
            assert batcher.submit(2) == 3
            assert batcher.submit(3) == 4
        release.set()
        assert running.result() == 2
    assert batcher._queue == [] and batcher._workers == []


def test_an_item_whose_second_worker_cannot_start_wakes_the_first():
    """With one worker idle and a second refused (a thread limit), the item waited in the
    queue for the idle worker's timeout (10 s by default) instead of running at once."""

    def refuse(thread: threading.Thread) -> None:
        raise RuntimeError("can't start new thread")

    batcher = MicroBatcher(lambda items: [item + 1 for item in items], workers=2, idle_s=30.0)
    batcher._last_batch_size = 2  # company seen: items queue for a worker
    assert batcher.submit(1) == 2  # starts the first worker, which then waits for items
    assert len(batcher._workers) == 1
    batcher._last_batch_size = 2
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(threading.Thread, "start", refuse)
        started = time.monotonic()
        assert batcher.submit(2) == 3
    assert time.monotonic() - started < 5.0


def _submit_in_child(batcher: MicroBatcher, queue: multiprocessing.Queue) -> None:
    inherited = (len(batcher._queue), batcher._running)
    queue.put((batcher.submit(10), *inherited))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="this platform cannot fork")
def test_a_forked_child_starts_the_batcher_afresh_whatever_the_parent_was_doing():
    """A child forked while the parent's threads score has none of their threads: not the
    running caller, not the queued one's worker, not the thread holding the lock."""
    parent = os.getpid()
    release = threading.Event()

    def process(items: list[int]) -> list[int]:
        if os.getpid() == parent:
            release.wait(5.0)
        return [item + 1 for item in items]

    batcher = MicroBatcher(process)
    locked, unlock = threading.Event(), threading.Event()

    def hold_the_lock() -> None:
        with batcher._condition:
            locked.set()
            unlock.wait(5.0)

    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    with ThreadPoolExecutor(3) as pool:
        running = pool.submit(batcher.submit, 1)  # a lone caller, running
        _wait_until(lambda: batcher._running == 1)
        queued = pool.submit(batcher.submit, 2)  # queued, its worker waiting on process
        _wait_until(lambda: batcher._running == 2)
        holder = pool.submit(hold_the_lock)
        assert locked.wait(5.0)
        child = context.Process(target=_submit_in_child, args=(batcher, queue))
        child.start()
        unlock.set()
        release.set()
        assert (running.result(), queued.result(), holder.result()) == (2, 3, None)
    child.join(timeout=30)
    if child.is_alive():  # it hangs on the lock that no thread of it will release
        child.kill()
        child.join()
    assert child.exitcode == 0
    # Nothing of the parent's queued or running in the child, which ran its item alone.
    assert queue.get(timeout=5) == (11, 0, 0)


def test_two_workers_run_batches_side_by_side_each_set_up_first():
    set_up: list[str] = []
    running: set[str] = set()
    overlapped = threading.Event()
    lock = threading.Lock()

    sizes: list[int] = []

    def process(items: list[int]) -> list[int]:
        name = threading.current_thread().name + str(threading.get_ident())
        with lock:
            sizes.append(len(items))
            running.add(name)
            if len(running) == 2:
                overlapped.set()
        time.sleep(0.01)
        with lock:
            running.discard(name)
        return [-item for item in items]

    def setup() -> None:
        with lock:
            set_up.append(threading.current_thread().name + str(threading.get_ident()))

    batcher = MicroBatcher(process, max_batch_size=4, workers=2, worker_setup=setup)
    with ThreadPoolExecutor(16) as pool:
        assert list(pool.map(batcher.submit, range(200))) == [-item for item in range(200)]
    assert overlapped.is_set()
    assert len(set_up) == 2 and len(set(set_up)) == 2
    # A worker that waited while the other took the queue runs no empty batch.
    assert min(sizes) >= 1 and batcher.batches_run == len(sizes) and sum(sizes) == 200


def test_a_failing_worker_setup_fails_the_queued_items_instead_of_hanging_them():
    release = threading.Event()

    def process(items: list[int]) -> list[int]:
        release.wait(5.0)
        return items

    def setup() -> None:
        raise RuntimeError("no thread pool")

    batcher = MicroBatcher(process, worker_setup=setup)
    outcomes: dict[int, int | str] = {}

    def outcome(item: int) -> None:
        try:
            outcomes[item] = batcher.submit(item)
        except RuntimeError as error:
            outcomes[item] = str(error)

    # Daemon threads, so that a regression fails here instead of hanging the run.
    callers = [threading.Thread(target=outcome, args=(item,), daemon=True) for item in range(4)]
    callers[0].start()  # runs in its own thread (a lone caller): no setup
    _wait_until(lambda: batcher._running == 1)
    for caller in callers[1:]:
        caller.start()
        caller.join(timeout=5.0)
    release.set()
    callers[0].join(timeout=5.0)
    assert outcomes == {0: 0, 1: "no thread pool", 2: "no thread pool", 3: "no thread pool"}
    assert batcher._workers == [] and batcher._queue == []


class _Teardown(BaseException):
    """What tears a thread down (as SystemExit or KeyboardInterrupt would), not an error."""


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_a_worker_torn_down_mid_batch_answers_every_caller_and_every_queued_item():
    hold, all_queued, late_queued = threading.Event(), threading.Event(), threading.Event()

    def process(items: list[int]) -> list[int]:
        if items == [99]:
            hold.wait(5.0)  # a lone caller keeps the batcher busy: the others queue
        if len(items) > 1:
            raise ValueError("batch failed")  # rerun one item at a time
        if items == [1]:
            late_queued.wait(5.0)
            raise _Teardown("worker torn down")
        return [item * 10 for item in items]

    batcher = MicroBatcher(process, max_batch_size=4, worker_setup=lambda: all_queued.wait(5.0))
    outcomes: dict[int, int | str] = {}

    def outcome(item: int) -> None:
        try:
            outcomes[item] = batcher.submit(item)
        except _Teardown as error:
            outcomes[item] = str(error)

    def start(items: list[int]) -> list[threading.Thread]:
        threads = [threading.Thread(target=outcome, args=(i,), daemon=True) for i in items]
        for thread in threads:
            thread.start()
        return threads

    callers = start([99])
    _wait_until(lambda: batcher._running == 1)
    # Queued one after another: threads started together may queue in any order, and the
    # one-by-one rerun goes in queue order, so 2 could run (and be answered) before 1.
    for queued, item in enumerate([0, 1, 2, 3], start=1):
        callers += start([item])
        _wait_until(lambda queued=queued: len(batcher._queue) == queued)
    all_queued.set()
    hold.set()
    _wait_until(lambda: not batcher._queue)  # the worker took the four
    [worker] = batcher._workers
    callers += start([7, 8])
    _wait_until(lambda: len(batcher._queue) == 2)
    late_queued.set()
    for thread in [*callers, worker]:  # the worker's end is reported within this test
        thread.join(timeout=5.0)
    torn = "worker torn down"
    assert outcomes == {99: 990, 0: 0, 1: torn, 2: torn, 3: torn, 7: torn, 8: torn}
    assert batcher._workers == [] and batcher._queue == []


def test_a_second_worker_whose_setup_fails_wakes_the_first_to_run_its_items():
    release = threading.Event()
    setups: list[int] = []

    def process(items: list[int]) -> list[int]:
        if 0 in items:
            release.wait(5.0)
        return items

    def setup() -> None:
        setups.append(1)
        if len(setups) == 2:
            raise RuntimeError("no thread pool")

    batcher = MicroBatcher(process, workers=2, idle_s=30.0, worker_setup=setup)
    outcomes: dict[int, int | str] = {}

    def outcome(item: int) -> None:
        outcomes[item] = batcher.submit(item)

    callers = [threading.Thread(target=outcome, args=(item,), daemon=True) for item in range(3)]
    callers[0].start()  # a lone caller, held in process until released
    _wait_until(lambda: batcher._running == 1)
    callers[1].start()  # queued: the first worker runs it, then waits for more
    callers[1].join(timeout=5.0)
    callers[2].start()  # queued: starts the second worker, whose setup raises
    callers[2].join(timeout=10.0)  # a third of idle_s: the first worker was woken
    release.set()
    callers[0].join(timeout=5.0)
    assert outcomes == {0: 0, 1: 1, 2: 2} and len(setups) == 2


def test_wrong_number_of_results_is_an_error_not_a_misaligned_answer():
    batcher = MicroBatcher(lambda items: [0] * (len(items) + 1))
    with pytest.raises(RuntimeError, match="2 results for 1 items"):
        batcher.submit(1)


@pytest.mark.parametrize(
    ("size", "wait", "idle", "workers"),
    [(0, 0.0, 1.0, 1), (4, -1.0, 1.0, 1), (4, 0.0, 0.0, 1), (4, 0.0, 1.0, 0)],
)
def test_bad_bounds_are_refused(size, wait, idle, workers):
    with pytest.raises(ValueError):
        MicroBatcher(
            lambda items: items,
            max_batch_size=size,
            max_wait_s=wait,
            idle_s=idle,
            workers=workers,
        )


#: Scored in a child process: a worker computes in PyTorch while the main thread waits in
#: ``submit``; the parent sends the Ctrl-C once the child prints that this is so.
_CTRL_C_CHILD = """
import signal, sys, threading, time
import torch
from opik_semantic_metrics.batching.microbatch import MicroBatcher

# Ctrl-C raises KeyboardInterrupt, as in a terminal, even where the test run inherited an
# ignored SIGINT (a shell that starts it in the background): else the child ignores it.
signal.signal(signal.SIGINT, signal.default_int_handler)

def main_thread_waits_in_submit():
    frame = sys._current_frames().get(threading.main_thread().ident)
    names = []
    while frame is not None:
        names.append(frame.f_code.co_name)
        frame = frame.f_back
    return names[0] == "wait" and "submit" in names

def process(items):
    give_up = time.monotonic() + 60.0  # no Ctrl-C came, or it never stopped the main thread
    while not main_thread_waits_in_submit() and time.monotonic() < give_up:
        time.sleep(0.001)
    product = torch.randn(300, 300)
    print("computing", flush=True)
    # Until Python has begun to exit, and on for 2 s: still in PyTorch as Python exits,
    # however late the Ctrl-C arrives.
    while threading.main_thread().is_alive() and time.monotonic() < give_up:
        product = torch.tanh(product @ product)
    if threading.main_thread().is_alive():
        print("the main thread went on waiting", flush=True)
    end = time.monotonic() + 2.0
    while time.monotonic() < end:
        product = torch.tanh(product @ product)
    return items

class SlowTeardown:
    # Python's teardown takes 1 s, as a large program's does: a worker still in PyTorch
    # then wakes inside it (through a quick teardown it may sleep, and not abort).
    def __del__(self, sleep=time.sleep):
        sleep(1.0)

slow_teardown = SlowTeardown()
batcher = MicroBatcher(process)
batcher._last_batch_size = 2  # company seen: the item goes to a worker
batcher.submit(1)
"""


@pytest.mark.skipif(os.name != "posix", reason="needs POSIX signals")
def test_ctrl_c_while_a_worker_computes_exits_without_an_abort():
    """A Ctrl-C stops the caller waiting for its item while a worker is in PyTorch: Python
    finalised around the worker, and PyTorch's C++ aborted the process (exit code 134).

    And a Ctrl-C that Linux handed to the worker's thread left the main thread waiting
    until the batch ended. The Ctrl-C is sent from outside, as a terminal sends it, once
    the child says its worker computes: after a fixed delay, on a busy machine, it could
    land before the wait or after the computation."""
    child = subprocess.Popen(
        [sys.executable, "-c", _CTRL_C_CHILD],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        said = child.stdout.readline()  # blocks until the worker computes, or the child ends
        if said == "computing\n":
            child.send_signal(signal.SIGINT)  # as a terminal's Ctrl-C, from outside
        printed, errors = child.communicate(timeout=120)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert said == "computing\n", errors
    # Linux may hand the signal to the worker's thread: the main thread must still stop.
    assert "went on waiting" not in printed, errors
    assert "in submit" in errors and "KeyboardInterrupt" in errors, errors
    assert "terminate called" not in errors, errors
    # Python ends an uncaught Ctrl-C by SIGINT; the abort was SIGABRT.
    assert child.returncode == -signal.SIGINT, errors
