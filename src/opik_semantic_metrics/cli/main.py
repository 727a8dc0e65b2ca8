"""Entry point of ``opik-semantic-metrics`` (also ``python -m opik_semantic_metrics``).

The subcommands' modules import, at the top, only the standard library and the
package's modules that import nothing else (tables, file reading, the metric catalog);
each imports what it scores with where it runs. So ``--help`` answers in well under a
second, and no subcommand imports Opik (``tests/cli/test_imports.py``).

Errors the user can fix (files, arguments, models that cannot be had, bad input) are
printed as one line on stderr and exit with status 2, as argparse does for bad usage.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence

from opik_semantic_metrics import __version__
from opik_semantic_metrics.cli import (
    answer_match,
    bertscore,
    comet,
    compare_results,
    heatmap,
    report,
    score_dataset,
    semantic_match,
)
from opik_semantic_metrics.cli.common import CliError, as_options, quiet_model_libraries
from opik_semantic_metrics.errors import InputError, ModelUnavailableError

PROGRAM = "opik-semantic-metrics"
#: Exit status of an error the user can fix.
USAGE_ERROR = 2


def build_parser() -> argparse.ArgumentParser:
    """The command's parser, one subparser per subcommand."""
    parser = argparse.ArgumentParser(
        prog=PROGRAM,
        description="Score text files with semantic metrics, compare results, draw heatmaps, "
        "write reports.",
        epilog=f"Run '{PROGRAM} COMMAND --help' for a command's options.",
    )
    parser.add_argument("--version", action="version", version=f"{PROGRAM} {__version__}")
    subparsers = parser.add_subparsers(title="subcommands", required=True, metavar="COMMAND")
    commands = (
        bertscore,
        comet,
        semantic_match,
        answer_match,
        compare_results,
        heatmap,
        report,
        score_dataset,
    )
    for command in commands:
        command.COMMAND.add_to(subparsers)
    return parser


def _configure_output(loads_models: bool = True) -> None:
    """Our warnings as one prefixed line each; no model-loading bars or library advice.

    The model libraries are configured only for a command that loads a model: importing
    transformers takes seconds, which a command that reads numbers should not pay.
    """
    logging.basicConfig(level=logging.WARNING, format=f"{PROGRAM}: warning: %(message)s")
    if loads_models:
        quiet_model_libraries()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; returns the exit status.

    Example:
        >>> main(["compare-results", "missing-a.txt", "missing-b.txt"])
        2
    """
    parser = build_parser()
    arguments = sys.argv[1:] if argv is None else list(argv)
    if not arguments:
        # argparse would say only "the following arguments are required: COMMAND".
        parser.print_help(sys.stderr)
        return USAGE_ERROR
    args = parser.parse_args(arguments)
    _configure_output(getattr(args, "loads_models", True))
    try:
        return int(args.run(args))
    except (CliError, InputError, ModelUnavailableError) as error:
        # The library names its Python arguments; the command line has options.
        message = as_options(" ".join(str(error).split()), getattr(args, "options", ()))
        print(f"{PROGRAM}: error: {message}", file=sys.stderr)
        return USAGE_ERROR
    except BrokenPipeError:
        # The reader went away (`... | head`): stop quietly, as Unix tools do.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except OSError as error:
        # Files the commands read and write are checked where they are opened, so what
        # ends here is mostly standard output (`--json > a.json` on a full disk).
        print(f"{PROGRAM}: error: {error}", file=sys.stderr)
        # What is left in its buffer would fail again when Python flushes it at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return USAGE_ERROR
