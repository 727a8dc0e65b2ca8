"""griffe extension: a docstring's ``Example:`` section read as an examples section.

The docstrings head their doctests ``Example:``, as Google's style guide spells it; griffe
knows only ``Examples:`` as a section and reads ``Example:`` as an admonition of Markdown
text, where the ``>>>`` prompts become nested blockquotes. This extension renames such a
heading (a line of its own at the docstring's outer level) before griffe parses the
docstring, so that each example renders as a code block with its prompts. Configured in
``mkdocs.yml`` (the python handler's ``extensions``).
"""

from __future__ import annotations

import re
from typing import Any

import griffe

# griffe keeps the docstring's text cleaned of its common indentation: a section heading
# starts its line.
_HEADING = re.compile(r"^Example:[ \t]*$", flags=re.MULTILINE)


def examples_heading(text: str) -> str:
    """``text`` with every outer ``Example:`` heading spelled ``Examples:``.

    Example:
        >>> examples_heading("Twice.\\n\\nExample:\\n    >>> 2 * 2\\n    4")
        'Twice.\\n\\nExamples:\\n    >>> 2 * 2\\n    4'
    """
    return _HEADING.sub("Examples:", text)


class ExampleSections(griffe.Extension):
    """Renames the ``Example:`` heading of every docstring griffe loads."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None and "Example:" in obj.docstring.value:
            obj.docstring.value = examples_heading(obj.docstring.value)
