"""The HTML report: escaped text, tables, and plots embedded byte for byte."""

from __future__ import annotations

import base64
import re

import pytest

from opik_semantic_metrics.report.html import HtmlReport
from opik_semantic_metrics.report.plots import figure_png, score_distributions
from opik_semantic_metrics.report.tables import Table


def test_report_embeds_every_piece_in_order(tmp_path):
    png = figure_png(score_distributions({"f1": {"a": [0.5, 0.7], "b": [0.4, 0.45]}}), dpi=40)
    report = HtmlReport("Systems & scores")
    report.add_heading("Ranking")
    report.add_table(Table(("system", "mean"), (("a", "0.6"),)), caption="Means <95%>")
    report.add_image(png, alt="distributions", caption="Per item")
    report.add_preformatted("a  b\n1  2")
    path = report.write(tmp_path / "out" / "report.html")
    page = path.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    assert "<title>Systems &amp; scores</title>" in page
    assert page.index("<h2>Ranking</h2>") < page.index("<table>") < page.index("<figure>")
    assert "<strong>Means &lt;95%&gt;</strong>" in page
    assert "<pre>a  b\n1  2</pre>" in page
    [encoded] = re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', page)
    assert base64.b64decode(encoded) == png
    assert '<img alt="distributions"' in page and "<figcaption>Per item</figcaption>" in page


def test_add_image_refuses_bytes_that_are_not_png():
    with pytest.raises(ValueError, match="Expected PNG bytes"):
        HtmlReport("x").add_image(b"GIF89a....", alt="x")


def test_text_utf8_cannot_hold_is_escaped_and_an_old_report_is_not_emptied(tmp_path):
    path = tmp_path / "report.html"
    path.write_text("the previous report")
    report = HtmlReport("Failures")
    report.add_paragraph("item text \ud800 (an unpaired surrogate)")
    report.write(path)
    assert "<p>item text \\ud800 (an unpaired surrogate)</p>" in path.read_text(encoding="utf-8")
