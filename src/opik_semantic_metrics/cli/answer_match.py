"""``answer-match``: AnswerMatch's tiers over an answer file and a gold answer file.

The files are aligned, one answer a line; ``--formats`` (MMESGBench's ``Str``, ``Int``,
``Float``, ``List``, ``None`` a line) and ``--questions`` are optional files aligned with
them. No model is loaded unless ``--semantic-model`` turns the semantic tier on: then
an answer that no other tier matches matches where its BERTScore F1 against the gold
answer, with that model, reaches ``--semantic-threshold``. The verdicts are those of
``AnswerMatch`` with the same settings (``semantic=BERTScore(model=...)``); ``--json``
gives each line a ``score`` of 1 or 0, which ``compare-results`` reads.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from opik_semantic_metrics.cli import common
from opik_semantic_metrics.report.tables import Table

if TYPE_CHECKING:
    from opik_semantic_metrics.answers.similarity import SemanticScorer

#: AnswerMatch's default threshold for BERTScore F1 on all-MiniLM-L6-v2 (layer 6, no idf,
#: not rescaled): :data:`opik_semantic_metrics.metrics.answer_match.BERTSCORE_MINILM_F1_THRESHOLD`
#: (a test keeps the two equal), written out so that the command imports no Opik.
MINILM_THRESHOLD = 0.55


def add_arguments(parser: argparse.ArgumentParser) -> None:
    common.add_text_files(parser, candidates="answer", references="gold answer")
    parser.add_argument(
        "--formats", default=None, help="answer format file, aligned (Str, Int, Float, List, None)"
    )
    parser.add_argument("--questions", default=None, help="question file, aligned")
    parser.add_argument(
        "--acceptable-separator",
        default=None,
        metavar="SEP",
        help="read each gold line as acceptable answers separated by SEP, any one of which "
        "is right (e.g. '/' or '|'; default: each line is one gold answer)",
    )
    parser.add_argument(
        "--tolerance", type=float, default=0.01, help="largest difference of equal numbers"
    )
    parser.add_argument(
        "--relative-tolerance",
        type=float,
        default=None,
        help="largest difference relative to the larger number (0.05 for 5%%)",
    )
    parser.add_argument(
        "--semantic-model",
        default=None,
        help="turn the semantic tier on: BERTScore F1 with this model (Hub id, local "
        "directory, or all-MiniLM-L6-v2, the packaged offline model) for text answers no "
        "other tier matched (default: off, and no model is loaded)",
    )
    parser.add_argument(
        "--semantic-threshold",
        type=float,
        default=None,
        help=f"least F1 that matches (default: {MINILM_THRESHOLD} for all-MiniLM-L6-v2, "
        "calibrated; required for any other model)",
    )
    common.add_json_option(parser)


def _acceptable(gold: str, separator: str | None) -> tuple[str, ...]:
    """A gold line's acceptable answers (the line itself without a separator)."""
    if separator is None:
        return (gold,)
    answers = tuple(part.strip() for part in gold.split(separator) if part.strip())
    return answers or (gold,)


