"""Tables: the same cells in text, markdown and HTML; builders over real summaries."""

from __future__ import annotations

import pytest

from opik_semantic_metrics.compare.correlation import Correlation
from opik_semantic_metrics.compare.experiments import ExperimentScores, summarize
from opik_semantic_metrics.compare.stats import compare_systems
from opik_semantic_metrics.report.tables import (
    Table,
    correlation_table,
    pairwise_table,
    summaries_pairwise_table,
    summary_table,
)

TABLE = Table(("system", "mean", "note"), (("bart", "0.7158", "a|b"), ("t5", "0.6883", "<ok>")))


def test_text_aligns_numbers_right_and_text_left():
    assert TABLE.to_text().splitlines() == [
        "system    mean  note",
        "------  ------  ----",
        "bart    0.7158  a|b",
        "t5      0.6883  <ok>",
    ]


def test_a_column_of_percentages_is_numeric():
    table = Table(("format", "accuracy"), (("Float", "100.0%"), ("Int", "5.0%")))
    assert table.to_text().splitlines()[2:] == ["Float     100.0%", "Int         5.0%"]
    assert table.to_markdown().splitlines()[1] == "| --- | ---: |"


def test_markdown_escapes_pipes_and_html_and_right_aligns_numbers():
    # Viewers that render HTML inside markdown (VS Code, Jupyter, MkDocs) ran a cell
    # such as <script>: it is text now, as in the HTML report.
    assert TABLE.to_markdown().splitlines() == [
        "| system | mean | note |",
        "| --- | ---: | --- |",
        "| bart | 0.7158 | a\\|b |",
        "| t5 | 0.6883 | &lt;ok&gt; |",
    ]


def test_html_escapes_cells_and_marks_numeric_columns():
    page = TABLE.to_html()
    assert page.startswith('<table><thead><tr><th>system</th><th class="num">mean</th>')
    assert "<td>&lt;ok&gt;</td>" in page
    assert page.count("<tr>") == 3


def test_a_line_break_in_a_cell_keeps_its_row_on_one_line():
    table = Table(("system", "mean"), (("beam\nsearch", "0.5"), ("greedy\r\n", "0.4")))
    assert table.to_text().splitlines()[2:] == ["beam search   0.5", "greedy        0.4"]
    assert table.to_markdown().splitlines()[2:] == ["| beam search | 0.5 |", "| greedy | 0.4 |"]


def test_rows_must_match_the_headers():
    with pytest.raises(ValueError, match="rows of 2 cells"):
        Table(("a", "b"), (("1",),))


def test_summary_table_shows_each_interval_and_rank():
    a = ExperimentScores("a", ("1", "2", "3"), {"f1": {"1": 0.9, "2": 0.7, "3": 0.8}}, {})
    b = ExperimentScores("b", ("1", "2", "3"), {"f1": {"1": 0.5, "2": 0.6, "3": 0.4}}, {})
    [summary] = summarize([b, a], resamples=100)
    table = summary_table([summary])
    assert table.headers == (
        "metric",
        "system",
        "items",
        "excluded",
        "mean",
        "95% low",
        "95% high",
        "rank",
    )
    interval = summary.intervals["a"]
    assert table.rows[1] == (
        "f1",
        "a",
        "3",
        "0",
        f"{interval.mean:.4f}",
        f"{interval.low:.4f}",
        f"{interval.high:.4f}",
        "1",
    )
    assert table.rows[0][-1] == "2"
    assert summaries_pairwise_table([summary]).rows[0][:3] == ("f1", "b", "a")


@pytest.mark.parametrize(
    ("confidence", "label"), [(0.9, "90%"), (0.975, "97.5%"), (0.999, "99.9%")]
)
def test_summary_table_labels_the_interval_with_its_confidence(confidence, label):
    a = ExperimentScores("a", ("1", "2"), {"f1": {"1": 0.9, "2": 0.7}}, {})
    b = ExperimentScores("b", ("1", "2"), {"f1": {"1": 0.5, "2": 0.6}}, {})
    table = summary_table(summarize([a, b], resamples=50, confidence=confidence))
    assert table.headers[5:7] == (f"{label} low", f"{label} high")


