"""The GPU suite keeps what it measured: each case on disk when it ends, tables of partial runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).parents[1] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

import gpu_suite_table  # noqa: E402
import suite_log  # noqa: E402


def test_each_record_is_on_disk_when_the_call_returns(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCHMARK_RESULTS", str(tmp_path))
    suite_log.record("step", "meta", pairs=10)
    assert suite_log.read(tmp_path, "step") == [{"kind": "meta", "pairs": 10}]
    suite_log.record("step", "case", case="a", seconds=1.5)
    assert suite_log.read(tmp_path, "step")[-1] == {"kind": "case", "case": "a", "seconds": 1.5}


def test_a_line_cut_by_a_kill_is_skipped(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCHMARK_RESULTS", str(tmp_path))
    suite_log.record("step", "case", case="a", seconds=1.0)
    with open(tmp_path / "step.jsonl", "a", encoding="utf-8") as output:
        output.write('{"kind": "case", "case": "d", "seco')
    assert [line["case"] for line in suite_log.read(tmp_path, "step")] == ["a"]


def test_the_table_of_a_partial_run_has_the_finished_cases_and_names_the_rest(tmp_path):
    lines = [
        {"kind": "meta", "pairs": 100, "device": "cuda", "weights": "random weights, x"},
        {"kind": "work", "gflop": {"a": 2.0, "d": 2.0}},
        {"kind": "case", "case": "a", "round": 0, "seconds": 1.0},
        {"kind": "case", "case": "k", "round": 0, "seconds_64": 1.0, "seconds_256": 0.5},
        {"kind": "case", "case": "d", "round": 0, "seconds": 0.25},
        {"kind": "peak", "gflops": 100.0},
    ]
    text = "\n".join(json.dumps(line) for line in lines) + "\n"
    (tmp_path / "bertscore_throughput.jsonl").write_text(text, encoding="utf-8")
    table = gpu_suite_table.table(tmp_path)
    row = next(line for line in table.splitlines() if "score_batch, float32" in line)
    # 400 pairs/s against bert_score's best batch (256: 200 pairs/s); 2 GFLOP a 100 pairs
    # at 400 pairs/s is 8 GFLOP/s, 8% of the peak.
    assert row.split()[-4:] == ["2.00", ">=", "1.3", "8%"]
    assert "400.00" in row and "best batch (256)" in row
    assert "random weights, x weights" in table
    assert "no results from: large_encoder, comet_shapes, encoder_paths" in table


@pytest.mark.slow
def test_a_step_killed_after_its_first_case_keeps_that_case(tmp_path):
    """The throughput step, run as the suite runs it, killed as soon as its first case
    is written: the table shows that case."""
    env = dict(os.environ, BENCHMARK_RESULTS=str(tmp_path), PYTHONPATH=os.pathsep.join(sys.path))
    command = [
        sys.executable, str(BENCHMARKS / "bertscore_throughput.py"), "--in-process",
        "--pairs", "6", "--rounds", "1", "--cases", "ah", "--peak-repeats", "1",
    ]  # fmt: skip
    process = subprocess.Popen(
        command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline and process.poll() is None:
            lines = suite_log.read(tmp_path, "bertscore_throughput")
            if any(line["kind"] == "case" for line in lines):
                break
            time.sleep(0.05)
    finally:
        process.kill()
        process.wait()
    cases = [
        line for line in suite_log.read(tmp_path, "bertscore_throughput") if line["kind"] == "case"
    ]
    assert [line["case"] for line in cases] == ["a"]  # killed before (h) ended
    table = gpu_suite_table.table(tmp_path)
    assert "bert_score whole list, batch 64" in table
    assert "Opik's engine alone" not in table
