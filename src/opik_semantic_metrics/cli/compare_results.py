"""``compare-results``: two systems' per-line scores, with paired significance tests.

Reads two result files (the JSON that ``bert-score --json`` or ``comet-score --json``
prints, or plain files with one number per line) scored on the same lines, and prints
each system's mean with its bootstrap interval, the paired t-test and the paired
bootstrap resampling of :mod:`opik_semantic_metrics.compare.stats`, and the verdict.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import sys
from typing import TYPE_CHECKING, NamedTuple

from opik_semantic_metrics.cli.common import (
    CliError,
    Command,
    add_json_option,
    counted,
    json_text,
    read_lines,
    refusals_as_cli_errors,
)
from opik_semantic_metrics.compare.comparable import (
    COMPARED_SETTINGS,
    RecordedSettings,
    comparison_warnings,
)
from opik_semantic_metrics.compare.stats import TIE_TOLERANCE, bootstrap_interval, compare_systems
from opik_semantic_metrics.errors import shown
from opik_semantic_metrics.inputs import is_finite_number, is_real_number
from opik_semantic_metrics.report.tables import (
    format_p_value,
    summaries_pairwise_table,
    summary_table,
)

if TYPE_CHECKING:
    from opik_semantic_metrics.compare.experiments import MetricSummary

#: Score keys tried, in order, when --score is not given.
DEFAULT_SCORE_KEYS = ("f1", "score")

#: A number as the result commands write one (Python's float() also takes "1_0").
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|[+-]?(?:nan|inf|infinity)", re.I)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("results_a", help="first result file (JSON from --json, or numbers)")
    parser.add_argument("results_b", help="second result file")
    parser.add_argument(
        "--score", default=None, help="score key in JSON files (default: f1, else score)"
    )
    parser.add_argument("--names", nargs=2, default=None, help="names of the two systems")
    parser.add_argument("--alpha", type=float, default=0.05, help="significance level")
    parser.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples")
    parser.add_argument("--seed", type=int, default=0, help="seed of the resampling")
    parser.add_argument(
        "--tie-tolerance",
        type=float,
        default=TIE_TOLERANCE,
        help="per-line differences (and a difference of means) up to this are ties "
        f"(default {TIE_TOLERANCE:g}: scores of one text agree only that closely across "
        "batchings; 0 compares exactly but for the scores' rounding)",
    )
    add_json_option(parser, instead_of="tables")


class ResultFile(NamedTuple):
    """A result file's per-line scores, the key they were read under, the weight type
    that produced them (``None`` where the file does not say: a plain file of numbers),
    and the other :data:`~opik_semantic_metrics.compare.comparable.COMPARED_SETTINGS` it
    records."""

    key: str
    scores: list[float]
    dtype: str | None
    settings: dict[str, object]


def read_scores(path: str, key: str | None) -> ResultFile:
    """The per-line scores of a result file.

    Raises:
        CliError: Unreadable or malformed file, a missing key, or a line without a score.
    """
    lines = read_lines(path)
    text = "\n".join(lines)
    if text.lstrip().startswith("{"):
        return _json_scores(path, text, key)
    scores = []
    for number, line in enumerate(lines, start=1):
        if not _NUMBER.fullmatch(line.strip()):
            raise CliError(f"{path} line {number} is not a number: {line[:40]!r}")
        scores.append(_finite(path, number, float(line)))
    return ResultFile(key or "score", scores, dtype=None, settings={})


def _json_scores(path: str, text: str, key: str | None) -> ResultFile:
    try:
        document = json.loads(text)
        rows = document["scores"]
    # ValueError: also ints past 4,300 digits; RecursionError: brackets nested past the limit.
    except (ValueError, KeyError, TypeError, RecursionError) as error:
        raise CliError(f"{path} is not a result file with a 'scores' list ({error})") from None
    if not isinstance(rows, list) or not rows or not isinstance(rows[0], dict):
        raise CliError(f"{path} has no per-line scores")
    # The keys that hold a number: what --score can name (not "line", "flags"...).
    numeric = [name for name, value in rows[0].items() if name != "line" and is_real_number(value)]
    if key is None:
        key = next((name for name in DEFAULT_SCORE_KEYS if name in rows[0]), None)
        if key is None:
            raise CliError(f"{path}: pass --score, one of {', '.join(numeric) or 'none'}")
    elif key not in rows[0]:
        raise CliError(
            f"{path} has no score {key!r}; its scores are {', '.join(numeric) or 'none'} "
            "(--score names one)"
        )
    values = []
    for number, row in enumerate(rows, start=1):
        value = row.get(key) if isinstance(row, dict) else None
        if value is None and isinstance(row, dict) and key in row:
            # The result commands write NaN (bert-score with idf can give one) as null.
            raise CliError(f"{path} line {number} has no finite score (null)")
        if not is_real_number(value):  # a bool is no score
            raise CliError(f"{path} has no {key!r} score for line {number}")
        values.append(_finite(path, number, value))
    dtype = document.get("dtype")
    settings = {name: document[name] for name in ("metric", *COMPARED_SETTINGS) if name in document}
    return ResultFile(key, values, dtype if isinstance(dtype, str) else None, settings)


def _finite(path: str, number: int, value: object) -> float:
    """A line's score as a float, if it is a finite number (an int past a float's range
    is not)."""
    if not is_finite_number(value):
        raise CliError(f"{path} line {number} has no finite score ({shown(value, 40)})")
    return float(value)


def run(args: argparse.Namespace) -> int:
    result_a = read_scores(args.results_a, args.score)
    result_b = read_scores(args.results_b, args.score)
    _warn_of_other_settings(args, result_a, result_b)
    name_a, name_b = _system_names(args, result_a, result_b)
    summary = _compared(args, result_a, result_b, name_a, name_b)
    if args.json:
        print(json_text(_json_document(summary)))
    else:
        _print_comparison(args, summary)
    return 0


def _warn_of_other_settings(
    args: argparse.Namespace, result_a: ResultFile, result_b: ResultFile
) -> None:
    """Warn, on stderr, where the two files were scored with other settings."""
    recorded = [
        RecordedSettings.of(
            path,
            dtypes=[result.dtype] if result.dtype else [],
            metrics=[result.settings["metric"]]
            if result.settings.get("metric") is not None
            else [],
            settings={
                name: [result.settings[name]]
                for name in COMPARED_SETTINGS
                if name in result.settings
            },
        )
        for path, result in ((args.results_a, result_a), (args.results_b, result_b))
    ]
    with refusals_as_cli_errors():
        differences = comparison_warnings(*recorded)
    for message in differences:
        print(f"opik-semantic-metrics: warning: {message}", file=sys.stderr)


def _system_names(
    args: argparse.Namespace, result_a: ResultFile, result_b: ResultFile
) -> tuple[str, str]:
    """The two systems' names, once the files and options are known to fit.

    Raises:
        CliError: A negative seed, files of other lengths, or one name for both.
    """
    if args.seed < 0:
        raise CliError(f"--seed must be 0 or more, got {args.seed}")
    if len(result_a.scores) != len(result_b.scores):
        raise CliError(
            f"{args.results_b} has {counted(len(result_b.scores), 'score')} but "
            f"{args.results_a} has {len(result_a.scores)}: compare systems scored on the same lines"
        )
    name_a, name_b = args.names or (args.results_a, args.results_b)
    if name_a == name_b:
        raise CliError("the two systems need different names (use --names)")
    return name_a, name_b


def _compared(
    args: argparse.Namespace,
    result_a: ResultFile,
    result_b: ResultFile,
    name_a: str,
    name_b: str,
) -> MetricSummary:
    """The paired comparison and each system's interval, as one metric's summary.

    Raises:
        CliError: A bad ``--alpha``, ``--resamples`` or ``--tie-tolerance``, or more
            resamples than memory holds.
    """
    from opik_semantic_metrics.compare.experiments import MetricSummary

    key_a, key_b = result_a.key, result_b.key
    metric = key_a if key_a == key_b else f"{key_a} / {key_b}"
    options = {"resamples": args.resamples, "seed": args.seed}
    try:  # --alpha, --resamples and --tie-tolerance are checked there
        comparison = compare_systems(
            result_a.scores,
            result_b.scores,
            name_a=name_a,
            name_b=name_b,
            alpha=args.alpha,
            tie_tolerance=args.tie_tolerance,
            **options,
        )
        intervals = {
            name_a: bootstrap_interval(result_a.scores, **options),
            name_b: bootstrap_interval(result_b.scores, **options),
        }
    except ValueError as error:
        raise CliError(str(error)) from error
    except MemoryError as error:
        # numpy's "Unable to allocate 7.28 TiB" for --resamples 1000000000000.
        raise CliError(f"--resamples {args.resamples} needs more memory than there is") from error
    return MetricSummary(
        metric=metric,
        intervals=intervals,
        comparisons=(comparison,),
        items=len(result_a.scores),
        excluded=0,
    )


def _json_document(summary: MetricSummary) -> dict[str, object]:
    """``--json``'s document: the metric, the items, each interval and the comparison."""
    return {
        "metric": summary.metric,
        "items": summary.items,
        "intervals": {n: dataclasses.asdict(i) for n, i in summary.intervals.items()},
        **dataclasses.asdict(summary.comparisons[0]),
    }


