"""The offline REALSumm demo end to end on a few articles, and its report in Chromium."""

from __future__ import annotations

import base64
import contextlib
import io
import itertools
import json
import re
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib import colormaps
from matplotlib.colors import to_rgb
from PIL import Image
from scipy import stats as scipy_stats
from scipy.spatial import cKDTree

from opik_semantic_metrics import SemanticMatch
from opik_semantic_metrics.bertscore.engine import BERTScoreEngine
from opik_semantic_metrics.compare.experiments import ExperimentScores, summarize
from opik_semantic_metrics.report.plots import MATCH_COLOR, SYSTEM_COLORS, score_distributions
from tests.chromium import SKIP_REASON, find_chromium, screenshot
from tests.examples.example_modules import EXAMPLES, load_example

demo = load_example("realsumm_demo.py", "realsumm_demo")
DATA = EXAMPLES / "data" / "realsumm" / "realsumm_3systems.jsonl"
ARTICLES = 6


def _raw_rows() -> list[dict]:
    return [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines()]


def _first_rows(articles: int) -> list[dict]:
    """The rows of the file's first ``articles`` articles: what ``--limit`` scores."""
    first_ids = list(dict.fromkeys(row["doc_id"] for row in _raw_rows()))[:articles]
    return [row for row in _raw_rows() if row["doc_id"] in first_ids]


@pytest.fixture(scope="module")
def engine_scores() -> pd.DataFrame:
    """Each summary of the first articles with its human score and its BERTScore F1.

    The F1 comes from BERTScoreEngine called here, apart from the demo's Opik
    experiments; one row per (article, system), in file order.
    """
    rows = _first_rows(ARTICLES)
    engine = BERTScoreEngine("all-MiniLM-L6-v2", device="cpu")
    results = engine.score(
        [demo.clean(row["summary"]) for row in rows],
        [demo.clean(row["reference"]) for row in rows],
    )
    return pd.DataFrame(
        {
            "doc_id": [row["doc_id"] for row in rows],
            "system": [row["system"] for row in rows],
            "human": [row["litepyramid_recall"] for row in rows],
            "f1": [result.f1 for result in results],
        }
    )


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
    """``system -> (items, mean)`` from the printed summary table's rows of ``metric``,
    whose ``excluded`` column must say 0."""
    rows = {}
    for system in demo.SYSTEMS:
        [match] = re.findall(
            rf"^{metric}\s+{re.escape(system)}\s+(\d+)\s+0\s+(\d\.\d+)\s", printed, re.M
        )
        rows[system] = (int(match[0]), float(match[1]))
    return rows


@pytest.mark.slow
def test_each_system_is_an_experiment_with_every_item_scored(run):
    printed, _ = run
    for system in demo.SYSTEMS:
        assert re.search(rf"experiment {re.escape(system)}\s+{ARTICLES} items, 0 failed", printed)
    assert "Opik: no server configured" in printed


@pytest.mark.slow
def test_printed_means_are_the_human_and_bertscore_means(run, engine_scores):
    printed, _ = run
    rows = _first_rows(ARTICLES)
    human = _table_rows(printed, "litepyramid_recall")
    bertscore = _table_rows(printed, "bertscore_f1")
    semantic = _table_rows(printed, "semantic_match")
    semantic_match = SemanticMatch(device="cpu", track=False)
    # One reference per article, as the demo fits it (each row repeats its article's).
    semantic_match.fit(list(dict.fromkeys(demo.clean(row["reference"]) for row in rows)))
    for system in demo.SYSTEMS:
        mine = [row for row in rows if row["system"] == system]
        expected_human = np.mean([row["litepyramid_recall"] for row in mine])
        assert human[system] == (ARTICLES, pytest.approx(expected_human, abs=5e-5))
        f1 = engine_scores.loc[engine_scores["system"] == system, "f1"]
        assert bertscore[system] == (ARTICLES, pytest.approx(f1.mean(), abs=5e-5))
        semantic_results = semantic_match.score_batch(
            [demo.clean(row["summary"]) for row in mine],
            [demo.clean(row["reference"]) for row in mine],
        )
        assert semantic[system] == (
            ARTICLES,
            pytest.approx(np.mean([r.value for r in semantic_results]), abs=5e-5),
        )