def test_summary_table_shows_the_items_a_failed_score_left_out():
    a = ExperimentScores("a", ("1", "2", "3"), {"f1": {"1": 0.9, "2": 0.7}}, {"f1": ("3",)})
    b = ExperimentScores("b", ("1", "2", "3"), {"f1": {"1": 0.5, "2": 0.6, "3": 0.4}}, {})
    table = summary_table(summarize([a, b], resamples=50))
    assert [row[2:4] for row in table.rows] == [("2", "1"), ("2", "1")]


def test_pairwise_table_reports_tests_and_verdict():
    comparison = compare_systems([0.5, 0.6, 0.55], [0.5, 0.61, 0.54], name_a="x", name_b="y")
    [row] = pairwise_table([("f1", comparison)]).rows
    assert row[:3] == ("f1", "x", "y")
    assert row[6] == f"{comparison.t_test.p_value:.4f}"
    assert row[7] == f"{comparison.bootstrap.p_value:.4f}"
    assert row[-1] == "no"


def test_tiny_p_values_keep_their_magnitude():
    comparison = compare_systems([0.9 + i / 1000 for i in range(30)], [0.1] * 30)
    [row] = pairwise_table([("f1", comparison)]).rows
    assert float(row[6]) == pytest.approx(comparison.t_test.p_value, rel=0.05)
    assert comparison.t_test.p_value < 1e-4 and "e-" in row[6]
    # No resample went against A: (0 + 1) / (1000 + 1), twice, not 0.
    assert comparison.bootstrap.wins_a == comparison.bootstrap.resamples == 1000
    assert row[7] == "0.0020"
    assert "   0.0020  " in pairwise_table([("f1", comparison)]).to_text()  # right-aligned


def test_correlation_table_lists_levels_per_metric():
    table = correlation_table(
        {
            "f1": {
                "system": Correlation(0.99, 1.0, 1.0, 3),
                "summary": Correlation(0.3, 0.25, 0.2, 80, 20),
            },
        }
    )
    assert table.rows == (
        ("f1", "system", "0.9900", "1.0000", "1.0000", "3", "0"),
        ("f1", "summary", "0.3000", "0.2500", "0.2000", "80", "20"),
    )


def test_a_note_follows_the_table_in_every_rendering():
    from opik_semantic_metrics.report.tables import Table

    table = Table(("system", "mean"), (("a<b", "0.5"),), note="Means of 3 items & more.")
    assert table.to_text().splitlines()[-2:] == ["", "Means of 3 items & more."]
    assert table.to_markdown().endswith("\n\nMeans of 3 items &amp; more.")
    assert table.to_html().endswith('</table><p class="note">Means of 3 items &amp; more.</p>')
    assert "note" not in Table(("system",), (("a",),)).to_html()


def test_the_pairwise_table_says_which_test_decides_and_where_they_disagree():
    from opik_semantic_metrics.compare.stats import compare_systems
    from opik_semantic_metrics.report.tables import pairwise_table

    # y wins every item, by 0.01 but once by 0.4: the bootstrap's p is 0.01, the
    # t-test's 0.30, so "no".
    scipy_stats = pytest.importorskip("scipy.stats")
    a, b = [0.5] * 6, [0.51] * 5 + [0.9]
    close = compare_systems(a, b, name_a="x", name_b="y", resamples=200, alpha=0.1)
    assert close.t_test.p_value == pytest.approx(scipy_stats.ttest_rel(a, b).pvalue, abs=1e-9)
    clear = compare_systems([0.9, 0.8, 0.7, 0.9], [0.5, 0.4, 0.6, 0.5], name_a="u", name_b="v")
    assert (close.significant, close.bootstrap.p_value < 0.1) == (False, True)
    row = pairwise_table([("f1", close)]).rows[0]
    assert (row[7], row[9]) == ("0.0100", "no")
    text = pairwise_table([("f1", close), ("f1", clear)]).to_text()
    assert "significant: the paired t-test's p is below 0.05 or 0.1." in " ".join(text.split())
    assert " ".join(text.split()).endswith("but the t-test's is not, for x vs y.")
    assert "Here" not in pairwise_table([("f1", clear)]).note
