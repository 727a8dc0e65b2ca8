"""Tables of experiment comparisons, rendered as plain text, markdown or HTML.

A :class:`Table` is headers and rows of already formatted cells; the builders turn
:class:`~opik_semantic_metrics.compare.experiments.MetricSummary` and
:class:`~opik_semantic_metrics.compare.correlation.Correlation` values into tables, so
that the console, a markdown file and the HTML report show the same numbers.
"""

from __future__ import annotations

import html
import math
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

# Types only: the command line prints tables without importing SciPy.
if TYPE_CHECKING:
    from opik_semantic_metrics.compare.correlation import Correlation
    from opik_semantic_metrics.compare.experiments import MetricSummary
    from opik_semantic_metrics.compare.stats import Comparison


@dataclass(frozen=True)
class Table:
    """Headers and rows of text cells; numeric columns are right-aligned in text.

    Example:
        >>> print(Table(("system", "mean"), (("bart", "0.72"), ("t5", "0.69"))).to_text())
        system  mean
        ------  ----
        bart    0.72
        t5      0.69
    """

    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    #: A sentence shown under the table (how to read it), in every rendering.
    note: str = ""

    def __post_init__(self) -> None:
        for row in self.rows:
            if len(row) != len(self.headers):
                raise ValueError(
                    f"Expected rows of {len(self.headers)} cells, got {len(row)}: {row!r}."
                )

    def _numeric(self, column: int) -> bool:
        cells = [row[column] for row in self.rows if row[column] not in ("", "-")]
        return bool(cells) and all(_is_number(cell) for cell in cells)

    def _one_line(self) -> tuple[tuple[str, ...], list[tuple[str, ...]]]:
        """Headers and rows with every line break read as a space: a row of text or
        markdown is one line (a system named in two lines would split its row)."""
        headers = tuple(_single_line(cell) for cell in self.headers)
        return headers, [tuple(_single_line(cell) for cell in row) for row in self.rows]

    def to_text(self) -> str:
        """Aligned columns with a rule under the headers, for a terminal."""
        headers, rows = self._one_line()
        widths = [
            max(len(cell) for cell in (header, *(row[i] for row in rows)))
            for i, header in enumerate(headers)
        ]
        numeric = [self._numeric(i) for i in range(len(self.headers))]

        def line(cells: Sequence[str]) -> str:
            padded = (
                cell.rjust(width) if right else cell.ljust(width)
                for cell, width, right in zip(cells, widths, numeric, strict=True)
            )
            return "  ".join(padded).rstrip()

        rule = "  ".join("-" * width for width in widths)
        lines = [line(headers), rule, *(line(row) for row in rows)]
        if self.note:
            lines.extend(["", *textwrap.wrap(self.note, width=max(60, len(rule)))])
        return "\n".join(lines)

    def to_markdown(self) -> str:
        """A GitHub-flavoured markdown table; cells are escaped, so that a system named
        ``<script>`` shows as text where a viewer renders the HTML inside markdown."""
        headers, rows = self._one_line()
        aligns = ["---:" if self._numeric(i) else "---" for i in range(len(headers))]

        def line(cells: Sequence[str]) -> str:
            escaped = (html.escape(cell, quote=False).replace("|", "\\|") for cell in cells)
            return "| " + " | ".join(escaped) + " |"

        table = "\n".join([line(headers), line(aligns), *(line(row) for row in rows)])
        note = html.escape(_single_line(self.note), quote=False)
        return f"{table}\n\n{note}" if note else table

    def to_html(self) -> str:
        """An HTML ``<table>`` with escaped cells; numeric columns get ``class="num"``."""
        numeric = [self._numeric(i) for i in range(len(self.headers))]

        def cells(tag: str, row: Sequence[str]) -> str:
            return "".join(
                f'<{tag} class="num">{html.escape(cell)}</{tag}>'
                if right
                else f"<{tag}>{html.escape(cell)}</{tag}>"
                for cell, right in zip(row, numeric, strict=True)
            )

        head = f"<thead><tr>{cells('th', self.headers)}</tr></thead>"
        body = "".join(f"<tr>{cells('td', row)}</tr>" for row in self.rows)
        note = f'<p class="note">{html.escape(self.note)}</p>' if self.note else ""
        return f"<table>{head}<tbody>{body}</tbody></table>{note}"


