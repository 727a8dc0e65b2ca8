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
    from opik_semantic_metrics.semantic.engine import SemanticMatchEngine

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


def run(args: argparse.Namespace) -> int:
    candidates, references = common.read_aligned([args.candidates, args.references])
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
        rows = tuple(
            (
                str(line),
                f"{result.score:.6f}",
                *(_shown(value) for value in (result.word, result.sentence, result.paragraph)),
                result.status,
            )
            for line, result in enumerate(results, start=1)
        )
        print(Table(("line", "score", "word", "sentence", "paragraph", "status"), rows).to_text())
        print(f"{engine.model_name} ({fitted}) SemanticMatch: {mean:.6f}")
    return 0


def _shown(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


def _dtype(engine: SemanticMatchEngine) -> str:
    from opik_semantic_metrics.models.devices import dtype_name

    return dtype_name(engine.encoder.dtype)


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
