"""map_batches: long lists run side by side on single-threaded workers, in order."""

from __future__ import annotations

import multiprocessing
import subprocess
import sys
import textwrap
import threading

import pytest
import torch

from opik_semantic_metrics.batching import cpu_parallel
from opik_semantic_metrics.batching.cpu_parallel import map_batches

CPU = torch.device("cpu")
needs_workers = pytest.mark.skipif(
    torch.get_num_threads() < 2 or cpu_parallel._set_openmp_threads() is None,
    reason="one PyTorch thread here, or OpenMP's thread count cannot be set per thread",
)


def _where(batch: list[int]) -> tuple[int, str, int]:
    return sum(batch), threading.current_thread().name, torch.get_num_threads()


@needs_workers
def test_batches_run_on_single_threaded_workers_and_come_back_in_order():
    batches = [[index, index] for index in range(12)]
    results = map_batches(_where, batches, CPU)
    assert [total for total, _, _ in results] == [2 * index for index in range(12)]
    assert all(name.startswith("opik-semantic-metrics-cpu") for _, name, _ in results)
    assert {threads for _, _, threads in results} == {1}


@needs_workers
def test_the_callers_and_new_threads_keep_their_thread_count():
    before = torch.get_num_threads()
    map_batches(_where, [[1], [2], [3]], CPU)
    assert torch.get_num_threads() == before
    seen = []
    thread = threading.Thread(target=lambda: seen.append(torch.get_num_threads()))
    thread.start()
    thread.join()
    assert seen == [before]


def test_one_batch_or_another_device_runs_in_the_calling_thread():
    here = threading.current_thread().name
    assert [name for _, name, _ in map_batches(_where, [[1, 2]], CPU)] == [here]
    on_gpu = map_batches(_where, [[1], [2]], torch.device("cuda"))  # only the type is read
    assert [name for _, name, _ in on_gpu] == [here, here]


@needs_workers
def test_a_worker_that_maps_again_runs_its_batches_itself():
    def nested(batch: list[int]) -> list[str]:
        return [name for _, name, _ in map_batches(_where, [[item] for item in batch], CPU)]

    for names in map_batches(nested, [[1, 2], [3, 4]], CPU):
        assert len(set(names)) == 1 and names[0].startswith("opik-semantic-metrics-cpu")


def test_an_exception_in_a_batch_reaches_the_caller():
    def fail_on_three(batch: list[int]) -> int:
        if 3 in batch:
            raise ValueError("three")
        return sum(batch)

    with pytest.raises(ValueError, match="three"):
        map_batches(fail_on_three, [[1], [2], [3]], CPU)


@needs_workers
def test_the_batches_still_queued_when_one_fails_are_not_run():
    """A failed batch (or Ctrl-C) ends the call; the workers must not go on computing the
    rest of a long list for nobody, holding up the next call and Python's exit."""
    started: list[int] = []
    release = threading.Event()

    def fail_first(batch: list[int]) -> int:
        started.append(batch[0])
        if batch[0] == 0:
            raise ValueError("first")
        release.wait(timeout=10)  # the others stay busy until the caller has its error
        return batch[0]

    with pytest.raises(ValueError, match="first"):
        map_batches(fail_first, [[index] for index in range(40)], CPU)
    release.set()
    map_batches(_where, [[1], [2]], CPU)  # queued behind whatever was left
    workers = cpu_parallel._workers()
    assert workers is not None
    # The batch that failed, those running beside it, and at most one a worker took
    # before the call cancelled the rest.
    assert len(started) <= 2 * workers._max_workers < 40


def _results_in_child(threads: int, queue: multiprocessing.Queue) -> None:
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    queue.put((before, map_batches(_where, [[1, 2], [3], [4, 5]], CPU)))


@needs_workers
def test_a_forked_child_runs_batches_on_one_thread_or_on_a_pool_of_its_own():
    map_batches(_where, [[1], [2]], CPU)  # the parent's pool exists before the fork
    parent_threads = torch.get_num_threads()
    context = multiprocessing.get_context("fork")
    for threads in (1, parent_threads):
        queue = context.Queue()
        child = context.Process(target=_results_in_child, args=(threads, queue))
        child.start()
        child.join(timeout=60)
        assert child.exitcode == 0
        before, results = queue.get(timeout=5)
        assert before == 1  # forking.py: PyTorch on one thread in a forked child
        assert [total for total, _, _ in results] == [3, 3, 9]
        assert {count for _, _, count in results} == {1}  # each batch on one thread
        names = {name for _, name, _ in results}
        if threads == 1:  # in the child's own thread, one after another
            assert names == {"MainThread"}
        else:  # a child that asks for more threads gets a pool of its own, not the parent's
            assert all(name.startswith("opik-semantic-metrics-cpu") for name in names)


@needs_workers
def test_batches_still_run_while_python_shuts_down():
    # atexit handlers run after Python's thread shutdown, when the pool takes no more work;
    # so do threads still scoring after the main thread has ended.
    program = textwrap.dedent(
        """
        import atexit, threading, time
        import torch
        from opik_semantic_metrics.batching.cpu_parallel import map_batches

        CPU = torch.device("cpu")

        def total(batch):
            return sum(batch)

        map_batches(total, [[1], [2]], CPU)  # the pool exists
        atexit.register(lambda: print("atexit", map_batches(total, [[1, 2], [3]], CPU)))

        def late():
            threading.main_thread().join()
            time.sleep(0.5)
            print("late thread", map_batches(total, [[4], [5, 6]], CPU))

        threading.Thread(target=late).start()
        """
    )
    finished = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=120, check=False
    )
    assert finished.returncode == 0, finished.stderr
    assert sorted(finished.stdout.splitlines()) == ["atexit [3, 3]", "late thread [4, 11]"]


def test_a_callers_set_num_threads_leaves_each_worker_one_mkl_thread():
    # torch.set_num_threads also fixes MKL's count for every thread: a worker that lowered
    # OpenMP's count alone ran each matrix product on all the cores, every worker at once.
    program = textwrap.dedent(
        """
        import ctypes, pathlib, torch
        from opik_semantic_metrics.batching.cpu_parallel import map_batches

        library = pathlib.Path(torch.__file__).parent / "lib" / "libtorch_cpu.so"
        try:
            mkl_threads = ctypes.CDLL(str(library)).MKL_Get_Max_Threads
        except (AttributeError, OSError):
            print("no MKL")
            raise SystemExit(0)
        torch.set_num_threads(2)
        print(map_batches(lambda batch: mkl_threads(), [[1], [2], [3]], torch.device("cpu")))
        print(mkl_threads())
        """
    )
    finished = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=120, check=False
    )
    assert finished.returncode == 0, finished.stderr
    if finished.stdout.strip() == "no MKL":
        pytest.skip("this PyTorch build has no MKL")
    # Each worker runs on one MKL thread; the caller keeps the count it asked for.
    assert finished.stdout.splitlines() == ["[1, 1, 1]", "2"]
