"""The repository's address is written once, in pyproject.toml's [project.urls]; every
other place that names it (Colab badges, the notebook, the site) carries the same one."""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "examples" / "captioning" / "colab.ipynb"


def repository_url(pyproject: str | None = None) -> str:
    """``Repository`` of pyproject.toml's ``[project.urls]`` (read without tomllib, which
    Python 3.10 lacks)."""
    text = pyproject if pyproject is not None else (ROOT / "pyproject.toml").read_text("utf-8")
    section = re.search(r"^\[project\.urls\]\n(.*?)(?=^\[)", text, flags=re.M | re.S)
    assert section is not None, "pyproject.toml has no [project.urls]"
    [url] = re.findall(r'^Repository = "([^"]+)"$', section.group(1), flags=re.M)
    return url


REPOSITORY_URL = repository_url()


def colab_link(repository: str) -> str:
    """The Colab address that opens the captioning notebook of ``repository``'s main."""
    path = repository.removeprefix("https://github.com/")
    return (
        f"https://colab.research.google.com/github/{path}/blob/main/examples/captioning/colab.ipynb"
    )


def places_naming_the_repository(repository: str) -> dict[str, list[str]]:
    """Each place that names the repository -> what it names there."""
    places = {}
    for page in ("README.md", "docs/guides/examples.md"):
        places[page] = re.findall(
            r"\[!\[Open in Colab\]\([^)]+\)\]\(([^)]+)\)", (ROOT / page).read_text("utf-8")
        )
    cells = json.loads(NOTEBOOK.read_text("utf-8"))["cells"]
    source = "".join("".join(cell["source"]) for cell in cells)
    places["examples/captioning/colab.ipynb"] = re.findall(r'^REPOSITORY = "(.+)"$', source, re.M)
    places["mkdocs.yml"] = re.findall(
        r"^repo_url: (\S+)$", (ROOT / "mkdocs.yml").read_text("utf-8"), re.M
    )
    return places


def mismatches(repository: str) -> dict[str, list[str]]:
    """The places whose address is not ``repository``'s, with what they name."""
    expected = {
        "README.md": [colab_link(repository)],
        "docs/guides/examples.md": [colab_link(repository)],
        "examples/captioning/colab.ipynb": [repository],
        "mkdocs.yml": [repository],
    }
    found = places_naming_the_repository(repository)
    return {place: found[place] for place in expected if found[place] != expected[place]}


def test_every_place_names_the_repository_of_pyproject():
    assert REPOSITORY_URL.startswith("https://github.com/")
    assert mismatches(REPOSITORY_URL) == {}


def test_another_address_in_pyproject_is_a_mismatch_in_every_place():
    # What a move of the repository written only in pyproject.toml would give.
    pyproject = (ROOT / "pyproject.toml").read_text("utf-8")
    moved = repository_url(pyproject.replace(REPOSITORY_URL, "https://github.com/else/where"))
    assert moved == "https://github.com/else/where"
    assert sorted(mismatches(moved)) == [
        "README.md",
        "docs/guides/examples.md",
        "examples/captioning/colab.ipynb",
        "mkdocs.yml",
    ]


def test_no_other_repository_address_is_written_anywhere():
    # A github.com address of this project anywhere else must be the same one.
    owner_and_name = REPOSITORY_URL.removeprefix("https://github.com/")
    name = owner_and_name.split("/")[1]
    written = set()
    for path in [ROOT / "README.md", ROOT / "mkdocs.yml", NOTEBOOK, *(ROOT / "docs").rglob("*.md")]:
        written |= set(
            re.findall(rf"github(?:\.com)?/([\w.-]+/{re.escape(name)})\b", path.read_text("utf-8"))
        )
    assert written == {owner_and_name}
