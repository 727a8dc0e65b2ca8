"""Three summarisation systems, three Opik experiments, compared against human judgments.

Scores the summaries of ``bart``, ``t5-base`` and ``pointer-generator`` on 100
CNN/DailyMail articles (REALSumm, Bhandari et al., 2020; CC BY 4.0, see
``examples/data/realsumm/SOURCE.md``) with BERTScore and SemanticMatch (fitted on the
articles' references) on the packaged offline model all-MiniLM-L6-v2, one Opik experiment
per system, then prints:

- each metric's mean per system with a 95% bootstrap interval, and the paired
  significance of every pairwise difference (paired t-test and paired bootstrap);
- which metrics rank the systems in the human order (LitePyramid recall);
- the correlation of each metric with the human scores, at system and summary level;
- example summaries with their texts: the best and the worst by BERTScore F1, and the
  article on which it separates the systems most;

and writes an HTML report with these, the score distributions per system, each score
against the human score, and the token similarity heatmap of one summary. AnswerMatch
is not used: it judges short answers (exact, normalised, numeric, list), and a
multi-sentence summary does not match a reference summary under any of its tiers (the
demo counts it: 0 of 300 match).

With an Opik server configured (``OPIK_URL_OVERRIDE``, ``OPIK_API_KEY`` or
``opik configure``) the items go into the Opik dataset ``realsumm-demo`` and each system
is an ``opik.evaluate`` experiment, to compare in the Opik UI; otherwise the same
experiments run on Opik's local engine (``opik.evaluate_on_dict_items``), offline.

    python examples/realsumm_demo.py [--output realsumm-report] [--comet-offline DIR]
"""

from __future__ import annotations

import os

# Before any library reads them: no network, no tracking without a server, no noise.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# Opik imports litellm when a metric fails; keep litellm from fetching its price list.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import argparse
import importlib.util
import itertools
import json
import logging
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import opik
from opik.exceptions import MetricComputationError
from transformers.utils import logging as transformers_logging

from opik_semantic_metrics import AnswerMatch, BERTScore, SemanticMatch
from opik_semantic_metrics.compare.correlation import Correlation, summary_level, system_level
from opik_semantic_metrics.compare.experiments import (
    ExperimentRunner,
    ExperimentScores,
    MetricSummary,
    aligned_scores,
    opik_server_configured,
    summarize,
)
from opik_semantic_metrics.report.html import HtmlReport
from opik_semantic_metrics.report.plots import (
    figure_png,
    score_distributions,
    score_scatter,
    similarity_heatmap,
)
from opik_semantic_metrics.report.tables import (
    Table,
    correlation_table,
    summaries_pairwise_table,
    summary_table,
)

DATA = Path(__file__).parent / "data" / "realsumm" / "realsumm_3systems.jsonl"
#: The systems in the order of their human scores, best first.
SYSTEMS = ("bart", "t5-base", "pointer-generator")
HUMAN = "litepyramid_recall"
MODEL = "all-MiniLM-L6-v2"
METRICS = ("bertscore_f1", "bertscore_precision", "bertscore_recall", "semantic_match")
DATASET_NAME = "realsumm-demo"


@dataclass(frozen=True)
class Document:
    """One article: its reference highlights, each system's summary and human score."""

    doc_id: str
    reference: str
    summaries: dict[str, str]
    human: dict[str, float]


def clean(text: str) -> str:
    """The text without REALSumm's ``<t> ... </t>`` sentence tags, whitespace collapsed.

    >>> clean("<t> a cat . </t>  <t> it sat . </t>")
    'a cat . it sat .'
    """
    return " ".join(re.sub(r"</?t>", " ", text).split())


