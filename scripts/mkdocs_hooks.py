"""mkdocs hook: Sphinx cross-reference roles in docstrings shown as plain code.

The docstrings write ``:class:`~package.module.Name``` and the like; mkdocstrings renders
the role's name literally before the code. This hook drops the role and, for a ``~`` target,
keeps only the last name, as Sphinx shows it. Configured in ``mkdocs.yml`` (``hooks:``).
"""

from __future__ import annotations

import re
from typing import Any

_ROLE = re.compile(r":(?:py:)?(?:attr|class|data|exc|func|meth|mod|obj):<code>(~?)([^<]*)</code>")


def _shown(match: re.Match[str]) -> str:
    tilde, target = match.groups()
    # An explicit title (:meth:`Title <package.module.Name>`) is shown without its target.
    titled = re.fullmatch(r"(.+?)\s+&lt;[^&]+&gt;", target, flags=re.DOTALL)
    if titled:
        return f"<code>{titled.group(1)}</code>"
    return f"<code>{target.rsplit('.', 1)[-1] if tilde else target}</code>"


def on_page_content(html: str, **kwargs: Any) -> str:
    """The page's HTML with every role replaced by its code."""
    return _ROLE.sub(_shown, html)