def _single_line(cell: str) -> str:
    return " ".join(cell.splitlines())


def _is_number(cell: str) -> bool:
    """A number, or a percentage ("15.4%"): a column of them is right-aligned."""
    try:
        float(cell.removesuffix("%"))
    except ValueError:
        return False
    return True


def _number(value: float, digits: int = 4) -> str:
    return "nan" if math.isnan(value) else f"{value:.{digits}f}"


def format_p_value(value: float) -> str:
    """A p-value as every table and sentence shows it: 4 decimals, or 2 digits below 1e-4.

    Example:
        >>> format_p_value(0.04213), format_p_value(1.075e-07)
        ('0.0421', '1.1e-07')
    """
    if math.isnan(value):
        return "nan"
    return f"{value:.1e}" if 0 < value < 1e-4 else f"{value:.4f}"


def summary_table(summaries: Sequence[MetricSummary]) -> Table:
    """One row per metric and experiment: mean, bootstrap interval and rank.

    ``items`` counts the items compared (scored in every experiment), ``excluded`` the
    items some experiment ran on but not every one scored (failed scores): they are in
    no mean of that metric.

    Example:
        >>> from opik_semantic_metrics.compare.experiments import ExperimentScores, summarize
        >>> a = ExperimentScores("a", ("1", "2"), {"f1": {"1": 0.9, "2": 0.7}}, {})
        >>> b = ExperimentScores("b", ("1", "2"), {"f1": {"1": 0.5, "2": 0.6}}, {})
        >>> print(summary_table(summarize([a, b], resamples=100)).to_text())
        metric  system  items  excluded    mean  95% low  95% high  rank
        ------  ------  -----  --------  ------  -------  --------  ----
        f1      a           2         0  0.8000   0.7000    0.9000     1
        f1      b           2         0  0.5500   0.5000    0.6000     2
    """
    rows = []
    for summary in summaries:
        ranks = summary.ranks
        for name, interval in summary.intervals.items():
            rows.append(
                (
                    summary.metric,
                    name,
                    str(summary.items),
                    str(summary.excluded),
                    _number(interval.mean),
                    _number(interval.low),
                    _number(interval.high),
                    str(ranks[name]),
                )
            )
    if not summaries:
        raise ValueError("Expected at least one metric summary.")
    # As a percentage with what digits it has: 0.975 is "97.5%", not "98%".
    confidence = f"{next(iter(summaries[0].intervals.values())).confidence * 100:g}%"
    return Table(
        (
            "metric",
            "system",
            "items",
            "excluded",
            "mean",
            f"{confidence} low",
            f"{confidence} high",
            "rank",
        ),
        tuple(rows),
    )


def pairwise_table(comparisons: Sequence[tuple[str, Comparison]]) -> Table:
    """One row per (metric, pair of systems): difference, tests and verdict.

    Args:
        comparisons: ``(metric name, comparison)`` pairs.

    Example:
        >>> from opik_semantic_metrics.compare.stats import compare_systems
        >>> comparison = compare_systems([0.9, 0.8, 0.7, 0.9], [0.5, 0.4, 0.6, 0.5],
        ...                              name_a="bart", name_b="pgn", resamples=100)
        >>> print(pairwise_table([("f1", comparison)]).to_text())
        metric  A     B    mean A  mean B   A - B  t-test p  bootstrap p  winner  significant
        ------  ----  ---  ------  ------  ------  --------  -----------  ------  -----------
        f1      bart  pgn  0.8250  0.5000  0.3250    0.0227       0.0198  bart    yes
        <BLANKLINE>
        significant: the paired t-test's p is below 0.05. The paired bootstrap's p is shown
        beside it but does not decide: it counts the resamples the other system wins, and on
        few items or skewed differences it reads lower than the t-test's.
    """
    rows = tuple(
        (
            metric,
            c.name_a,
            c.name_b,
            _number(c.mean_a),
            _number(c.mean_b),
            _number(c.difference),
            format_p_value(c.t_test.p_value),
            format_p_value(c.bootstrap.p_value),
            c.winner or "tie",
            "yes" if c.significant else "no",
        )
        for metric, c in comparisons
    )
    return Table(
        (
            "metric",
            "A",
            "B",
            "mean A",
            "mean B",
            "A - B",
            "t-test p",
            "bootstrap p",
            "winner",
            "significant",
        ),
        rows,
        significance_note([comparison for _, comparison in comparisons]),
    )


