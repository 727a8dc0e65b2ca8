"""A self-contained HTML report: headings, text, tables and PNG plots in one file.

Plots are embedded as base64 ``data:`` URLs and the style sheet is inline, so the file
opens anywhere (a browser, a CI artefact, an experiment tracker) with nothing beside it.
"""

from __future__ import annotations

import base64
import html
from pathlib import Path

from opik_semantic_metrics.output_files import replace_file
from opik_semantic_metrics.report.tables import Table

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 1200px;
       color: #222; line-height: 1.45; padding: 0 1rem; }
h1 { border-bottom: 2px solid #ddd; padding-bottom: .3rem; }
h2 { margin-top: 2rem; }
table { border-collapse: collapse; margin: .8rem 0; font-size: .92rem; }
th, td { border: 1px solid #ccc; padding: .25rem .6rem; text-align: left; }
th { background: #f3f3f3; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
figure { margin: 1rem 0; }
figure img { max-width: 100%; border: 1px solid #eee; }
figcaption { color: #555; font-size: .9rem; }
pre { background: #f7f7f7; padding: .6rem; overflow-x: auto; }
"""


class HtmlReport:
    """Builds a report piece by piece, then renders or writes it.

    Args:
        title: The page title and top heading.

    Example:
        >>> report = HtmlReport("Demo <1>")
        >>> report.add_paragraph("Scores & intervals.")
        >>> page = report.render()
        >>> "<h1>Demo &lt;1&gt;</h1>" in page, "<p>Scores &amp; intervals.</p>" in page
        (True, True)
    """

    def __init__(self, title: str) -> None:
        self.title = title
        self._parts: list[str] = []

    def add_heading(self, text: str) -> None:
        """A section heading."""
        self._parts.append(f"<h2>{html.escape(text)}</h2>")

    def add_paragraph(self, text: str) -> None:
        """A paragraph of plain text (escaped)."""
        self._parts.append(f"<p>{html.escape(text)}</p>")

    def add_preformatted(self, text: str) -> None:
        """Text shown as is, in a fixed-width font (escaped)."""
        self._parts.append(f"<pre>{html.escape(text)}</pre>")

    def add_table(self, table: Table, caption: str | None = None) -> None:
        """A table, with an optional caption above it."""
        if caption:
            self._parts.append(f"<p><strong>{html.escape(caption)}</strong></p>")
        self._parts.append(table.to_html())

    def add_image(self, png: bytes, alt: str, caption: str | None = None) -> None:
        """A PNG image embedded in the page, with alternative text and a caption."""
        if not png.startswith(b"\x89PNG\r\n\x1a\n"):
            raise ValueError("Expected PNG bytes (see report.plots.figure_png).")
        data = base64.b64encode(png).decode("ascii")
        caption_html = f"<figcaption>{html.escape(caption)}</figcaption>" if caption else ""
        self._parts.append(
            f'<figure><img alt="{html.escape(alt)}" src="data:image/png;base64,{data}">'
            f"{caption_html}</figure>"
        )

    def render(self) -> str:
        """The whole page."""
        title = html.escape(self.title)
        body = "\n".join(self._parts)
        return (
            '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f"<title>{title}</title>\n<style>{_STYLE}</style>\n</head>\n"
            f"<body>\n<h1>{title}</h1>\n{body}\n</body>\n</html>\n"
        )

    def write(self, path: str | Path) -> Path:
        """Write the page (UTF-8), creating the folder; returns the path.

        A character UTF-8 cannot hold (an unpaired surrogate, as in the text of an item
        that failed to score for that reason) is written as its escape, ``\\ud800``.
        """
        page = self.render().encode("utf-8", errors="backslashreplace")
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        # A write that fails halfway leaves the report that was there whole.
        return replace_file(path, page)
