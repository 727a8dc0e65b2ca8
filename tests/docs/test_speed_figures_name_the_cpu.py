"""Every paragraph of the README and the documentation that names the CPU a figure was
measured on names its vector extensions too: the same code's speed ratios differ between
an AVX-512 CPU and an AVX2-only one (``docs/performance/cpu-isa.md``)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: A CPU model or family named in prose.
CPU = re.compile(r"EPYC|Xeon|Ryzen|Core i\d|Zen \d|Graviton|Apple M\d")
#: Vector extensions named in prose.
EXTENSIONS = re.compile(r"AVX|AMX|NEON|SVE")


def paragraphs_naming_a_cpu_without_its_extensions(text: str) -> list[str]:
    return [
        " ".join(paragraph.split())[:160]
        for paragraph in re.split(r"\n\s*\n", text)
        if CPU.search(paragraph) and not EXTENSIONS.search(paragraph)
    ]


def test_each_cpu_named_beside_a_figure_comes_with_its_vector_extensions():
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    # The changelog page includes CHANGELOG.md, whose history keeps its own words.
    pages = [page for page in pages if page.name != "changelog.md"]
    assert len(pages) > 30
    missing = {
        page.relative_to(ROOT).as_posix(): found
        for page in pages
        if (found := paragraphs_naming_a_cpu_without_its_extensions(page.read_text("utf-8")))
    }
    assert missing == {}


def test_a_paragraph_naming_only_the_model_is_found():
    text = "Fast.\n\nRun on a 2-core AMD EPYC virtual machine.\n\nOn a Xeon (AVX-512, AMX)."
    assert paragraphs_naming_a_cpu_without_its_extensions(text) == [
        "Run on a 2-core AMD EPYC virtual machine."
    ]