def _printed_rows(printed: str, heading: str, metric: str) -> list[list[str]]:
    """The cells of ``metric``'s rows in the table printed under ``heading``."""
    table = printed.split(heading, 1)[1].split("\n\n", 1)[0]
    return [line.split() for line in table.splitlines() if line.split()[:1] == [metric]]


@pytest.mark.slow
def test_output_has_pairwise_tests_rankings_correlations_and_the_answer_match_note(
    run, engine_scores
):
    printed, _ = run
    assert printed.count("bertscore_recall     bart     t5-base") == 1
    # Printed to 4 decimals: within 5e-5 of the values from the F1s computed here.
    f1 = engine_scores.pivot(index="doc_id", columns="system", values="f1")
    pairwise = _printed_rows(printed, "Pairwise differences", "bertscore_f1")
    assert [tuple(row[1:3]) for row in pairwise] == list(itertools.combinations(demo.SYSTEMS, 2))
    for _, a, b, mean_a, mean_b, difference, p_value, _, winner, significant in pairwise:
        # The demo's test is the paired t-test, on the two systems' F1s of each article.
        oracle = scipy_stats.ttest_rel(f1[a], f1[b])
        expected_means = (f1[a].mean(), f1[b].mean(), f1[a].mean() - f1[b].mean())
        assert [float(mean_a), float(mean_b), float(difference)] == pytest.approx(
            expected_means, abs=5e-5
        )
        assert float(p_value) == pytest.approx(oracle.pvalue, abs=5e-5)
        assert winner == (a if f1[a].mean() > f1[b].mean() else b)
        assert significant == ("yes" if oracle.pvalue < 0.05 else "no")
    assert "Ranking by each score (human order: bart > t5-base > pointer-generator)" in printed

    # pandas' coefficients (Pearson, Spearman, Kendall's tau-b) of F1 with the human
    # score: over the systems' means, and per article over its summaries, averaged.
    methods = ("pearson", "spearman", "kendall")
    means = engine_scores.groupby("system")[["f1", "human"]].mean()
    per_article = engine_scores.groupby("doc_id")[["f1", "human"]].apply(
        lambda group: pd.Series({m: group["f1"].corr(group["human"], method=m) for m in methods})
    )
    correlation = {
        level: cells
        for _, level, *cells in _printed_rows(printed, "Correlation with the human", "bertscore_f1")
    }
    assert set(correlation) == {"system", "summary"}
    assert [float(cell) for cell in correlation["system"][:3]] == pytest.approx(
        [means["f1"].corr(means["human"], method=m) for m in methods], abs=5e-5
    )
    assert correlation["system"][3:] == ["3", "0"]
    # Articles whose scores are all equal have no correlation (NaN): skipped, not averaged.
    assert [float(cell) for cell in correlation["summary"][:3]] == pytest.approx(
        per_article.mean().tolist(), abs=5e-5
    )
    defined = int(per_article["pearson"].notna().sum())
    assert correlation["summary"][3:] == [str(defined), str(ARTICLES - defined)]
    assert "AnswerMatch is not applied" in printed
    assert f"(checked: 0 of the {3 * ARTICLES} summaries match)" in printed


def test_a_ranking_with_tied_systems_is_not_the_human_order():
    # AnswerMatch gives every summary 0: three systems with equal means.
    items = ("1", "2")
    tied = [
        ExperimentScores(system, items, {"answer_match": {"1": 0.0, "2": 0.0}}, {})
        for system in demo.SYSTEMS
    ]
    line = demo.order_line(summarize(tied, resamples=50)[0])
    assert "bart = t5-base = pointer-generator" in line
    assert "(differs from the human order; not significant: " in line


