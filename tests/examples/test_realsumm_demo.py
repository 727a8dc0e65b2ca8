"""The offline REALSumm demo end to end on a few articles, and its report in Chromium."""

from __future__ import annotations

import base64
import contextlib
import io
import json
import re
import zipfile
from pathlib import Path

import numpy as np
import pytest
from example_modules import EXAMPLES, load_example
from matplotlib import colormaps
from matplotlib.colors import to_rgb
from PIL import Image
from scipy.spatial import cKDTree

from chromium import SKIP_REASON, find_chromium, screenshot
from opik_semantic_metrics import SemanticMatch
from opik_semantic_metrics.bertscore.engine import BERTScoreEngine
from opik_semantic_metrics.report.plots import MATCH_COLOR, SYSTEM_COLORS

demo = load_example("realsumm_demo.py", "realsumm_demo")
DATA = EXAMPLES / "data" / "realsumm" / "realsumm_3systems.jsonl"
ARTICLES = 6


def _raw_rows() -> list[dict]:
    return [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> tuple[str, Path]:
    """The demo on its first articles: printed output and report folder."""
    output = tmp_path_factory.mktemp("demo")
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert demo.main(["--limit", str(ARTICLES), "--output", str(output)]) == 0
    return printed.getvalue(), output


def test_the_packaged_data_is_the_realsumm_subset():
    documents = demo.load_documents()
    assert len(documents) == 100
    assert all(set(d.summaries) == set(demo.SYSTEMS) == set(d.human) for d in documents)
    assert not any(
        "<t>" in text or "</t>" in text for d in documents for text in d.summaries.values()
    )
    # The system means SOURCE.md states for the human scores.
    means = {s: np.mean([d.human[s] for d in documents]) for s in demo.SYSTEMS}
    assert [round(means[s], 3) for s in demo.SYSTEMS] == [0.537, 0.416, 0.355]
    assert (EXAMPLES / "data" / "realsumm" / "SOURCE.md").read_text().count("CC BY 4.0") >= 1


def _table_rows(printed: str, metric: str) -> dict[str, tuple[int, float]]:
    """``system -> (items, mean)`` from the printed summary table's rows of ``metric``."""
    rows = {}
    for system in demo.SYSTEMS:
        [match] = re.findall(
            rf"^{metric}\s+{re.escape(system)}\s+(\d+)\s+(\d\.\d+)\s", printed, re.M
        )
        rows[system] = (int(match[0]), float(match[1]))
    return rows


def test_each_system_is_an_experiment_with_every_item_scored(run):
    printed, _ = run
    for system in demo.SYSTEMS:
        assert re.search(rf"experiment {re.escape(system)}\s+{ARTICLES} items, 0 failed", printed)
    assert "Opik: no server configured" in printed


def test_printed_means_are_the_human_and_bertscore_means(run):
    printed, _ = run
    first_ids = list(dict.fromkeys(row["doc_id"] for row in _raw_rows()))[:ARTICLES]
    rows = [row for row in _raw_rows() if row["doc_id"] in first_ids]
    human = _table_rows(printed, "litepyramid_recall")
    bertscore = _table_rows(printed, "bertscore_f1")
    semantic = _table_rows(printed, "semantic_match")
    engine = BERTScoreEngine("all-MiniLM-L6-v2", device="cpu")
    semantic_match = SemanticMatch(device="cpu", track=False)
    # One reference per article, as the demo fits it (each row repeats its article's).
    semantic_match.fit(list(dict.fromkeys(demo.clean(row["reference"]) for row in rows)))
    for system in demo.SYSTEMS:
        mine = [row for row in rows if row["system"] == system]
        expected_human = np.mean([row["litepyramid_recall"] for row in mine])
        assert human[system] == (ARTICLES, pytest.approx(expected_human, abs=5e-5))
        results = engine.score(
            [demo.clean(row["summary"]) for row in mine],
            [demo.clean(row["reference"]) for row in mine],
        )
        assert bertscore[system] == (
            ARTICLES,
            pytest.approx(np.mean([r.f1 for r in results]), abs=5e-5),
        )
        semantic_results = semantic_match.score_batch(
            [demo.clean(row["summary"]) for row in mine],
            [demo.clean(row["reference"]) for row in mine],
        )
        assert semantic[system] == (
            ARTICLES,
            pytest.approx(np.mean([r.value for r in semantic_results]), abs=5e-5),
        )


def test_output_has_pairwise_tests_rankings_correlations_and_the_answer_match_note(run):
    printed, _ = run
    assert printed.count("bertscore_recall     bart     t5-base") == 1
    assert "Ranking by each score (human order: bart > t5-base > pointer-generator)" in printed
    assert re.search(r"bertscore_f1\s+system\s+-?\d\.\d{4}", printed)
    assert re.search(r"bertscore_f1\s+summary\s+-?\d\.\d{4}", printed)
    assert "AnswerMatch is not applied" in printed
    assert f"(checked: 0 of the {3 * ARTICLES} summaries match)" in printed


def test_report_embeds_both_plots(run):
    _, output = run
    page = (output / "report.html").read_text(encoding="utf-8")
    images = re.findall(r'<img alt="([^"]+)" src="data:image/png;base64,([^"]+)"', page)
    assert [alt for alt, _ in images] == [
        "score distributions per system",
        "token similarity heatmap",
    ]
    for _, data in images:
        assert Image.open(io.BytesIO(base64.b64decode(data))).format == "PNG"
    assert "<h2>Correlation with the human scores</h2>" in page


def _pixels_near(image: np.ndarray, color: tuple[float, float, float], tolerance: int) -> int:
    target = np.array(color) * 255
    return int((np.abs(image.astype(np.int16) - target).max(axis=2) <= tolerance).sum())


def _viridis_pixels(image: np.ndarray) -> int:
    """Pixels whose colour is (within 4/255 per channel) one of the 256 viridis colours."""
    palette = colormaps["viridis"](np.linspace(0, 1, 256))[:, :3] * 255
    pixels = image.reshape(-1, 3).astype(np.float64)
    distance, _ = cKDTree(palette).query(pixels, distance_upper_bound=4.5, p=np.inf)
    return int(np.isfinite(distance).sum())


def _plot_pixels(html: Path) -> dict[str, int]:
    image = np.asarray(screenshot(html))
    # Violin bodies: each system's colour at alpha 0.55 over the white figure.
    counts = {
        system: _pixels_near(image, tuple(0.55 * c + 0.45 for c in to_rgb(color)), 6)
        for system, color in zip(demo.SYSTEMS, SYSTEM_COLORS, strict=False)
    }
    counts["heatmap"] = _viridis_pixels(image)
    counts["match frames"] = _pixels_near(image, to_rgb(MATCH_COLOR), 40)
    return counts


@pytest.mark.skipif(find_chromium() is None, reason=SKIP_REASON)
def test_chromium_renders_the_reports_plots(run, tmp_path):
    _, output = run
    counts = _plot_pixels(output / "report.html")
    assert all(counts[system] >= 2000 for system in demo.SYSTEMS), counts
    assert counts["heatmap"] >= 50_000, counts
    assert counts["match frames"] >= 200, counts
    # The same page with its images broken shows none of it: the counts come from the plots.
    page = (output / "report.html").read_text(encoding="utf-8")
    broken = tmp_path / "broken.html"
    broken.write_text(re.sub(r"base64,[^\"]+", "base64,AAAA", page), encoding="utf-8")
    blank = _plot_pixels(broken)
    assert max(blank.values()) < 50, blank


def test_comet_offline_experiment_holds_metrics_tables_plots_and_report(tmp_path):
    pytest.importorskip("comet_ml", reason="comet_ml is the optional `comet` extra")
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        arguments = ["--limit", "3", "--output", str(tmp_path / "report")]
        assert demo.main([*arguments, "--comet-offline", str(tmp_path / "comet")]) == 0
    [archive] = (tmp_path / "comet").glob("*.zip")
    assert f"Comet offline experiment: {archive}" in printed.getvalue()
    with zipfile.ZipFile(archive) as zipped:
        messages = [json.loads(line) for line in zipped.read("messages.json").splitlines()]
    metrics = {
        m["payload"]["metric"]["metricName"]: m["payload"]["metric"]["metricValue"]
        for m in messages
        if m["type"] == "metric_msg"
    }
    assert {f"{s}/bertscore_f1/mean" for s in demo.SYSTEMS} <= set(metrics)
    uploads = {
        m["payload"]["additional_params"].get("fileName")
        or m["payload"]["additional_params"].get("figName")
        for m in messages
        if m["type"] == "file_upload"
    }
    assert {"summary.csv", "pairwise.csv", "correlation.csv"} <= uploads
    assert {"score_distributions.png", "token_similarity.png"} <= uploads
    [html] = [m["payload"]["html"] for m in messages if m["type"] == "html"]
    assert "<h2>Correlation with the human scores</h2>" in html
