"""``semantic-match``: SemanticMatch of a candidate file against a reference file.

The files are aligned, one text a line, as for ``bert-score``. ``--fit`` fits the idf
weights and the paragraph baseline on the reference file first (as ``SemanticMatch.fit``
does); ``--state`` loads a fitted state saved by ``SemanticMatch.save`` instead. Without
either, every word piece weighs 1 and the paragraph cosine is not rescaled, which the
printed summary says. The scores are those of the ``SemanticMatch`` metric with the same
model and state.
"""

from __future__ import annotations

import argparse
import dataclasses
from typing import TYPE_CHECKING

from opik_semantic_metrics.cli import common
from opik_semantic_metrics.report.tables import Table

if TYPE_CHECKING:
    from opik_semantic_metrics.semantic.combine import Combination
    from opik_semantic_metrics.semantic.engine import SemanticMatchEngine
    from opik_semantic_metrics.semantic.results import SemanticMatchResult

#: The engine's default model, written out so that --help need not import PyTorch (a test
#: keeps the two equal).
DEFAULT_MODEL = "all-MiniLM-L6-v2"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    common.add_text_files(parser)
    fitting = parser.add_mutually_exclusive_group()
    fitting.add_argument(
        "--fit",
        action="store_true",
        help="fit idf and the paragraph baseline on the reference file (two or more "
        "different lines)",
    )
    fitting.add_argument(
        "--state", default=None, help="a fitted state saved by SemanticMatch.save (JSON)"
    )
    common.add_json_option(parser)
    common.add_model_options(parser, default_model=DEFAULT_MODEL)


#: What the table's ``flags`` column can hold, explained under the table when it does.
FLAG_LEGEND = {
    "numbers": "numbers in the candidate that the reference does not state (penalty)",
    "negation": "one text negates what the other does not (penalty)",
    "snapped": "a raw score near 1 snapped to 1.0",
    "floor": "a raw score at or below the floor, so 0.0",
    "cut": "a text cut at the model's token limit",
}


def run(args: argparse.Namespace) -> int:
    candidates, references = common.read_aligned([args.candidates, args.references])
    _check_fitting(args, references)
    engine = _engine(args, references)
    results = common.score_lines(engine.score, [candidates, references], args)
    mean = sum(result.score for result in results) / len(results)
    fitted = "fitted" if args.fit or args.state else "unfitted: see --fit"
    if args.json:
        document = {
            "metric": "semantic_match",
            "model": engine.model_name,
            "dtype": _dtype(engine),
            "fitted": bool(args.fit or args.state),
            "candidates": args.candidates,
            "references": args.references,
            "mean": mean,
            "scores": [
                {"line": line, **dataclasses.asdict(result)}
                for line, result in enumerate(results, start=1)
            ],
        }
        print(common.json_text(document))
    else:
        combination = engine.active_combination
        flags = [_flags(result, combination) for result in results]
        rows = tuple(
            (
                str(line),
                f"{result.score:.6f}",
                *(_shown(value) for value in (result.word, result.sentence, result.paragraph)),
                ", ".join(shown) or "-",
                result.status,
            )
            for line, (result, shown) in enumerate(zip(results, flags, strict=True), start=1)
        )
        header = ("line", "score", "word", "sentence", "paragraph", "flags", "status")
        print(Table(header, rows).to_text())
        used = {flag.split()[0] for shown in flags for flag in shown}
        for name in (name for name in FLAG_LEGEND if name in used):
            print(f"{name}: {FLAG_LEGEND[name]}")
        print(f"{engine.model_name} ({fitted}) SemanticMatch: {mean:.6f}")
    return 0


def _flags(result: SemanticMatchResult, combination: Combination) -> list[str]:
    """Why a line's score is not the weighted mean of its levels: each penalty with what
    it took off, a snap to 1 or the floor, a cut text (the metric's ``reason`` says the
    same in words)."""
    flags = []
    if result.changed_numbers and combination.number_penalty:
        flags.append(f"numbers -{combination.number_penalty * result.changed_numbers:.3g}")
    if result.negation_flip and combination.negation_penalty:
        flags.append(f"negation -{combination.negation_penalty * result.negation_flip:.3g}")
    if result.snapped:
        flags.append("snapped")
    elif result.status == "scored" and result.score == 0.0:
        flags.append("floor")
    if result.output_truncated or result.reference_truncated:
        flags.append("cut")
    return flags


def _shown(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


def _dtype(engine: SemanticMatchEngine) -> str:
    from opik_semantic_metrics.models.devices import dtype_name

    return dtype_name(engine.encoder.dtype)


def _check_fitting(args: argparse.Namespace, references: list[str]) -> None:
    """Refuse, before PyTorch is imported and the model loads, a ``--state`` file that
    cannot be read as JSON, and ``--fit`` on a reference file with fewer than two
    different non-blank lines (the paragraph baseline is the mean cosine of pairs of
    different references).

    Raises:
        CliError: Either.
    """
    if args.state is not None:
        from opik_semantic_metrics.input_files import read_json

        read_json(args.state, error=common.CliError)
    if args.fit:
        from opik_semantic_metrics.inputs import is_blank

        different = {line for line in references if not is_blank(line)}
        if len(different) < 2:
            raise common.CliError(
                f"--fit needs two or more different non-blank lines in {args.references} "
                f"(it has {common.counted(len(different), 'different line')}): the "
                "paragraph baseline is the mean similarity of pairs of different references; "
                "or pass --state, a state fitted on more references (SemanticMatch.save)"
            )


def _engine(args: argparse.Namespace, references: list[str]) -> SemanticMatchEngine:
    """The engine the options ask for, fitted or with its state loaded.

    Raises:
        CliError: Settings or a state file the engine refuses, or a reference file too
            uniform to fit on.
    """
    from opik_semantic_metrics.semantic.engine import SemanticMatchEngine

    with common.refusals_as_cli_errors():
        engine = SemanticMatchEngine(args.model, **common.engine_options(args))
        if args.state is not None:
            engine.load(args.state)
        elif args.fit:
            engine.fit(references)
    return engine


COMMAND = common.Command(
    "semantic-match",
    help="SemanticMatch of candidate lines against reference lines",
    description="SemanticMatch (word, sentence and paragraph similarity combined, in "
    "[0, 1]) of each candidate line against the same line of the reference file, with "
    "the mean. --fit fits idf and the paragraph baseline on the reference file first.",
    add_arguments=add_arguments,
    run=run,
)
