"""``report``: result files of several systems turned into one self-contained HTML report.

Reads the result files ``compare-results`` reads (the ``--json`` of ``bert-score``,
``comet-score``, ``semantic-match`` and ``answer-match``, or files of one number a line),
two or more, scored on the same lines, and writes the report the package's
:mod:`~opik_semantic_metrics.report` modules build for Opik experiments: each system's mean
with its bootstrap interval and rank, every pairwise comparison (paired t-test and paired
bootstrap), and, with the ``report`` extra (matplotlib), each system's score distribution.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from opik_semantic_metrics.cli.common import (
    CliError,
    Command,
    check_writable_file,
    counted,
    refusals_as_cli_errors,
)
from opik_semantic_metrics.cli.compare_results import ResultFile, read_scores
from opik_semantic_metrics.compare.comparable import (
    COMPARED_SETTINGS,
    RecordedSettings,
    comparison_warnings,
)

if TYPE_CHECKING:
    from opik_semantic_metrics.report.html import HtmlReport

#: The suffixes an HTML file is written with.
_HTML_SUFFIXES = (".html", ".htm")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "results",
        nargs="+",
        metavar="RESULTS",
        help="two or more result files (JSON from --json, or one number a line), scored on "
        "the same lines",
    )
    parser.add_argument("-o", "--output", required=True, help="HTML file to write")
    parser.add_argument("--names", nargs="+", default=None, help="the systems' names, in order")
    parser.add_argument(
        "--score", default=None, help="score key in JSON files (default: f1, else score)"
    )
    parser.add_argument("--title", default=None, help="title of the page")
    parser.add_argument("--alpha", type=float, default=0.05, help="significance level")
    parser.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples")
    parser.add_argument("--seed", type=int, default=0, help="seed of the resampling")


def run(args: argparse.Namespace) -> int:
    output = Path(args.output)
    if output.suffix.lower() not in _HTML_SUFFIXES:
        raise CliError(f"--output must name a .html file, got {output}")
    check_writable_file(output, "--output", makes_folders=True)
    if len(args.results) < 2:
        raise CliError("report needs two or more result files to compare")
    names = args.names or args.results
    if len(names) != len(args.results):
        raise CliError(
            f"--names gives {counted(len(names), 'name')} for "
            f"{counted(len(args.results), 'result file')}"
        )
    if len(set(names)) != len(names):
        raise CliError("the systems need different names (use --names)")
    files = [read_scores(path, args.score) for path in args.results]
    _check_comparable(args.results, files)
    metric = " / ".join(dict.fromkeys(file.key for file in files))
    page = _page(args, names, files, metric)
    try:
        page.write(output)  # a failed write leaves the old report whole
    except OSError as error:
        raise CliError(f"cannot write {output}: {error.strerror or error}") from error
    print(f"Wrote {output}: {len(files)} systems on {counted(len(files[0].scores), 'line')}.")
    return 0


def _check_comparable(paths: list[str], files: list[ResultFile]) -> None:
    """Refuse files of different lengths, weight types or metrics; warn on stderr where
    they record different models, layers or bert_score hashes (as ``compare-results``).

    Raises:
        CliError: Files that cannot be compared line by line.
    """
    first_path, first = paths[0], files[0]
    for path, file in zip(paths[1:], files[1:], strict=True):
        if len(file.scores) != len(first.scores):
            raise CliError(
                f"{path} has {counted(len(file.scores), 'score')} but {first_path} has "
                f"{len(first.scores)}: compare systems scored on the same lines"
            )
    recorded = [
        RecordedSettings.of(
            path,
            dtypes=[file.dtype] if file.dtype else [],
            metrics=[file.settings["metric"]] if file.settings.get("metric") is not None else [],
            settings={
                name: [file.settings[name]] for name in COMPARED_SETTINGS if name in file.settings
            },
        )
        for path, file in zip(paths, files, strict=True)
    ]
    with refusals_as_cli_errors():
        for other in recorded[1:]:
            for message in comparison_warnings(recorded[0], other):
                print(f"opik-semantic-metrics: warning: {message}", file=sys.stderr)


def _page(
    args: argparse.Namespace, names: list[str], files: list[ResultFile], metric: str
) -> HtmlReport:
    """The HTML report of the files' scores.

    Raises:
        CliError: Settings the statistics refuse (``--alpha``, ``--resamples``, ``--seed``).
    """
    from opik_semantic_metrics.compare.experiments import ExperimentScores, summarize
    from opik_semantic_metrics.report.html import HtmlReport
    from opik_semantic_metrics.report.tables import (
        Table,
        significance_note,
        summaries_pairwise_table,
        summary_table,
    )

    lines = tuple(str(line) for line in range(1, len(files[0].scores) + 1))
    experiments = [
        ExperimentScores(name, lines, {metric: dict(zip(lines, file.scores, strict=True))}, {})
        for name, file in zip(names, files, strict=True)
    ]
    if args.seed < 0:
        raise CliError(f"--seed must be 0 or more, got {args.seed}")
    try:
        summaries = summarize(
            experiments, [metric], alpha=args.alpha, resamples=args.resamples, seed=args.seed
        )
    except ValueError as error:
        raise CliError(str(error)) from error
    except MemoryError as error:
        raise CliError(f"--resamples {args.resamples} needs more memory than there is") from error
    report = HtmlReport(args.title or f"{metric}: {len(names)} systems compared")
    report.add_paragraph(
        f"{len(names)} systems scored on the same {counted(len(lines), 'line')}, compared "
        f"on {metric}: means with 95% bootstrap intervals, and every pair with the paired "
        f"t-test and paired bootstrap ({args.resamples} resamples, seed {args.seed})."
    )
    report.add_table(
        Table(
            ("system", "file", "metric", "model", "dtype"),
            tuple(
                (
                    name,
                    path,
                    str(file.settings.get("metric", "-")),
                    str(file.settings.get("model", "-")),
                    file.dtype or "-",
                )
                for name, path, file in zip(names, args.results, files, strict=True)
            ),
        ),
        caption="Result files",
    )
    report.add_heading("Means, 95% bootstrap intervals and ranks")
    report.add_table(summary_table(summaries))
    report.add_heading("Pairwise differences (paired t-test, paired bootstrap)")
    report.add_table(summaries_pairwise_table(summaries))
    report.add_paragraph(significance_note(summaries[0].comparisons))
    try:
        from opik_semantic_metrics.report.plots import figure_png, score_distributions
    except ImportError as error:
        print(f"opik-semantic-metrics: warning: no plot in the report: {error}", file=sys.stderr)
    else:
        scores = {name: file.scores for name, file in zip(names, files, strict=True)}
        figure = score_distributions({metric: scores})
        report.add_heading("Score distributions")
        report.add_image(
            figure_png(figure),
            alt=f"distribution of {metric} per system",
            caption="Violin, box and mean of each system's per-line scores.",
        )
    return report


COMMAND = Command(
    "report",
    help="write an HTML report comparing two or more result files",
    description="Compare systems scored on the same lines (result files from the scoring "
    "commands' --json, or one number a line) in one self-contained HTML page: means with "
    "bootstrap intervals and ranks, every pairwise paired t-test and paired bootstrap, and "
    "with the report extra each system's score distribution.",
    add_arguments=add_arguments,
    run=run,
    # Reads numbers and draws: no model libraries to configure.
    loads_models=False,
)