def _print_comparison(args: argparse.Namespace, summary: MetricSummary) -> None:
    """The tables, and the verdict in one sentence."""
    comparison = summary.comparisons[0]
    print(summary_table([summary]).to_text())
    print()
    print(summaries_pairwise_table([summary]).to_text())
    verdict = "significantly" if comparison.significant else "not significantly"
    if comparison.winner is None:
        print(
            f"\nA tie: the means {comparison.mean_a:.7f} and {comparison.mean_b:.7f} are "
            f"within {args.tie_tolerance:g} of each other."
        )
    else:
        name_a, name_b = comparison.name_a, comparison.name_b
        loser = name_b if comparison.winner == name_a else name_a
        print(
            f"\n{comparison.winner} scores {verdict} higher than {loser} on {summary.metric} "
            f"(paired t-test p = {format_p_value(comparison.t_test.p_value)}, alpha {args.alpha})."
        )


COMMAND = Command(
    "compare-results",
    help="compare two result files with paired significance tests",
    description="Compare two systems scored on the same lines: means with bootstrap "
    "intervals, paired t-test, paired bootstrap resampling (Koehn, 2004), verdict.",
    add_arguments=add_arguments,
    run=run,
    # Reads numbers only: no model libraries to configure.
    loads_models=False,
    # Its name until 0.1.0: one name per idea, as compare_results() in Python.
    aliases=("compare",),
)
