"""Plots of experiment comparisons: score distributions, scores against another score
(human judgments), and token-similarity heatmaps.

Figures are built with matplotlib's object API (``matplotlib.figure.Figure``), never
``pyplot``: no global figure state, no GUI backend, safe from any thread.
:func:`figure_png` renders a figure to PNG bytes for files, HTML reports and experiment
trackers.
"""

from __future__ import annotations

import io
import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from opik_semantic_metrics.inputs import read_numbers

try:
    from matplotlib.figure import Figure
except ImportError as error:  # matplotlib is an optional dependency
    raise ImportError(
        "Plots need matplotlib: pip install 'opik-semantic-metrics[report]'."
    ) from error

#: One colour per system, in order (matplotlib's "tab10" palette).
SYSTEM_COLORS = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
)
#: Colour map of the similarity heatmap.
HEATMAP_COLORMAP = "viridis"
#: Colour of the frames marking each candidate token's best match.
MATCH_COLOR = "#ff0000"


def score_distributions(
    scores: Mapping[str, Mapping[str, Sequence[float]]], *, title: str | None = None
) -> Figure:
    """One panel per metric: each system's per-item scores as a violin, box and mean.

    Args:
        scores: Metric name -> system name -> per-item scores. Systems get the colours
            of :data:`SYSTEM_COLORS` in the order of the first metric.
        title: Title above the panels.

    Returns:
        The figure.

    Raises:
        ValueError: No metric, no system, a system without scores, or a score that is
            no finite number (NaN, infinite, a bool).

    Example:
        >>> figure = score_distributions({"f1": {"a": [0.8, 0.9], "b": [0.5, 0.7]}})
        >>> [axes.get_title() for axes in figure.axes]
        ['f1']
    """
    figure, axes_row, colors = _metric_panels(scores)
    for axes, (metric, by_system) in zip(axes_row, scores.items(), strict=True):
        names = list(by_system)
        read = [read_numbers(by_system[name], "scores") for name in names]
        if any(values.size == 0 for values, _ in read):
            raise ValueError(f"Expected scores for every system of {metric!r}.")
        for name, (_, refused) in zip(names, read, strict=True):
            # A failed item's NaN drew a violin without its box or mean, and no error.
            _refuse_unless_finite(name, metric, "scores", "score", refused)
        data = [values for values, _ in read]
        positions = np.arange(1, len(names) + 1)
        violins = axes.violinplot(data, positions, showextrema=False, widths=0.8)
        for body, name in zip(violins["bodies"], names, strict=True):
            body.set_facecolor(colors[name])
            body.set_edgecolor(colors[name])
            body.set_linewidth(1.5)
            body.set_alpha(0.55)
        axes.boxplot(
            data,
            positions=positions,
            widths=0.14,
            showfliers=False,
            medianprops={"color": "black"},
        )
        axes.scatter(
            positions,
            [values.mean() for values in data],
            marker="D",
            color="black",
            zorder=3,
            label="mean",
        )
        axes.set_xticks(positions, [_literal(name) for name in names])
        axes.set_title(_literal(metric))
        axes.grid(axis="y", alpha=0.3)
    axes_row[0].set_ylabel("score per item")
    axes_row[0].legend(loc="lower left", fontsize="small")
    if title:
        figure.suptitle(_literal(title))
    return figure


def similarity_heatmap(
    candidate_tokens: Sequence[str],
    reference_tokens: Sequence[str],
    matrix: object,
    *,
    title: str | None = None,
) -> Figure:
    """A token-similarity matrix as a heatmap, each candidate token's best match framed.

    The framed cells are the matches greedy matching takes for precision (the maximum of
    each row).

    Args:
        candidate_tokens: Row labels.
        reference_tokens: Column labels.
        matrix: ``matrix[i][j]`` = similarity of candidate token ``i`` and reference
            token ``j`` (a tensor, an array or nested lists).
        title: Title above the heatmap.

    Returns:
        The figure.

    Raises:
        ValueError: The matrix's shape does not match the tokens, or a cell is NaN or
            infinite (drawn, it would be a blank cell and its row's match a guess).

    Example:
        >>> figure = similarity_heatmap(["a", "cat"], ["a", "dog"], [[0.9, 0.1], [0.2, 0.6]])
        >>> [label.get_text() for label in figure.axes[0].get_yticklabels()]
        ['a', 'cat']
    """
    values = np.asarray(matrix, dtype=np.float64)
    expected = (len(candidate_tokens), len(reference_tokens))
    if values.shape != expected or values.size == 0:
        raise ValueError(
            f"Expected a matrix of shape {expected} (candidate x reference tokens), "
            f"got {values.shape}."
        )
    not_finite = np.argwhere(~np.isfinite(values))
    if len(not_finite):
        row, column = (int(index) for index in not_finite[0])
        raise ValueError(
            f"Expected finite similarities, got {len(not_finite)} NaN or infinite cell(s); "
            f"the first is {values[row, column]} at row {row}, column {column} "
            f"({candidate_tokens[row]!r} x {reference_tokens[column]!r})."
        )
    rows, columns = values.shape
    # About 0.2 inch a token, so that labels stay readable however long the texts are.
    width = max(5.0, 0.2 * columns + 2.5)
    figure = Figure(figsize=(width, max(4.0, 0.2 * rows + 2.0)), layout="constrained")
    axes = figure.subplots()
    image = axes.imshow(values, cmap=HEATMAP_COLORMAP, vmin=min(0.0, float(values.min())), vmax=1.0)
    best = values.argmax(axis=1)
    axes.scatter(
        best,
        np.arange(rows),
        marker="s",
        s=60,
        facecolors="none",
        edgecolors=MATCH_COLOR,
        linewidths=1.2,
    )
    font = "small" if max(rows, columns) <= 40 else "x-small"
    reference_labels = [_literal(token) for token in reference_tokens]
    axes.set_xticks(np.arange(columns), reference_labels, rotation=90, fontsize=font)
    axes.set_yticks(np.arange(rows), [_literal(token) for token in candidate_tokens], fontsize=font)
    axes.set_ylabel("candidate tokens")
    figure.colorbar(image, ax=axes, shrink=0.8, label="cosine similarity")
    # The x label and the title are centred on the figure, not on the heatmap: with many
    # more candidate than reference tokens its square cells leave it narrow and off to
    # one side, and text centred on it ran off the image.
    figure.supxlabel(
        "reference tokens\n(framed: each candidate token's best match)", fontsize="medium"
    )
    if title:
        # About 8 characters an inch at the title's size, with a margin.
        figure.suptitle(textwrap.fill(_literal(title), width=int(width * 8)))
    return figure