def significance_note(comparisons: Sequence[Comparison]) -> str:
    """What "significant" means in a table of ``comparisons``, and where the two tests
    disagree: the verdict is the t-test's (see
    :func:`~opik_semantic_metrics.compare.stats.compare_systems`), while the bootstrap's
    p beside it can be lower, and a reader seeing "p = 0.002" and "no" asks why.

    Example:
        >>> from opik_semantic_metrics.compare.stats import compare_systems
        >>> # x wins every item, by 0.01 but once by 0.4: every resample, not the t-test.
        >>> a = [0.51, 0.51, 0.51, 0.51, 0.51, 0.9]
        >>> comparison = compare_systems(a, [0.5] * 6, name_a="x", name_b="y", resamples=200)
        >>> round(comparison.bootstrap.p_value, 3), round(comparison.t_test.p_value, 3)
        (0.01, 0.301)
        >>> print(significance_note([comparison]).rsplit(". ", 1)[1])
        Here the bootstrap's p is below 0.05 but the t-test's is not, for x vs y.
    """
    if not comparisons:
        return ""
    levels = " or ".join(f"{level:g}" for level in sorted({c.alpha for c in comparisons}))
    note = (
        f"significant: the paired t-test's p is below {levels}. The paired bootstrap's p is "
        "shown beside it but does not decide: it counts the resamples the other system wins, "
        "and on few items or skewed differences it reads lower than the t-test's."
    )
    disagreeing = [
        f"{c.name_a} vs {c.name_b}"
        for c in comparisons
        if not c.significant and c.winner is not None and c.bootstrap.p_value < c.alpha
    ]
    if disagreeing:
        note += (
            f" Here the bootstrap's p is below {levels} but the t-test's is not, for "
            f"{', '.join(disagreeing)}."
        )
    return note


def summaries_pairwise_table(summaries: Sequence[MetricSummary]) -> Table:
    """:func:`pairwise_table` of every comparison in ``summaries``."""
    return pairwise_table(
        [
            (summary.metric, comparison)
            for summary in summaries
            for comparison in summary.comparisons
        ]
    )


def correlation_table(correlations: Mapping[str, Mapping[str, Correlation]]) -> Table:
    """Pearson, Spearman and Kendall of each metric at each level.

    Args:
        correlations: Metric name -> level name (e.g. ``"system"``, ``"summary"``) ->
            its correlation with the human scores.

    Example:
        >>> from opik_semantic_metrics.compare.correlation import Correlation
        >>> table = correlation_table({"f1": {"system": Correlation(0.98, 1.0, 1.0, 3)}})
        >>> print(table.to_text())
        metric  level   pearson  spearman  kendall  n  skipped
        ------  ------  -------  --------  -------  -  -------
        f1      system   0.9800    1.0000   1.0000  3        0
    """
    rows = tuple(
        (
            metric,
            level,
            _number(c.pearson),
            _number(c.spearman),
            _number(c.kendall),
            str(c.count),
            str(c.skipped),
        )
        for metric, levels in correlations.items()
        for level, c in levels.items()
    )
    return Table(("metric", "level", "pearson", "spearman", "kendall", "n", "skipped"), rows)
