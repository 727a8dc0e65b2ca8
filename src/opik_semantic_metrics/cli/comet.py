"""``comet-score``: COMET scores of a translation file, as unbabel-comet's ``comet-score``.

Sources (``-s``), translations (``-t``) and references (``-r``, left out for
reference-free models) are aligned files, one segment a line; the options follow
``comet-score`` (``--model``, ``--batch-size``, also spelt ``--batch_size`` as there). The
scores equal unbabel-comet 2.2.7's (see :mod:`opik_semantic_metrics.comet.engine`),
computed without it. One translation file a run: run once per system and give the two
``--json`` files to ``compare-results``.
"""

from __future__ import annotations

import argparse
import dataclasses
from typing import TYPE_CHECKING, Any

from opik_semantic_metrics.cli import common
from opik_semantic_metrics.report.tables import Table

if TYPE_CHECKING:
    from opik_semantic_metrics.comet.engine import CometEngine, CometResult

#: The default of ``--model``: :data:`opik_semantic_metrics.comet.checkpoint.DEFAULT_MODEL`
#: (a test keeps the two equal), written out so that --help need not import PyTorch.
DEFAULT_MODEL = "Unbabel/wmt22-comet-da"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-s", "--sources", required=True, help="source file, one a line")
    parser.add_argument("-t", "--translations", required=True, help="translation file")
    parser.add_argument("-r", "--references", default=None, help="reference file")
    common.add_json_option(parser)
    common.add_model_options(
        parser,
        default_model=DEFAULT_MODEL,
        default_batch_size=16,
        model_help="COMET Hub id, model directory, or path of a model.ckpt",
    )


def run(args: argparse.Namespace) -> int:
    paths = [args.sources, args.translations] + ([args.references] if args.references else [])
    # unbabel-comet's command strips every line, and the spaces around a text are tokens.
    sources, translations, *rest = (
        [line.strip() for line in column] for column in common.read_aligned(paths)
    )
    references = rest[0] if rest else None
    engine = _engine(args)
    results = common.score_lines(engine.score, [sources, translations, references], args)
    mean = sum(result.score for result in results) / len(results)
    if args.json:
        print(common.json_text(_as_json(args, engine, results, mean)))
    else:
        rows = tuple((str(line), f"{r.score:.6f}") for line, r in enumerate(results, start=1))
        print(Table(("line", "score"), rows).to_text())
        print(f"{engine.model_name} ({engine.class_identifier}) score: {mean:.6f}")
    return 0


def _engine(args: argparse.Namespace) -> CometEngine:
    """The engine of ``--model``, checked to get the references it needs.

    Raises:
        CliError: The model cannot be built, or needs references and ``-r`` is missing.
    """
    from opik_semantic_metrics.comet.engine import CometEngine

    with common.refusals_as_cli_errors():
        engine = CometEngine(args.model, **common.engine_options(args))
    # Checked here rather than left to the engine, whose message names the first item
    # without a reference, 0-based: without -r, every line lacks one.
    if engine.requires_references and args.references is None:
        raise common.CliError(
            f"{engine.model_name} needs references: pass -r/--references, a file aligned "
            f"with {args.translations}, or use a reference-free model (e.g. "
            "Unbabel/wmt22-cometkiwi-da)"
        )
    return engine


def _as_json(
    args: argparse.Namespace, engine: CometEngine, results: list[CometResult], mean: float
) -> dict[str, Any]:
    from opik_semantic_metrics.records import comet_record

    return {
        "metric": "comet",
        **comet_record(engine),
        "sources": args.sources,
        "translations": args.translations,
        "references": args.references,
        "mean": {"score": mean},
        "scores": [
            {
                "line": line,
                "score": result.score,
                "used_reference": result.used_reference,
                "truncated": list(result.truncated),
                **(
                    {"partial_scores": dict(result.partial_scores)} if result.partial_scores else {}
                ),
                **(
                    {"error_spans": [dataclasses.asdict(span) for span in result.error_spans]}
                    if result.error_spans is not None
                    else {}
                ),
            }
            for line, result in enumerate(results, start=1)
        ],
    }


COMMAND = common.Command(
    "comet-score",
    help="COMET scores of translation lines",
    description="COMET score of each translation line given the same line of the "
    "source (and reference) file, and the system score (their mean).",
    add_arguments=add_arguments,
    run=run,
)
