"""``answer-match``: AnswerMatch's tiers over an answer file and a gold answer file.

The files are aligned, one answer a line; ``--formats`` (MMESGBench's ``Str``, ``Int``,
``Float``, ``List``, ``None`` a line) and ``--questions`` are optional files aligned with
them. No model is loaded: the semantic tier is off (it needs a metric, in Python). The
verdicts are those of ``AnswerMatch`` with the same settings; ``--json`` gives each line
a ``score`` of 1 or 0, which ``compare-results`` reads.
"""

from __future__ import annotations

import argparse

from opik_semantic_metrics.cli import common
from opik_semantic_metrics.report.tables import Table


def add_arguments(parser: argparse.ArgumentParser) -> None:
    common.add_text_files(parser, candidates="answer", references="gold answer")
    parser.add_argument(
        "--formats", default=None, help="answer format file, aligned (Str, Int, Float, List, None)"
    )
    parser.add_argument("--questions", default=None, help="question file, aligned")
    parser.add_argument(
        "--tolerance", type=float, default=0.01, help="largest difference of equal numbers"
    )
    parser.add_argument(
        "--relative-tolerance",
        type=float,
        default=None,
        help="largest difference relative to the larger number (0.05 for 5%%)",
    )
    common.add_json_option(parser)


def run(args: argparse.Namespace) -> int:
    from opik_semantic_metrics.answers.tiers import AnswerMatcher

    optional = [path for path in (args.formats, args.questions) if path is not None]
    answers, golds, *columns = common.read_aligned([args.candidates, args.references, *optional])
    formats = columns.pop(0) if args.formats is not None else [None] * len(answers)
    questions = columns.pop(0) if args.questions is not None else [None] * len(answers)
    with common.refusals_as_cli_errors():
        matcher = AnswerMatcher(args.tolerance, args.relative_tolerance)
        results = [
            matcher.match(answer, gold, answer_format=form or None, question=question)
            for answer, gold, form, question in zip(answers, golds, formats, questions, strict=True)
        ]
    matched = sum(result.matched for result in results)
    accuracy = matched / len(results)
    if args.json:
        document = {
            "metric": "answer_match",
            "candidates": args.candidates,
            "references": args.references,
            "mean": accuracy,
            "scores": [
                {
                    "line": line,
                    "score": float(result.matched),
                    "method": result.method,
                    "reason": result.reason,
                    "flags": list(result.flags),
                }
                for line, result in enumerate(results, start=1)
            ],
        }
        print(common.json_text(document))
    else:
        rows = tuple(
            (str(line), "1" if result.matched else "0", result.method)
            for line, result in enumerate(results, start=1)
        )
        print(Table(("line", "matched", "method"), rows).to_text())
        print(f"AnswerMatch: {matched} of {len(results)} matched, accuracy {accuracy:.4f}")
    return 0


COMMAND = common.Command(
    "answer-match",
    help="AnswerMatch verdicts of answer lines against gold answer lines",
    description="Whether each answer line matches the same line of the gold file, by "
    "AnswerMatch's tiers (exact, normalised, contains, numeric, list, not answerable), "
    "with the tier that matched, and the accuracy. No model is loaded.",
    add_arguments=add_arguments,
    run=run,
    # Matches text: no model libraries to configure.
    loads_models=False,
)