def score_scatter(
    points: Mapping[str, Mapping[str, Sequence[tuple[float, float]]]],
    *,
    x_label: str,
    title: str | None = None,
) -> Figure:
    """One panel per metric: a point per item, its ``x_label`` score (a human judgment,
    say) across and the metric's score up, in its system's colour.

    Args:
        points: Metric name -> system name -> ``(x, score)`` per item. Systems get the
            colours of :data:`SYSTEM_COLORS` in the order of the first metric.
        x_label: What the horizontal axis holds.
        title: Title above the panels.

    Returns:
        The figure.

    Raises:
        ValueError: No metric or no system, a system without points, or an ``x`` or a
            score that is NaN, infinite or no number (a bool).

    Example:
        >>> figure = score_scatter({"f1": {"a": [(0.2, 0.8), (0.5, 0.9)]}}, x_label="human")
        >>> [axes.get_title() for axes in figure.axes], figure.axes[0].get_xlabel()
        (['f1'], 'human')
    """
    figure, axes_row, colors = _metric_panels(points)
    for axes, (metric, by_system) in zip(axes_row, points.items(), strict=True):
        for name, pairs in by_system.items():
            values, refused = read_numbers(pairs, "points")
            values = values.reshape(-1, 2)
            if values.size == 0:
                raise ValueError(f"Expected points for every system of {metric!r}.")
            _refuse_unless_finite(name, metric, "points", "value", refused)
            axes.scatter(
                values[:, 0], values[:, 1], color=colors[name], alpha=0.7, label=_literal(name)
            )
        axes.set_title(_literal(metric))
        axes.set_xlabel(_literal(x_label))
        axes.grid(alpha=0.3)
    axes_row[0].set_ylabel("score per item")
    axes_row[-1].legend(loc="best", fontsize="small")
    if title:
        figure.suptitle(_literal(title))
    return figure


def _metric_panels(
    by_metric: Mapping[str, Mapping[str, object]],
) -> tuple[Figure, Any, dict[str, str]]:
    """A figure with one panel per metric, and each system's colour (in order of first
    appearance), for the per-metric plots of several systems.

    Raises:
        ValueError: No metric, a metric without systems, or more systems than colours.
    """
    if not by_metric or any(not systems for systems in by_metric.values()):
        raise ValueError("Expected at least one metric with at least one system.")
    systems = list(dict.fromkeys(name for by_system in by_metric.values() for name in by_system))
    if len(systems) > len(SYSTEM_COLORS):
        raise ValueError(f"Expected at most {len(SYSTEM_COLORS)} systems, got {len(systems)}.")
    colors = dict(zip(systems, SYSTEM_COLORS, strict=False))
    figure = Figure(figsize=(4.0 * len(by_metric) + 0.5, 4.0), layout="constrained")
    axes_row = figure.subplots(1, len(by_metric), squeeze=False)[0]
    return figure, axes_row, colors


def _refuse_unless_finite(
    system: str, metric: str, kind: str, item: str, refused: str | None
) -> None:
    """Refuse a system's ``kind`` (scores, points) where ``refused`` names one ``item``
    that is no finite number (:func:`~opik_semantic_metrics.inputs.read_numbers`)."""
    if refused is not None:
        raise ValueError(
            f"Expected finite numbers: {system!r} has NaN or infinite {metric!r} {kind}, or "
            f"ones that are no number (leave failed items out); {item} {refused}."
        )


def _literal(text: str) -> str:
    """Text drawn as written: matplotlib reads what lies between two ``$`` as maths
    (``"sys $x^$"`` even fails to parse), and ``\\$`` is its literal dollar."""
    return text.replace("$", r"\$")


def figure_png(figure: Figure, *, dpi: int = 100) -> bytes:
    """The figure as PNG bytes.

    Example:
        >>> figure_png(score_distributions({"f1": {"a": [0.5, 0.6]}}))[:8]
        b'\\x89PNG\\r\\n\\x1a\\n'
    """
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=dpi)
    return buffer.getvalue()
