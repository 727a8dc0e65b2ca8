"""griffe extension: an argument entry naming several arguments, split into one per name.

The docstrings document arguments that go together in one entry
(``outputs, references: The labelled pairs.``), which griffe reads as one parameter named
``outputs, references`` that the signature lacks. This extension rewrites such an entry of
an ``Args:`` section as one entry a name, each with the same description, before griffe
parses the docstring, so that its check of unknown parameters stays on for every other
entry. Configured in ``mkdocs.yml`` (the python handler's ``extensions``).
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_SECTION = re.compile(r"^(\s*)(Args|Arguments|Parameters):\s*$")
_GROUPED = re.compile(r"^(\s+)(\*{0,2}\w+(?:,\s*\*{0,2}\w+)+):(.*)$")


def _split_grouped_arguments(text: str) -> str:
    lines = text.splitlines()
    result: list[str] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        result.append(line)
        index += 1
        section = _SECTION.match(line)
        if not section:
            continue
        base = len(section.group(1))
        while index < len(lines):
            line = lines[index]
            if line.strip() and len(line) - len(line.lstrip()) <= base:
                break
            grouped = _GROUPED.match(line)
            if not grouped:
                result.append(line)
                index += 1
                continue
            indent, names, first = grouped.groups()
            entry_indent = len(indent)
            rest: list[str] = []
            index += 1
            while index < len(lines) and (
                not lines[index].strip()
                or len(lines[index]) - len(lines[index].lstrip()) > entry_indent
            ):
                rest.append(lines[index])
                index += 1
            while rest and not rest[-1].strip():
                rest.pop()
            for name in (part.strip() for part in names.split(",")):
                result.append(f"{indent}{name}:{first}")
                result.extend(rest)
    return "\n".join(result)


class GroupedArguments(griffe.Extension):
    """Splits grouped argument entries of every docstring griffe loads."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None and "," in obj.docstring.value:
            obj.docstring.value = _split_grouped_arguments(obj.docstring.value)