def run(args: argparse.Namespace) -> int:
    from opik_semantic_metrics.answers.tiers import AnswerItem, AnswerMatcher
    from opik_semantic_metrics.errors import ScorerError

    optional = [path for path in (args.formats, args.questions) if path is not None]
    answers, golds, *columns = common.read_aligned([args.candidates, args.references, *optional])
    formats: list[str | None] = (
        _checked_formats(args.formats, columns.pop(0))
        if args.formats is not None
        else [None] * len(answers)
    )
    questions = columns.pop(0) if args.questions is not None else [None] * len(answers)
    threshold = _semantic_threshold(args)
    separator = args.acceptable_separator
    if separator is not None and not separator.strip():
        raise common.CliError("--acceptable-separator must hold a character that is not a space.")
    with common.refusals_as_cli_errors():
        matcher = AnswerMatcher(
            args.tolerance,
            args.relative_tolerance,
            semantic=_semantic_scorer(args),
            semantic_threshold=threshold,
        )
    items = [
        AnswerItem(answer, _acceptable(gold, separator), form, question)
        for answer, gold, form, question in zip(answers, golds, formats, questions, strict=True)
    ]
    try:
        # One batch: the semantic tier's pairs go to the model together.
        results = matcher.match_many(items)
    except (ValueError, ScorerError):  # InputError too: find the line, to name it
        for line, item in enumerate(items, start=1):
            try:
                matcher.match_many([item])
            except (ValueError, ScorerError) as error:
                raise common.CliError(f"line {line}: {error}") from error
        raise
    matched = sum(result.matched for result in results)
    accuracy = matched / len(results)
    if args.json:
        semantic = (
            {"semantic_model": args.semantic_model, "semantic_threshold": threshold}
            if args.semantic_model is not None
            else {}
        )
        document = {
            "metric": "answer_match",
            **semantic,
            "candidates": args.candidates,
            "references": args.references,
            "mean": accuracy,
            "scores": [
                {
                    "line": line,
                    "score": float(result.matched),
                    "method": result.method,
                    "matched_answer": result.matched_answer,
                    "reason": result.reason,
                    "flags": list(result.flags),
                    **(
                        {"semantic_score": result.semantic_score}
                        if args.semantic_model is not None
                        else {}
                    ),
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
        tiers = (
            f" (semantic: {args.semantic_model} F1 >= {threshold:g})"
            if args.semantic_model is not None and threshold is not None
            else ""
        )
        print(f"AnswerMatch{tiers}: {matched} of {len(results)} matched, accuracy {accuracy:.4f}")
    return 0


def _checked_formats(path: str, formats: list[str]) -> list[str | None]:
    """The ``--formats`` lines in their canonical spelling; an empty line is unknown.

    Raises:
        CliError: A line that is no format, named with its line number.
    """
    from opik_semantic_metrics.answers.reading import ANSWER_FORMATS, check_answer_format
    from opik_semantic_metrics.errors import InputError, shown

    checked = []
    for line, form in enumerate(formats, start=1):
        try:
            checked.append(check_answer_format(form))
        except InputError:
            raise common.CliError(
                f"{path} line {line}: expected an answer format, one of "
                f"{', '.join(ANSWER_FORMATS)}, or an empty line for unknown; got "
                f"{shown(form, 40)}"
            ) from None
    return checked


def _semantic_threshold(args: argparse.Namespace) -> float | None:
    """``--semantic-threshold``, or the calibrated default of the packaged MiniLM.

    Raises:
        CliError: A threshold without ``--semantic-model``, or another model without
            a threshold (checked before the model loads).
    """
    from opik_semantic_metrics.models.registry import PACKAGED_MODEL_ALIASES

    if args.semantic_model is None:
        if args.semantic_threshold is not None:
            raise common.CliError("--semantic-threshold needs --semantic-model")
        return None
    if args.semantic_threshold is not None:
        return float(args.semantic_threshold)
    if args.semantic_model in PACKAGED_MODEL_ALIASES:
        return MINILM_THRESHOLD
    raise common.CliError(
        f"--semantic-model {args.semantic_model} needs --semantic-threshold: the default "
        f"({MINILM_THRESHOLD}) is calibrated for all-MiniLM-L6-v2 only (see "
        "benchmarks/answer_match_threshold.py for how to choose one)"
    )


def _semantic_scorer(args: argparse.Namespace) -> SemanticScorer | None:
    """BERTScore F1 with ``--semantic-model`` (bert_score's layer for the model, no idf,
    not rescaled), ``None`` for a pair either of whose texts the model reads only as
    unknown tokens, as ``AnswerMatch(semantic=BERTScore(...))`` scores; ``None`` without
    the option.

    Raises:
        ModelUnavailableError: The model cannot be had.
    """
    if args.semantic_model is None:
        return None
    from opik_semantic_metrics.bertscore.engine import BERTScoreEngine

    common.quiet_model_libraries()
    with common.refusals_as_cli_errors():
        engine = BERTScoreEngine(args.semantic_model)

    def bertscore_f1(output: str, reference: str) -> float | None:
        [result] = engine.score([output], [reference])
        if result.candidate_unknown_tokens or result.reference_unknown_tokens:
            return None
        return result.f1

    return bertscore_f1


COMMAND = common.Command(
    "answer-match",
    help="AnswerMatch verdicts of answer lines against gold answer lines",
    description="Whether each answer line matches the same line of the gold file, by "
    "AnswerMatch's tiers (exact, normalised, contains, numeric, list, not answerable, and "
    "semantic with --semantic-model), with the tier that matched, and the accuracy. No "
    "model is loaded without --semantic-model.",
    add_arguments=add_arguments,
    run=run,
    # Matches text: the model libraries are configured only for --semantic-model.
    loads_models=False,
)