@pytest.mark.slow
def test_a_failed_score_is_reported_in_the_output_and_the_report(monkeypatch, tmp_path):
    documents = demo.load_documents()[:3]
    broken = documents[1]
    # A lone surrogate cannot be tokenised: BERTScore and SemanticMatch fail that item.
    broken.summaries["t5-base"] = "A summary \ud800 with a broken character."
    monkeypatch.setattr(demo, "load_documents", lambda: documents)
    plotted = []

    def record(distributions, **kwargs):
        plotted.append(distributions)
        return score_distributions(distributions, **kwargs)

    monkeypatch.setattr(demo, "score_distributions", record)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert demo.main(["--output", str(tmp_path)]) == 0
    # The plot shows the articles the tables compare: the two every system scored.
    [distributions] = plotted
    assert {len(scores) for scores in distributions["bertscore_f1"].values()} == {2}
    assert {len(scores) for scores in distributions[demo.HUMAN].values()} == {3}
    expected = f"t5-base: bertscore on article {broken.doc_id}; t5-base: semantic_match on"
    assert expected in printed.getvalue()
    # AnswerMatch cannot read it either: counted apart, not as a mismatch.
    assert "(checked: 0 of the 8 summaries match; 1 could not be read)." in printed.getvalue()
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert expected in html
    # The summary table counts the article left out of each metric's comparison.
    rows = _printed_rows(printed.getvalue(), "Means with", "bertscore_f1")
    assert {tuple(row[2:4]) for row in rows} == {("2", "1")}


@pytest.mark.parametrize("limit", ["1", "0", "-3", "two"])
def test_the_demo_needs_two_articles_or_more(limit, capsys):
    with pytest.raises(SystemExit) as exit_info:
        demo.main(["--limit", limit])
    assert exit_info.value.code == 2
    assert "argument --limit: " in capsys.readouterr().err


def test_an_output_that_is_a_file_is_refused_before_scoring(tmp_path, capsys):
    taken = tmp_path / "report"
    taken.write_text("not a folder")
    with pytest.raises(SystemExit) as exit_info:
        demo.main(["--output", str(taken)])
    assert exit_info.value.code == 2
    assert f"--output {taken} is a file; name a folder" in capsys.readouterr().err


def test_an_output_folder_that_cannot_be_made_is_refused_before_scoring(tmp_path, capsys):
    # Under a file: it ended, after all the scoring, in a NotADirectoryError traceback.
    under_a_file = tmp_path / "taken" / "report"
    under_a_file.parent.write_text("not a folder")
    with pytest.raises(SystemExit) as exit_info:
        demo.main(["--limit", "2", "--output", str(under_a_file)])
    assert exit_info.value.code == 2
    assert f"--output {under_a_file} cannot be made: Not a directory" in capsys.readouterr().err


@pytest.mark.slow
def test_report_embeds_its_plots_with_a_panel_for_every_score(run):
    _, output = run
    page = (output / "report.html").read_text(encoding="utf-8")
    images = re.findall(r'<img alt="([^"]+)" src="data:image/png;base64,([^"]+)"', page)
    assert [alt for alt, _ in images] == [
        "score distributions per system",
        "scores against the human scores",
        "token similarity heatmap",
    ]
    pictures = [Image.open(io.BytesIO(base64.b64decode(data))) for _, data in images]
    assert all(picture.format == "PNG" for picture in pictures)
    # A panel is 4 inches wide at 100 dpi, plus half an inch: the distributions show the
    # human score and the four scores of the tables (precision included), the scatter
    # the four scores.
    assert [picture.width for picture in pictures[:2]] == [2050, 1650]
    assert "<h2>Correlation with the human scores</h2>" in page


def _examples_expected(engine_scores: pd.DataFrame) -> list[tuple[str, str, str, float]]:
    """(label, article, system, F1) of the best, the worst and the most disputed summaries,
    from the F1 computed apart from the demo."""
    best = engine_scores.loc[engine_scores["f1"].idxmax()]
    worst = engine_scores.loc[engine_scores["f1"].idxmin()]
    spread = engine_scores.groupby("doc_id")["f1"].agg(lambda f1: f1.max() - f1.min())
    disputed = engine_scores[engine_scores["doc_id"] == spread.idxmax()]
    fields = ["doc_id", "system", "f1"]
    expected = [("best", *best[fields]), ("worst", *worst[fields])]
    for system in demo.SYSTEMS:
        [row] = disputed[disputed["system"] == system].itertuples()
        expected.append(("most disputed", row.doc_id, system, row.f1))
    return expected