def load_documents(path: Path = DATA) -> list[Document]:
    """The REALSumm rows grouped by article, in file order of first appearance."""
    by_id: dict[str, dict[str, Any]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        entry = by_id.setdefault(
            str(row["doc_id"]),
            {"reference": clean(row["reference"]), "summaries": {}, "human": {}},
        )
        entry["summaries"][row["system"]] = clean(row["summary"])
        entry["human"][row["system"]] = float(row[HUMAN])
    return [Document(doc_id, **entry) for doc_id, entry in by_id.items()]


def dataset_items(documents: Sequence[Document]) -> list[dict[str, Any]]:
    """One Opik dataset item per article; each experiment's task picks its system."""
    return [
        {
            "doc_id": document.doc_id,
            "reference": document.reference,
            "summaries": document.summaries,
            HUMAN: document.human,
        }
        for document in documents
    ]


def human_scores(documents: Sequence[Document]) -> list[ExperimentScores]:
    """The human scores in the shape of experiment scores, to summarise them alike."""
    keys = tuple(sorted(document.doc_id for document in documents))
    return [
        ExperimentScores(
            name=system,
            items=keys,
            scores={HUMAN: {d.doc_id: d.human[system] for d in documents}},
            failed={},
        )
        for system in SYSTEMS
    ]


def correlations(
    experiments: Sequence[ExperimentScores], documents: Sequence[Document], metrics: Sequence[str]
) -> dict[str, dict[str, Correlation]]:
    """Each metric against the human scores, on the articles every system was scored on."""
    human = {document.doc_id: document.human for document in documents}
    results = {}
    for metric in metrics:
        keys, values = aligned_scores(experiments, metric)
        metric_grid = [[values[system][i] for system in SYSTEMS] for i in range(len(keys))]
        human_grid = [[human[key][system] for system in SYSTEMS] for key in keys]
        results[metric] = {
            "system": system_level(metric_grid, human_grid),
            "summary": summary_level(metric_grid, human_grid),
        }
    return results


def answer_match_note(documents: Sequence[Document]) -> str:
    """Why AnswerMatch is left out, with the count that shows it."""
    answer_match = AnswerMatch(track=False)
    outcomes = []
    for document in documents:
        for system in SYSTEMS:
            try:
                result = answer_match.score(
                    output=document.summaries[system], reference=document.reference
                )
            except MetricComputationError:  # a text it cannot read, as the other metrics
                outcomes.append(None)
            else:
                outcomes.append(result.value == 1.0)
    checked = [outcome for outcome in outcomes if outcome is not None]
    unread = len(outcomes) - len(checked)
    return (
        "AnswerMatch is not applied: it judges short answers (exact, normalised, numeric, "
        "list and not-answerable tiers, for QA items with an answer_format), and a "
        f"multi-sentence summary does not match a reference summary under any of them "
        f"(checked: {sum(checked)} of the {len(checked)} summaries match"
        + (f"; {unread} could not be read)." if unread else ").")
    )


def failure_note(experiments: Sequence[ExperimentScores]) -> str | None:
    """The scores that failed, by system and metric; ``None`` when none did."""
    failures = [
        f"{experiment.name}: {metric} on article {', '.join(keys)}"
        for experiment in experiments
        for metric, keys in experiment.failed.items()
    ]
    if not failures:
        return None
    return (
        "Failed scores, left out of that metric's means, tests and correlations (the "
        f"'excluded' column counts them): {'; '.join(failures)}."
    )


@dataclass(frozen=True)
class Example:
    """A summary shown in full: why it was chosen, its article and system, its score."""

    label: str
    document: Document
    system: str
    score: float


def examples(
    documents: Sequence[Document], experiments: Sequence[ExperimentScores], metric: str
) -> list[Example]:
    """The best and the worst summary by ``metric``, and every system's summary of the
    article on which ``metric`` separates the systems most (the widest spread of scores),
    among the articles every system was scored on."""
    keys, values = aligned_scores(experiments, metric)
    if not keys:
        return []
    by_id = {document.doc_id: document for document in documents}
    names = [experiment.name for experiment in experiments]
    scored = [(values[name][i], key, name) for i, key in enumerate(keys) for name in names]
    best, worst = max(scored), min(scored)
    spread = [
        max(values[name][i] for name in names) - min(values[name][i] for name in names)
        for i in range(len(keys))
    ]
    disputed = max(range(len(keys)), key=spread.__getitem__)
    chosen = [
        Example("best", by_id[best[1]], best[2], best[0]),
        Example("worst", by_id[worst[1]], worst[2], worst[0]),
    ]
    chosen += [
        Example("most disputed", by_id[keys[disputed]], name, values[name][disputed])
        for name in names
    ]
    return chosen


def examples_table(chosen: Sequence[Example], metric: str) -> Table:
    """The examples with their texts, the metric's score and the human score."""
    rows = tuple(
        (
            example.label,
            example.document.doc_id,
            example.system,
            f"{example.score:.3f}",
            f"{example.document.human[example.system]:.3f}",
            example.document.summaries[example.system],
            example.document.reference,
        )
        for example in chosen
    )
    return Table(("example", "article", "system", metric, HUMAN, "summary", "reference"), rows)


def examples_text(chosen: Sequence[Example], metric: str) -> str:
    """The examples as blocks of text for the console (their texts are too long for a row)."""
    blocks = []
    for example in chosen:
        document, system = example.document, example.system
        blocks.append(
            f"  {example.label}: article {document.doc_id}, {system}, {metric} "
            f"{example.score:.3f}, {HUMAN} {document.human[system]:.3f}\n"
            f"    summary:   {document.summaries[system]}\n"
            f"    reference: {document.reference}"
        )
    return "\n".join(blocks)


def human_points(
    experiments: Sequence[ExperimentScores], documents: Sequence[Document], metric: str
) -> dict[str, list[tuple[float, float]]]:
    """Per system, ``(human score, metric score)`` of each article every system scored."""
    human = {document.doc_id: document.human for document in documents}
    keys, values = aligned_scores(experiments, metric)
    return {
        experiment.name: [
            (human[key][experiment.name], values[experiment.name][i]) for i, key in enumerate(keys)
        ]
        for experiment in experiments
    }


def shortest_pair(documents: Sequence[Document], system: str) -> Document:
    """The article whose summary and reference are shortest: the most legible heatmap."""
    return min(
        documents,
        key=lambda d: len(d.summaries[system].split()) + len(d.reference.split()),
    )


def run(
    documents: Sequence[Document],
    bertscore: BERTScore,
    semantic_match: SemanticMatch,
    *,
    online: bool,
) -> list[ExperimentScores]:
    """One experiment per system, scored by both metrics; returns their scores."""
    runner = ExperimentRunner(
        dataset_items(documents), DATASET_NAME, key_field="doc_id", online=online
    )
    experiments = []
    for system in SYSTEMS:
        started = time.perf_counter()
        scores = runner.run(
            system,
            lambda item, system=system: {"output": item["summaries"][system]},
            [bertscore, semantic_match],
            {"system": system, "metrics_model": MODEL, "bertscore": bertscore.engine.hash},
        )
        failed = sum(len(keys) for keys in scores.failed.values())
        url = runner.experiment_urls.get(system)
        print(
            f"  experiment {system:<18} {len(scores.items)} items, {failed} failed scores, "
            f"{time.perf_counter() - started:5.1f} s" + (f"  {url}" if url else "")
        )
        experiments.append(scores)
    return experiments


def order_line(summary: MetricSummary) -> str:
    """The systems as ``summary`` ranks them (``=`` between a tie), whether that is the
    human order, and which neighbouring steps of the ranking are not significant."""
    ranking, ranks = summary.ranking, summary.ranks
    order = ranking[0]
    for higher, lower in itertools.pairwise(ranking):
        order += f" {'=' if ranks[lower] == ranks[higher] else '>'} {lower}"
    weak = [
        f"{higher} vs {lower}"
        for higher, lower in itertools.pairwise(ranking)
        if not summary.comparison(higher, lower).significant
    ]
    # A tie leaves the order of the tied systems open: not the human order.
    strict = len(set(ranks.values())) == len(ranks)
    matches = strict and ranking == SYSTEMS
    verdict = "matches the human order" if matches else "differs from the human order"
    steps = f"not significant: {', '.join(weak)}" if weak else "every step significant"
    return f"  {summary.metric:<22} {order}   ({verdict}; {steps})"


def write_report(
    path: Path,
    documents: Sequence[Document],
    summaries: Sequence[MetricSummary],
    tables: dict[str, Table],
    distributions: dict[str, dict[str, list[float]]],
    bertscore: BERTScore,
    notes: Sequence[str],
    points: dict[str, dict[str, list[tuple[float, float]]]] | None = None,
) -> tuple[Path, dict[str, bytes]]:
    """The HTML report; returns its path and its plots (PNG bytes by file name).

    ``tables`` may hold ``"examples"`` (an :func:`examples_table`), and ``points`` each
    metric's :func:`human_points`, drawn as scores against the human scores.
    """
    example = shortest_pair(documents, SYSTEMS[0])
    tokens = bertscore.engine.token_similarity(example.summaries[SYSTEMS[0]], example.reference)
    plots = {
        "score_distributions.png": figure_png(
            score_distributions(distributions, title="Per-summary scores by system")
        ),
        **(
            {
                "scores_against_human.png": figure_png(
                    score_scatter(points, x_label=f"{HUMAN} (human)")
                )
            }
            if points
            else {}
        ),
        "token_similarity.png": figure_png(
            similarity_heatmap(
                *tokens, title=f"{SYSTEMS[0]} summary vs reference, article {example.doc_id}"
            )
        ),
    }
    report = HtmlReport("REALSumm: three summarisation systems, three Opik experiments")
    report.add_paragraph(
        f"{len(documents)} CNN/DailyMail articles, summaries of {', '.join(SYSTEMS)}, scored "
        f"with BERTScore ({bertscore.engine.hash}) and SemanticMatch; human scores: "
        "LitePyramid recall (REALSumm, Bhandari et al., 2020, CC BY 4.0)."
    )
    report.add_heading("Means, 95% bootstrap intervals and ranks")
    report.add_table(tables["summary"])
    report.add_heading("Pairwise differences (paired t-test, paired bootstrap)")
    report.add_table(tables["pairwise"])
    report.add_heading("Ranking of the systems by each score")
    report.add_preformatted("\n".join(order_line(summary) for summary in summaries))
    report.add_heading("Correlation with the human scores")
    report.add_table(tables["correlation"])
    report.add_paragraph(
        "System level: over the 3 systems' means. Summary level: per article, over its 3 "
        "summaries, averaged over articles (articles whose scores are all equal are skipped)."
    )
    report.add_heading("Score distributions")
    report.add_image(
        plots["score_distributions.png"],
        alt="score distributions per system",
        caption="Violin, box and mean of the per-summary scores of each system.",
    )
    if "scores_against_human.png" in plots:
        report.add_heading("Each score against the human score")
        report.add_image(
            plots["scores_against_human.png"],
            alt="scores against the human scores",
            caption="One point per summary: its human score across, the metric's score up.",
        )
    if "examples" in tables:
        report.add_heading("Example summaries")
        report.add_table(
            tables["examples"],
            caption="The best and the worst summary by BERTScore F1, and the article on "
            "which it separates the systems most.",
        )
    report.add_heading("Token similarity of one summary")
    report.add_image(
        plots["token_similarity.png"],
        alt="token similarity heatmap",
        caption=f"Article {example.doc_id} (the shortest pair): cosine similarity of each "
        "summary token (rows) with each reference token (columns); framed: the match "
        "BERTScore precision takes for each summary token.",
    )
    for note in notes:
        report.add_paragraph(note)
    return report.write(path), plots


def _article_count(text: str) -> int:
    try:
        count = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if count < 2:
        # SemanticMatch fits its baseline on two distinct references at least.
        raise argparse.ArgumentTypeError(f"at least 2 articles, got {count}")
    return count


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", default="realsumm-report", help="folder of the report")
    parser.add_argument(
        "--limit", type=_article_count, default=None, help="first N articles only (N >= 2)"
    )
    parser.add_argument(
        "--comet-offline",
        metavar="DIR",
        default=None,
        help="also log the run to a comet_ml.OfflineExperiment zip in DIR",
    )
    args = parser.parse_args(argv)
    # Checked now, not after minutes of scoring.
    for option, folder in (("--output", args.output), ("--comet-offline", args.comet_offline)):
        if folder is None:
            continue
        if Path(folder).exists() and not Path(folder).is_dir():
            parser.error(f"{option} {folder} is a file; name a folder")
        try:
            Path(folder).mkdir(parents=True, exist_ok=True)
        except OSError as error:
            parser.error(f"{option} {folder} cannot be made: {error.strerror or error}")
    if args.comet_offline and importlib.util.find_spec("comet_ml") is None:
        parser.error("--comet-offline needs comet_ml: pip install -e '.[comet]'")
    started = time.perf_counter()
    transformers_logging.set_verbosity_error()
    transformers_logging.disable_progress_bar()
    online = opik_server_configured()
    if not online:
        # No tracing (the flag is read once and cached, so set it too), and none of the
        # warnings of an Opik client with nowhere to send to.
        os.environ["OPIK_TRACK_DISABLE"] = "true"
        opik.set_tracing_active(False)
        logging.getLogger("opik").setLevel(logging.ERROR)

    documents = load_documents()[: args.limit]
    print(
        f"REALSumm demo: {len(documents)} articles x {len(SYSTEMS)} systems, BERTScore and "
        f"SemanticMatch on {MODEL} (offline)."
    )
    print(
        "Opik: logging the experiments to the configured server."
        if online
        else "Opik: no server configured; experiments run on Opik's local engine "
        "(set OPIK_URL_OVERRIDE or run `opik configure` to log them)."
    )
    bertscore = BERTScore(model=MODEL, track=online)
    semantic_match = SemanticMatch(model=MODEL, track=online)
    # idf of word pieces and the paragraph baseline, from this dataset's references.
    semantic_match.fit([document.reference for document in documents])
    experiments = run(documents, bertscore, semantic_match, online=online)
    human = human_scores(documents)

    summaries = summarize(human) + summarize(experiments, METRICS)
    tables = {
        "summary": summary_table(summaries),
        "pairwise": summaries_pairwise_table(summaries),
        "correlation": correlation_table(correlations(experiments, documents, METRICS)),
    }
    print(f"\nMeans with 95% bootstrap intervals ({HUMAN} = human score):")
    print(tables["summary"].to_text())
    print("\nPairwise differences (significant: paired t-test p < 0.05):")
    print(tables["pairwise"].to_text())
    print(f"\nRanking by each score (human order: {' > '.join(SYSTEMS)}):")
    print("\n".join(order_line(summary) for summary in summaries))
    print("\nCorrelation with the human scores:")
    print(tables["correlation"].to_text())
    chosen = examples(documents, experiments, "bertscore_f1")
    tables["examples"] = examples_table(chosen, "bertscore_f1")
    print("\nExample summaries by bertscore_f1 (best, worst, most disputed between systems):")
    print(examples_text(chosen, "bertscore_f1"))
    notes = [answer_match_note(documents)]
    failures = failure_note(experiments)
    if failures:
        notes.insert(0, failures)
    print("\n" + "\n".join(notes))

    plotted = {
        HUMAN: human,
        **{metric: experiments for metric in METRICS},
    }
    # The articles the tables compare: those every system scored.
    distributions = {metric: aligned_scores(runs, metric)[1] for metric, runs in plotted.items()}
    points = {metric: human_points(experiments, documents, metric) for metric in METRICS}
    report_path, plots = write_report(
        Path(args.output) / "report.html",
        documents,
        summaries,
        tables,
        distributions,
        bertscore,
        notes,
        points,
    )
    print(f"\nHTML report: {report_path}")
    if args.comet_offline:
        from opik_semantic_metrics.report.tracking import log_comet_offline

        archive = log_comet_offline(
            args.comet_offline,
            project_name=DATASET_NAME,
            experiment_name=f"realsumm-{len(documents)}-articles",
            parameters={
                "model": MODEL,
                "bertscore": bertscore.engine.hash,
                "articles": len(documents),
            },
            summaries=summaries,
            tables={f"{name}.csv": table for name, table in tables.items()},
            images=plots,
            html=report_path.read_text(encoding="utf-8"),
        )
        print(f"Comet offline experiment: {archive} (send it with `comet upload {archive}`)")
    print(f"Done in {time.perf_counter() - started:.0f} s.")
    return 0


if __name__ == "__main__":
    status = main()
    if not opik_server_configured():
        # Opik's local engine still queues a trace per item for its default host, with no
        # server to take them: dropped here, or the exit waits about 12 s on its retries.
        opik.get_global_client().end(flush=False)
    raise SystemExit(status)
