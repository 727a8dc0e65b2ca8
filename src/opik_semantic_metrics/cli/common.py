"""What every subcommand shares: registration, options, reading text files strictly,
scoring in parts with progress, errors."""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from opik_semantic_metrics.input_files import read_text

# The subcommands' modules import what scores (PyTorch, transformers) where they run, so
# that --help, and `compare-results`, answer without loading it.
if TYPE_CHECKING:
    from opik_semantic_metrics.bertscore.engine import BERTScoreEngine


_Result = TypeVar("_Result")


class CliError(Exception):
    """A problem the user can fix (a file, an argument); printed as one line, exit code 2."""


def as_options(message: str, options: Sequence[str]) -> str:
    """``message`` with each Python argument the library names in backticks (`` `lang` ``,
    `` `num_layers` ``) written as the command's option of that name (``--lang``,
    ``--num-layers``), where the command has one.

    Example:
        >>> as_options("Expected `dtype`, `num_layers`, not `seed`.", ["--dtype", "--num-layers"])
        'Expected --dtype, --num-layers, not `seed`.'
    """
    for option in options:
        message = message.replace(f"`{option[2:].replace('-', '_')}`", option)
    return message


def counted(count: int, noun: str) -> str:
    """``count`` and ``noun``, plural unless the count is 1.

    Example:
        >>> counted(1, "line"), counted(3, "line")
        ('1 line', '3 lines')
    """
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


class DefaultsHelpFormatter(argparse.HelpFormatter):
    """Help that shows each option's default: ``(default: X)`` appended where the option
    has a default other than ``None`` or ``False`` and its help does not already name one.

    argparse's ``ArgumentDefaultsHelpFormatter`` appends ``(default: None)`` and
    ``(default: False)`` to every flag too, which says nothing.
    """

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if (
            action.option_strings
            and action.default not in (None, False, argparse.SUPPRESS)
            and "default" not in text
        ):
            text += " (default: %(default)s)"
        return text


@contextmanager
def refusals_as_cli_errors() -> Iterator[None]:
    """A ``ValueError`` raised inside (``InputError`` is one) as a :class:`CliError`.

    The library refuses a setting or an input with a ``ValueError``; on the command line
    that is the user's to fix, so it is printed as one line rather than a traceback.
    """
    try:
        yield
    except ValueError as error:
        raise CliError(str(error)) from error


@dataclass(frozen=True)
class Command:
    """A subcommand as it describes itself: its name, help line and description, its
    options and what it runs.

    Every subcommand is added to the parser by :meth:`add_to`, so that what the entry
    point reads from the parsed arguments (``run``, ``loads_models``) is set one way.
    """

    name: str
    help: str
    description: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]
    #: False: the model libraries are not configured before ``run`` (importing
    #: transformers takes seconds, which a command that reads numbers should not pay).
    loads_models: bool = True
    #: Other names the command answers to (former names that scripts still use).
    aliases: tuple[str, ...] = ()

    def add_to(self, subparsers: Any) -> None:
        """Add the subcommand to ``subparsers`` (``ArgumentParser.add_subparsers()``)."""
        parser = subparsers.add_parser(
            self.name,
            aliases=list(self.aliases),
            help=self.help,
            description=self.description,
            formatter_class=DefaultsHelpFormatter,
        )
        self.add_arguments(parser)
        options = tuple(
            option
            for action in parser._actions
            for option in action.option_strings
            if option.startswith("--")
        )
        parser.set_defaults(run=self.run, loads_models=self.loads_models, options=options)


def quiet_model_libraries() -> None:
    """No model-loading bars or library advice from transformers and huggingface_hub.

    Called before a command runs. Where transformers is not imported yet, its verbosity
    is set through ``TRANSFORMERS_VERBOSITY``, which it reads when imported: importing it
    here would take seconds (and, before transformers 5, import PyTorch) in a command
    that may still refuse its input. Its loading bars are turned off where a model loads
    (:mod:`~opik_semantic_metrics.models.progress`).
    """
    from huggingface_hub.utils import disable_progress_bars  # type: ignore[attr-defined]
    from huggingface_hub.utils import logging as hub_logging

    disable_progress_bars()
    # huggingface_hub prints its warnings ("Retrying in 1s") with a handler of its own:
    # passed on to ours as well, each would print twice.
    hub_logging.disable_propagation()
    if "transformers" not in sys.modules:
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
        return
    from transformers.utils import logging as transformers_logging

    transformers_logging.set_verbosity_error()
    transformers_logging.disable_progress_bar()


def json_text(document: object) -> str:
    """``document`` as strict JSON: a NaN or infinite number as ``null``, since JSON has no
    such numbers (an undefined BERTScore with idf, an infinite t statistic)."""

    def ready(value: object) -> object:
        if isinstance(value, float) and not math.isfinite(value):
            return None
        if isinstance(value, dict):
            return {key: ready(item) for key, item in value.items()}
        if isinstance(value, list | tuple):
            return [ready(item) for item in value]
        return value

    return json.dumps(ready(document), indent=2, allow_nan=False)