@pytest.mark.slow
def test_example_summaries_are_printed_and_reported_with_their_texts(run, engine_scores):
    printed, output = run
    block = printed.split("Example summaries by bertscore_f1", 1)[1]
    page = (output / "report.html").read_text(encoding="utf-8")
    table = page.split("<h2>Example summaries</h2>", 1)[1]
    rows = {(row["doc_id"], row["system"]): row for row in _first_rows(ARTICLES)}
    for label, article, system, f1 in _examples_expected(engine_scores):
        row = rows[(article, system)]
        header = (
            f"  {label}: article {article}, {system}, bertscore_f1 {f1:.3f}, "
            f"litepyramid_recall {row['litepyramid_recall']:.3f}\n"
        )
        assert header + f"    summary:   {demo.clean(row['summary'])}\n" in block
        assert f"    reference: {demo.clean(row['reference'])}" in block
        assert re.search(rf"<td>{label}</td>.*<td[^>]*>{f1:.3f}</td>", table)
    assert table.count("<tr>") == 1 + 2 + len(demo.SYSTEMS)


def test_the_scatter_points_are_each_summarys_human_and_metric_scores(engine_scores):
    engine_scores = engine_scores.assign(doc_id=engine_scores["doc_id"].astype(str))
    keys = tuple(sorted(set(engine_scores["doc_id"])))
    experiments = [
        ExperimentScores(
            name=system,
            items=keys,
            scores={"bertscore_f1": dict(zip(mine["doc_id"], mine["f1"], strict=True))},
            failed={},
        )
        for system in demo.SYSTEMS
        for mine in [engine_scores[engine_scores["system"] == system]]
    ]
    documents = demo.load_documents()[:ARTICLES]
    points = demo.human_points(experiments, documents, "bertscore_f1")
    for system in demo.SYSTEMS:
        mine = engine_scores[engine_scores["system"] == system]
        expected = zip(mine["human"], mine["f1"], strict=True)
        assert sorted(points[system]) == sorted(expected)


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


@pytest.mark.slow
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


@pytest.mark.slow
def test_comet_offline_experiment_holds_metrics_tables_plots_and_report(tmp_path, engine_scores):
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
    # The logged means are over the 3 articles scored: the first 3 of the F1s computed here.
    first = engine_scores[engine_scores["doc_id"].isin(engine_scores["doc_id"].unique()[:3])]
    for system in demo.SYSTEMS:
        expected = first.loc[first["system"] == system, "f1"].mean()
        assert float(metrics[f"{system}/bertscore_f1/mean"]) == pytest.approx(expected, abs=5e-5)
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


GUIDE = EXAMPLES.parent / "docs" / "guides" / "examples.md"


def _documented_lines() -> list[str]:
    """The lines of the demo's printed output that the examples guide shows."""
    text = GUIDE.read_text(encoding="utf-8")
    block = text.split("It prints (abridged", 1)[1].split("```", 2)[1]
    return [line for line in block.splitlines()[1:] if line.strip() and line.strip() != "..."]


def _same_line(documented: str, printed: str) -> bool:
    """Word for word, numbers within the rounding of their last printed digit."""
    expected, found = documented.split(), printed.split()
    if len(expected) != len(found):
        return False
    for want, got in zip(expected, found, strict=True):
        try:
            if abs(float(want) - float(got)) > 1.5e-4:
                return False
        except ValueError:
            if want != got:
                return False
    return True


@pytest.mark.slow
def test_the_guide_shows_what_the_demo_prints(tmp_path):
    """Every line of the demo's output that docs/guides/examples.md shows (means, rankings,
    correlations of the 100 articles) is a line the demo prints now, so that a change of
    a default that moves them fails here until the guide is regenerated."""
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert demo.main(["--output", str(tmp_path)]) == 0
    lines = printed.getvalue().splitlines()
    documented = _documented_lines()
    assert len(documented) >= 20
    missing = [line for line in documented if not any(_same_line(line, got) for got in lines)]
    assert missing == []
