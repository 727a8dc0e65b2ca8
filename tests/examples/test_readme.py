"""The README's offline Opik example, run as a user runs it: its scores, its order, its exit.

The code block is taken from the README and run in a fresh interpreter with the
environment the README's "Quiet and fully offline" block exports, so that what is tested
is what a newcomer copies.
"""

from __future__ import annotations

import ast
import os
import re
import sys
from pathlib import Path

import pytest

from tests.bert_score_oracle import minilm_prf
from tests.examples.exit_timing import EXIT_ALLOWANCE_S, TEARDOWN_ONLY, run_timed

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _block(language: str, containing: str) -> str:
    [block] = [
        text
        for text in re.findall(rf"```{language}\n(.*?)```", README, flags=re.DOTALL)
        if containing in text
    ]
    return block


def _quiet_environment() -> dict[str, str]:
    """The variables the README's quiet block exports, over this test's environment."""
    exported = re.findall(r"^export (\w+)=(\S+)", _block("bash", "OPIK_TRACK_DISABLE"), re.M)
    assert len(exported) >= 5
    environment = {**os.environ, "PYTHONPATH": str(ROOT / "src"), **dict(exported)}
    # No Opik server: a user's configured one would change what is measured.
    for name in ("OPIK_URL_OVERRIDE", "OPIK_API_KEY", "OPIK_DEFAULT_FLUSH_TIMEOUT"):
        environment.pop(name, None)
    return environment


def _run(code: str, environment: dict[str, str], folder: Path) -> tuple[list[str], float]:
    """Run ``code`` in a fresh interpreter: its lines, and its seconds from last line to exit."""
    return run_timed([sys.executable, "-c", code], environment, folder)


@pytest.mark.slow
def test_the_offline_example_prints_each_pair_in_order_and_exits_at_once(minilm_path, tmp_path):
    code = _block("python", "evaluate_on_dict_items")
    # Leave a configured server out of it (opik configure's file), as a newcomer has none.
    environment = {**_quiet_environment(), "OPIK_CONFIG_PATH": str(tmp_path / "none.config")}
    lines, exit_seconds = _run(code, environment, tmp_path)
    # Each result after its item id, in the items' order.
    split = [line.split(" ", 1) for line in lines]
    printed = [(int(pair), ast.literal_eval(scores)) for pair, scores in split]
    assert [pair for pair, _ in printed] == [1, 2]
    items = ast.literal_eval(code.split("items = ", 1)[1].split("\nresult", 1)[0])
    oracle = minilm_prf(minilm_path, [i["answer"] for i in items], [i["gold"] for i in items])
    for (_, scores), (precision, recall, f1) in zip(printed, oracle.tolist(), strict=True):
        assert [name for name, _ in scores] == [
            "bertscore_f1", "bertscore_precision", "bertscore_recall"
        ]  # fmt: skip
        assert [value for _, value in scores] == pytest.approx([f1, precision, recall], abs=6e-5)
    # Opik retried delivering its per-item traces for about 12 s before the process could
    # end. What is left is the interpreter's teardown, which takes seconds on a busy
    # machine whatever the example does: measured beside it, with the same imports. Two
    # teardowns differ more the busier the machine, so the margin grows with the measured
    # one; the retries (some 11 s more) stay above it while a teardown takes under 16 s.
    _, teardown_seconds = _run(TEARDOWN_ONLY, environment, tmp_path)
    assert exit_seconds < 1.5 * teardown_seconds + EXIT_ALLOWANCE_S, (
        exit_seconds,
        teardown_seconds,
    )
