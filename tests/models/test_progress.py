"""Loading a model prints no progress bar of transformers' own, and leaves the user's
choice of bars as it was."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from opik_semantic_metrics.models.progress import no_loading_bars

ROOT = Path(__file__).resolve().parents[2]


def _run(code: str) -> subprocess.CompletedProcess[str]:
    environment = {
        **os.environ,
        "PYTHONPATH": str(ROOT / "src"),
        "OPIK_TRACK_DISABLE": "true",
        "OPIK_ANALYTICS_ENABLE": "false",
        "HF_HUB_OFFLINE": "1",
    }
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=environment,
        timeout=300,
        check=False,
        cwd=ROOT,
    )


@pytest.mark.slow
def test_the_readmes_first_example_prints_no_loading_bar():
    # Issue 54, item 8: "Loading weights: 100%|...| 103/103" under the README's example.
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", readme, flags=re.DOTALL)
    [example] = [block for block in blocks if "print(f1.name" in block]
    finished = _run(example)
    assert finished.returncode == 0, finished.stderr
    assert finished.stdout.startswith("bertscore_f1 0.9387 ")
    assert "Loading weights" not in finished.stderr
    assert "it/s]" not in finished.stderr, finished.stderr


@pytest.mark.slow
def test_the_users_own_choice_of_bars_holds_after_a_load():
    code = (
        "from transformers.utils import logging\n"
        "from opik_semantic_metrics.models.loading import load_encoder\n"
        "logging.disable_progress_bar()\n"
        "load_encoder('all-MiniLM-L6-v2', device='cpu', layer=3)\n"
        "off = logging.is_progress_bar_enabled()\n"
        "logging.enable_progress_bar()\n"
        "load_encoder('all-MiniLM-L6-v2', device='cpu', layer=4)\n"
        "print(off, logging.is_progress_bar_enabled())\n"
    )
    finished = _run(code)
    assert finished.returncode == 0, finished.stderr
    assert finished.stdout.split() == ["False", "True"]


def test_loads_in_several_threads_put_the_bars_back_as_they_were():
    from transformers.utils import logging

    # The command-line tests, run in this process, switch the bars off for good.
    before = logging.is_progress_bar_enabled()
    logging.enable_progress_bar()
    inside = threading.Barrier(4)
    seen = []

    def load() -> None:
        with no_loading_bars():
            inside.wait(timeout=30)  # all four loads in progress at once
            seen.append(logging.is_progress_bar_enabled())
            inside.wait(timeout=30)

    threads = [threading.Thread(target=load) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    after = logging.is_progress_bar_enabled()
    if not before:
        logging.disable_progress_bar()
    assert seen == [False] * 4
    assert after
