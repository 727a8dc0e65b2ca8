"""Plots: what each figure draws, read back from matplotlib's artists and the PNG."""

from __future__ import annotations

import io
import math

import numpy as np
import pytest
import torch
from matplotlib.colors import to_hex
from matplotlib.text import Text
from PIL import Image

from opik_semantic_metrics.report.plots import (
    SYSTEM_COLORS,
    figure_png,
    score_distributions,
    score_scatter,
    similarity_heatmap,
)

SCORES = {
    "bertscore_f1": {
        "bart": [0.72, 0.75, 0.7],
        "t5-base": [0.69, 0.7, 0.66],
        "pgn": [0.6, 0.65, 0.62],
    },
    "semantic_match": {"bart": [0.5, 0.9, 0.4], "t5-base": [0.3, 0.6, 0.5], "pgn": [0.2, 0.1, 0.4]},
}
#: A human score per item, the same three items for every system.
HUMAN = [0.2, 0.7, 0.4]


def test_score_distributions_draws_one_panel_per_metric_in_system_colours():
    figure = score_distributions(SCORES, title="three systems")
    assert [axes.get_title() for axes in figure.axes] == ["bertscore_f1", "semantic_match"]
    assert figure.get_suptitle() == "three systems"
    for axes, by_system in zip(figure.axes, SCORES.values(), strict=True):
        assert [label.get_text() for label in axes.get_xticklabels()] == ["bart", "t5-base", "pgn"]
        violins = axes.collections[:3]
        assert [to_hex(v.get_facecolor()[0], keep_alpha=False) for v in violins] == list(
            SYSTEM_COLORS[:3]
        )
        means = axes.collections[3].get_offsets()[:, 1]
        assert means.tolist() == pytest.approx([np.mean(v) for v in by_system.values()])


def test_score_distributions_rejects_empty_input():
    with pytest.raises(ValueError, match="at least one metric"):
        score_distributions({})
    with pytest.raises(ValueError, match="scores for every system"):
        score_distributions({"f1": {"a": [0.5], "b": []}})


def test_score_distributions_rejects_scores_that_are_no_number():
    # A failed item's NaN drew a violin without its box and mean, and no error.
    with pytest.raises(ValueError, match="'a' has NaN or infinite 'f1' scores"):
        score_distributions({"f1": {"a": [0.5, math.nan, 0.7], "b": [0.1, 0.2, 0.3]}})


def test_score_scatter_draws_each_systems_points_in_its_colour():
    points = {
        metric: {system: list(zip(HUMAN, values, strict=True)) for system, values in by.items()}
        for metric, by in SCORES.items()
    }
    figure = score_scatter(points, x_label="litepyramid_recall", title="against humans")
    assert [axes.get_title() for axes in figure.axes] == ["bertscore_f1", "semantic_match"]
    assert figure.get_suptitle() == "against humans"
    for axes, by_system in zip(figure.axes, SCORES.values(), strict=True):
        assert axes.get_xlabel() == "litepyramid_recall"
        for collection, color, values in zip(
            axes.collections, SYSTEM_COLORS[:3], by_system.values(), strict=True
        ):
            assert to_hex(collection.get_facecolor()[0], keep_alpha=False) == color
            assert collection.get_offsets().tolist() == [
                list(pair) for pair in zip(HUMAN, values, strict=True)
            ]
    legend = [text.get_text() for text in figure.axes[-1].get_legend().get_texts()]
    assert legend == ["bart", "t5-base", "pgn"]


def test_score_scatter_rejects_empty_input_and_values_that_are_no_number():
    with pytest.raises(ValueError, match="at least one metric"):
        score_scatter({}, x_label="human")
    with pytest.raises(ValueError, match="points for every system"):
        score_scatter({"f1": {"a": [(0.1, 0.5)], "b": []}}, x_label="human")
    with pytest.raises(ValueError, match="'a' has NaN or infinite 'f1' points"):
        score_scatter({"f1": {"a": [(0.1, math.nan)]}}, x_label="human")