def read_lines(path: str | Path) -> list[str]:
    """The lines of a UTF-8 text file, one text per line.

    Lines end at ``\\n``, ``\\r\\n`` or ``\\r`` only (other Unicode separators stay inside
    the text, so line counts match what editors and ``wc -l`` show); a final line break
    does not start an empty last line; a byte-order mark is ignored.

    Raises:
        CliError: The file is missing, unreadable, not UTF-8, or has no lines.
    """
    text = read_text(path, error=CliError)
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if lines[-1] == "":
        lines.pop()
    if not lines:
        raise CliError(f"{path} is empty: expected one text per line")
    return lines


def read_aligned(paths: Sequence[str | Path]) -> list[list[str]]:
    """Several files with one text per line each, checked to have equally many lines.

    Raises:
        CliError: A file cannot be read, or two files differ in line count.
    """
    columns = [read_lines(path) for path in paths]
    first = columns[0]
    for path, column in zip(paths[1:], columns[1:], strict=True):
        if len(column) != len(first):
            raise CliError(
                f"{path} has {counted(len(column), 'line')} but {paths[0]} has {len(first)}: "
                "the files must be aligned, one text per line"
            )
    return columns


def add_text_files(
    parser: argparse.ArgumentParser,
    *,
    candidates: str = "candidate",
    references: str = "reference",
    several_references: bool = False,
) -> None:
    """``-c/--candidates`` and ``-r/--references``: the aligned text files scored against
    each other (several reference files where ``several_references``)."""
    parser.add_argument("-c", "--candidates", required=True, help=f"{candidates} file, one a line")
    parser.add_argument(
        "-r",
        "--references",
        required=True,
        nargs="+" if several_references else None,
        help=f"{references} file{'(s)' if several_references else ''}, aligned",
    )


def add_json_option(parser: argparse.ArgumentParser, *, instead_of: str = "a table") -> None:
    """``--json``: the result as JSON (see :func:`json_text`), for ``compare-results``
    and other programs."""
    parser.add_argument("--json", action="store_true", help=f"print JSON instead of {instead_of}")


def score_lines(
    score: Callable[..., Sequence[_Result]],
    columns: Sequence[Sequence[Any] | None],
    args: argparse.Namespace,
) -> list[_Result]:
    """``score`` of aligned ``columns``, four batches of ``--batch-size`` lines a call,
    with the ``--progress`` bar; a ``None`` column is passed on as ``None``.

    Parts of several batches keep the engine's batches full and the bar moving.
    """
    results: list[_Result] = []
    count = len(next(column for column in columns if column is not None))
    for part in chunks(count, 4 * args.batch_size, progress=args.progress, unit="line"):
        results.extend(score(*(None if column is None else column[part] for column in columns)))
    return results


def chunks(count: int, size: int, *, progress: bool | None, unit: str) -> Iterator[slice]:
    """Slices of ``range(count)`` of ``size`` items, with a progress bar on stderr.

    ``progress`` None shows the bar only when stderr is a terminal. The finished bar
    stays, so the last line on stderr says how many items were done and how fast.
    """
    from tqdm import tqdm

    with tqdm(
        total=count,
        unit=unit,
        disable=None if progress is None else not progress,
        file=sys.stderr,
    ) as bar:
        for start in range(0, count, size):
            stop = min(start + size, count)
            yield slice(start, stop)
            bar.update(stop - start)


ENCODER_MODEL_HELP = "Hub id, local directory, or all-MiniLM-L6-v2 (the packaged offline model)"


def add_model_options(
    parser: argparse.ArgumentParser,
    *,
    default_model: str | None,
    default_batch_size: int = 64,
    model_help: str = ENCODER_MODEL_HELP,
) -> None:
    """``--model``, ``--device``, ``--dtype``, ``--batch-size`` and ``--progress``.

    ``--batch_size`` is accepted too: bert_score's and unbabel-comet's commands spell it
    so, and a command copied from either should run here unchanged.
    """
    parser.add_argument(
        "-m",
        "--model",
        default=default_model,
        help=model_help + (f"; default {default_model}" if default_model else ""),
    )
    parser.add_argument(
        "--device", default=None, help="cpu, cuda, cuda:1, ...; default: CUDA when available"
    )
    parser.add_argument(
        "--dtype",
        default=None,
        help="weight type: float32 (the default, exact), bf16, fp16, or fast (bfloat16 where "
        "the hardware computes it natively: faster, but scores move: BERTScore on MiniLM by "
        "up to about 2e-3, COMET by what its model makes of it, see the docs' GPU and fast "
        "mode page; compare systems scored with one type)",
    )
    parser.add_argument(
        "-b",
        "--batch-size",
        "--batch_size",
        type=int,
        default=default_batch_size,
        help=f"texts per forward pass (default {default_batch_size})",
    )
    parser.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="progress bars on stderr (default: when stderr is a terminal)",
    )


