"""The documentation site as built: without a warning, and its examples as code.

The site is built once into a temporary directory with the project's ``mkdocs.yml``; the
tests read its HTML. Needs the ``docs`` extra (skipped without it; ``.ci/run`` installs it
and runs this file).
"""

from __future__ import annotations

import os
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
API_PAGES = ("metrics", "engines", "compare", "models", "distributed", "errors")


class _Blocks(HTMLParser):
    """The text of each ``<code>`` element, and the deepest nesting of ``<blockquote>``."""

    def __init__(self) -> None:
        super().__init__()
        self.codes: list[str] = []
        self._code_depth = 0
        self._quote_depth = 0
        self.deepest_quote = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "code":
            if self._code_depth == 0:
                self.codes.append("")
            self._code_depth += 1
        elif tag == "blockquote":
            self._quote_depth += 1
            self.deepest_quote = max(self.deepest_quote, self._quote_depth)

    def handle_endtag(self, tag: str) -> None:
        if tag == "code":
            self._code_depth -= 1
        elif tag == "blockquote":
            self._quote_depth -= 1

    def handle_data(self, data: str) -> None:
        if self._code_depth:
            self.codes[-1] += data


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> tuple[Path, str]:
    """The built site's directory and what the build printed."""
    pytest.importorskip("mkdocs")
    pytest.importorskip("mkdocstrings_handlers.python")
    directory = tmp_path_factory.mktemp("site")
    completed = subprocess.run(
        # Not strict, so that a warning is reported by the test of warnings, and the
        # other tests still read the site.
        [sys.executable, "-m", "mkdocs", "build", "--no-strict", "-f", str(ROOT / "mkdocs.yml"),
         "-d", str(directory)],
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        timeout=600,
        check=False,
    )  # fmt: skip
    assert completed.returncode == 0, completed.stdout + completed.stderr
    return directory, completed.stdout + completed.stderr


def _page(site: tuple[Path, str], name: str) -> _Blocks:
    blocks = _Blocks()
    blocks.feed((site[0] / "reference" / name / "index.html").read_text(encoding="utf-8"))
    return blocks


@pytest.mark.slow
def test_the_build_prints_no_warning(site):
    printed = site[1]
    assert "WARNING" not in printed and "ERROR" not in printed, printed


@pytest.mark.slow
def test_docstring_examples_render_as_code_with_their_prompts(site):
    examples = 0
    for name in API_PAGES:
        page = _page(site, name)
        # A doctest read as Markdown became blockquotes nested three deep (">>>").
        assert page.deepest_quote < 2, name
        examples += sum(1 for code in page.codes if code.lstrip().startswith(">>> "))
    # 55 examples were on the API pages when rendering them as code was fixed.
    assert examples >= 55
    engines = _page(site, "engines").codes
    [numbers] = [code for code in engines if ">>> found = numbers_in(" in code]
    # The prompts, each on its own line, and the printed result below them.
    assert numbers.splitlines() == [
        '>>> found = numbers_in("Two of the 1,500 rooms cost 4.50 dollars, 3 million")',
        '>>> [format(number, "f") for number in sorted(found)]',
        "['2', '4.5', '1500', '3000000']",
    ]


def test_no_docstring_or_help_sends_the_reader_to_the_readme():
    # The README keeps to a user's first ten minutes; what a docstring or an option's help
    # points to is on the documentation site, whose pages the strict build checks.
    package = ROOT / "src" / "opik_semantic_metrics"
    pointing = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in sorted(package.rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if "the README" in line
    ]
    assert pointing == []
