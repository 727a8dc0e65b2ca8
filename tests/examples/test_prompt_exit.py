"""Every example and documentation snippet that runs Opik's engine with no server ends
Opik's client before it exits, so that the process ends at once instead of after Opik's
~12 s of retries delivering its per-item traces (``exit_timing.py``).

The captioning example is checked where its test runs it (``test_captioning.py``), and
the README's example in ``test_readme.py``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.examples.exit_timing import ROOT, offline_environment, run_watching_opik


def _offline_snippets() -> dict[str, str]:
    """Python blocks of the documentation that run Opik's engine locally, by page and
    position: each ``opik.evaluate_on_dict_items`` block under ``docs/``."""
    snippets = {}
    for page in sorted((ROOT / "docs").rglob("*.md")):
        blocks = re.findall(r"```python\n(.*?)```", page.read_text("utf-8"), flags=re.DOTALL)
        for index, block in enumerate(blocks):
            if "evaluate_on_dict_items(" in block and "import opik" in block:
                snippets[f"{page.relative_to(ROOT).as_posix()}#{index}"] = block
    return snippets


SNIPPETS = _offline_snippets()


def test_the_documentation_has_offline_snippets_to_run():
    # The guides' offline recipe and the comparison of two systems, at least.
    assert {name.split("#")[0] for name in SNIPPETS} >= {
        "docs/guides/opik-experiments.md",
        "docs/guides/comparing-systems.md",
    }


def _quiet(folder: Path) -> dict[str, str]:
    """No Opik server, and what the install guide's quiet block exports."""
    return {
        **offline_environment(folder),
        "OPIK_TRACK_DISABLE": "true",
        "OPIK_ANALYTICS_ENABLE": "false",
        "OPIK_SENTRY_ENABLE": "false",
    }


@pytest.mark.slow
@pytest.mark.parametrize(
    "arguments",
    [["quickstart.py"], ["realsumm_demo.py", "--limit", "2", "--output", "report"]],
    ids=["quickstart", "realsumm_demo"],
)
def test_each_example_ends_opiks_client_after_its_output(arguments, tmp_path, minilm_path):
    script = ROOT / "examples" / arguments[0]
    lines, exit_seconds, ended = run_watching_opik(
        script, arguments[1:], _quiet(tmp_path), tmp_path
    )
    assert len(lines) > 5
    assert ended, f"{script.name} left Opik's client to flush at exit ({exit_seconds:.1f} s)"


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SNIPPETS))
def test_each_offline_snippet_ends_opiks_client_after_its_output(name, tmp_path, minilm_path):
    script = tmp_path / "snippet.py"
    script.write_text(SNIPPETS[name], encoding="utf-8")
    lines, exit_seconds, ended = run_watching_opik(script, [], _quiet(tmp_path), tmp_path)
    assert lines
    assert ended, f"{name} left Opik's client to flush at exit ({exit_seconds:.1f} s)"