def test_heatmap_shows_the_matrix_and_frames_each_rows_best_match():
    matrix = torch.tensor([[0.9, 0.1, 0.3], [0.2, 0.1, 0.8]])
    figure = similarity_heatmap(["a", "cat"], ["a", "dog", "cat"], matrix, title="pair")
    axes = figure.axes[0]
    assert np.array_equal(axes.images[0].get_array(), matrix.numpy().astype(np.float64))
    assert [t.get_text() for t in axes.get_xticklabels()] == ["a", "dog", "cat"]
    assert [t.get_text() for t in axes.get_yticklabels()] == ["a", "cat"]
    assert axes.collections[0].get_offsets().tolist() == [[0, 0], [2, 1]]
    assert figure.get_suptitle() == "pair"


@pytest.mark.parametrize(("rows", "columns"), [(10, 4), (30, 4), (8, 5), (20, 8), (4, 4), (60, 15)])
def test_heatmap_text_lies_inside_the_image(rows, columns):
    # With many more candidate than reference tokens, the title (the CLI's F1, P and R)
    # and the x label were centred on a narrow heatmap and ran off the image.
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    title = "BERTScore F1 0.225 (P 0.172, R 0.324) for a candidate of many tokens, layer 6"
    matrix = np.random.default_rng(0).random((rows, columns))
    figure = similarity_heatmap(
        [f"c{i}" for i in range(rows)], [f"r{j}" for j in range(columns)], matrix, title=title
    )
    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    renderer = canvas.get_renderer()
    drawn = [t for t in figure.findobj(Text) if t.get_visible() and t.get_text()]
    assert figure.get_suptitle() in [t.get_text() for t in drawn]
    for text in drawn:
        box = text.get_window_extent(renderer)
        assert box.x0 >= 0 and box.x1 <= figure.bbox.width, text.get_text()
        assert box.y0 >= 0 and box.y1 <= figure.bbox.height, text.get_text()


def test_heatmap_rejects_a_matrix_that_does_not_fit_the_tokens():
    with pytest.raises(ValueError, match=r"shape \(2, 3\)"):
        similarity_heatmap(["a", "b"], ["c", "d", "e"], [[0.1, 0.2], [0.3, 0.4]])


def test_figure_png_is_a_png_of_the_figures_size():
    figure = score_distributions(SCORES)
    png = figure_png(figure, dpi=50)
    image = Image.open(io.BytesIO(png))
    width, height = figure.get_size_inches() * 50
    assert image.format == "PNG"
    assert image.size == (round(width), round(height))


def test_dollar_signs_in_names_and_tokens_are_drawn_as_written():
    # Between two $ matplotlib reads maths: "sys $x^$" failed to parse when drawn.
    figure = score_distributions({"cost $": {"sys $x^$": [0.1, 0.2], "b": [0.3]}}, title="$5")
    assert [label.get_text() for label in figure.axes[0].get_xticklabels()] == [
        r"sys \$x^\$",
        "b",
    ]
    heatmap = similarity_heatmap(["$$", "a"], ["$", "b"], [[0.9, 0.1], [0.2, 0.6]], title="$")
    for drawn in (figure, heatmap):
        assert figure_png(drawn).startswith(b"\x89PNG")


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
def test_heatmap_refuses_a_cell_that_is_not_a_number(bad):
    # A NaN was drawn as a blank cell, and argmax framed it as its row's best match.
    matrix = [[0.9, 0.1, 0.2], [0.2, bad, 0.6]]
    with pytest.raises(ValueError, match=r"1 NaN or infinite cell\(s\); the first is .* at row 1, "
                       r"column 1 \('cat' x 'dog'\)"):  # fmt: skip
        similarity_heatmap(["a", "cat"], ["a", "dog", "cat"], matrix)