def engine_options(args: argparse.Namespace) -> dict[str, Any]:
    """The engine settings of :func:`add_model_options` but ``--model``: ``device``,
    ``dtype`` and ``batch_size``."""
    return {"device": args.device, "dtype": args.dtype, "batch_size": args.batch_size}


def check_rescaling(
    rescale: bool,
    lang: str | None,
    model: str | None,
    baseline_path: str | None = None,
    *,
    takes_baseline_path: bool = True,
) -> None:
    """Refuse, before PyTorch is imported and the model loads, a ``--rescale-with-baseline``
    that can find no baseline: no ``--lang`` and no ``--baseline-path``, a baseline file
    that does not exist, or a model without a packaged baseline in ``--lang``.

    The rule is the engine's (:meth:`~opik_semantic_metrics.bertscore.engine.BERTScoreEngine`
    reads ``rescale_baseline/<lang>/<model>.tsv``, and for a local model directory the
    ``<directory>.tsv`` beside it); here the options are named as the command spells them.

    Args:
        rescale, lang, model, baseline_path: The options of those names.
        takes_baseline_path: Whether the command has ``--baseline-path`` (the advice names
            it only then).

    Raises:
        CliError: No baseline can be found.
    """
    if not rescale:
        return
    own_file = " or --baseline-path FILE" if takes_baseline_path else ""
    if model is None:
        lang = lang or "en"  # bert_score's default model is that of English
    if baseline_path is not None:
        if not Path(baseline_path).is_file():
            raise CliError(f"--baseline-path {baseline_path} is no file")
        return
    if lang is None:
        raise CliError(
            "--rescale-with-baseline needs --lang (to find bert_score's baseline for the "
            f"model){own_file}"
        )
    from opik_semantic_metrics.models.registry import default_model_for_lang

    name = model if model is not None else default_model_for_lang(lang)
    directory = Path(name).expanduser()
    if directory.is_dir():
        beside = directory.parent / f"{directory.name}.tsv"
        if not beside.is_file():
            raise CliError(
                f"--rescale-with-baseline: a local model has no packaged baseline, and there "
                f"is no {beside} beside {name}" + (f"; pass{own_file[3:]}" if own_file else "")
            )
        return
    languages = sorted(p.name for p in PACKAGED_BASELINES.iterdir() if p.is_dir())
    if lang.lower() not in languages:
        raise CliError(
            f"--rescale-with-baseline: no baselines for --lang {lang}; there are baselines "
            f"for {', '.join(languages)}"
        )
    folder = PACKAGED_BASELINES / lang.lower()
    if not (folder / f"{name}.tsv").is_file():
        models = sorted(
            p.relative_to(folder).as_posix()[: -len(".tsv")] for p in folder.rglob("*.tsv")
        )
        raise CliError(
            f"--rescale-with-baseline: no baseline for {name} in --lang {lang}; there are "
            f"baselines for {', '.join(models)}" + (f"; or pass{own_file[3:]}" if own_file else "")
        )


#: bert_score's packaged rescaling baselines, ``<lang>/<model>.tsv``:
#: :data:`opik_semantic_metrics.bertscore.baseline.PACKAGED_BASELINES` (a test keeps the
#: two equal), written out so that the check needs no PyTorch.
PACKAGED_BASELINES = Path(__file__).resolve().parents[1] / "bertscore" / "rescale_baseline"


def check_writable_file(path: str | Path, option: str, *, makes_folders: bool = False) -> None:
    """Refuse, before a model loads, an output file that cannot be written: it names a
    folder, its folder is missing (unless the command ``makes_folders``) or is a file, or
    the folder is not writable.

    Raises:
        CliError: The file cannot be written there.
    """
    target = Path(path)
    if target.is_dir():
        raise CliError(f"{option} {path} is a folder: name a file")
    folder = target.parent
    if makes_folders:
        while not folder.exists() and folder != folder.parent:
            folder = folder.parent
    if folder.exists() and not folder.is_dir():
        raise CliError(f"{option} {path}: {folder} is a file, not a folder")
    if not folder.is_dir():
        raise CliError(f"{option} {path}: the folder {folder} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise CliError(f"{option} {path}: the folder {folder} is not writable")


def bertscore_engine(args: argparse.Namespace, **options: Any) -> BERTScoreEngine:
    """The BERTScore engine the model options and ``--num-layers``/``--lang`` ask for.

    Raises:
        CliError: Inconsistent settings (a layer out of range, rescaling without a
            baseline).
        ModelUnavailableError: The model cannot be had.
    """
    from opik_semantic_metrics.bertscore.engine import BERTScoreEngine

    # Built (and loaded) here, so that the model's loading time stays out of the progress bar.
    with refusals_as_cli_errors():
        return BERTScoreEngine(
            args.model, args.num_layers, lang=args.lang, **engine_options(args), **options
        )
