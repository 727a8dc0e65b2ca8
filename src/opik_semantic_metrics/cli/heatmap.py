"""``heatmap``: one pair's token-similarity matrix, drawn to a PNG file."""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any

from opik_semantic_metrics.cli import common
from opik_semantic_metrics.cli.common import CliError
from opik_semantic_metrics.output_files import replace_file

#: Beyond print resolution.
MAX_DPI = 2400
#: Drawing takes about 36 bytes a pixel: this bound keeps a PNG's drawing under about
#: 5 GB of memory and still lets the longest pair a model takes (105 x 104 inches) be
#: drawn at the default 100 dpi (``docs/design/resource-bounds.md``). The figure grows
#: with the texts, 0.2 inch a token.
MAX_PIXELS = 120_000_000


def add_arguments(parser: argparse.ArgumentParser) -> None:
    candidate = parser.add_mutually_exclusive_group(required=True)
    candidate.add_argument("--candidate", help="the candidate text")
    candidate.add_argument("-c", "--candidates", help="candidate file, one text a line")
    reference = parser.add_mutually_exclusive_group(required=True)
    reference.add_argument("--reference", help="the reference text")
    reference.add_argument("-r", "--references", help="reference file, one text a line")
    parser.add_argument(
        "--line", type=int, default=1, help="line of the files to draw, counted from 1"
    )
    parser.add_argument("-o", "--output", required=True, help="PNG file to write")
    # --num_layers: bert_score's spelling (its bert-score-show draws this heatmap too).
    parser.add_argument(
        "-l", "--num-layers", "--num_layers", type=int, default=None, help="layer to use"
    )
    parser.add_argument("--lang", default=None, help="language of the default model")
    parser.add_argument("--dpi", type=int, default=100, help="resolution of the PNG")
    common.add_model_options(parser, default_model=None)


def _texts(args: argparse.Namespace) -> tuple[str, str]:
    """The candidate and the reference, given as texts or as line ``--line`` of files."""
    paths = [path for path in (args.candidates, args.references) if path is not None]
    # Two files must be aligned, as in every command: line 2 of files shifted by one
    # line would draw a pair that was never a pair.
    lines_of = dict(zip(paths, common.read_aligned(paths), strict=True)) if paths else {}
    texts = []
    for text, path in ((args.candidate, args.candidates), (args.reference, args.references)):
        if text is not None:
            texts.append(text)
            continue
        lines = lines_of[path]
        if not 1 <= args.line <= len(lines):
            raise CliError(
                f"--line {args.line} is outside {path}, which has "
                f"{common.counted(len(lines), 'line')}"
            )
        texts.append(lines[args.line - 1])
    candidate, reference = texts
    return candidate, reference


def run(args: argparse.Namespace) -> int:
    candidate, reference = _texts(args)
    output = Path(args.output)
    if output.suffix.lower() != ".png":
        raise CliError(f"--output must name a .png file, got {output}")
    if not 1 <= args.dpi <= MAX_DPI:
        raise CliError(f"--dpi must be between 1 and {MAX_DPI}, got {args.dpi}")
    # Before the model loads (seconds); the write itself still reports what goes wrong.
    common.check_writable_file(output, "--output")
    try:
        from opik_semantic_metrics.report.plots import figure_png, similarity_heatmap
    except ImportError as error:
        raise CliError(str(error)) from error
    engine = common.bertscore_engine(args)
    candidate_tokens, reference_tokens, matrix = engine.token_similarity(candidate, reference)
    [result] = engine.score([candidate], [reference])
    title = f"BERTScore F1 {result.f1:.3f} (P {result.precision:.3f}, R {result.recall:.3f})"
    figure = similarity_heatmap(candidate_tokens, reference_tokens, matrix, title=title)
    _check_pixels(figure.get_size_inches(), args.dpi, len(candidate_tokens), len(reference_tokens))
    try:
        png = figure_png(figure, dpi=args.dpi)
    except MemoryError as error:
        raise CliError(f"not enough memory to draw the PNG at --dpi {args.dpi}") from error
    try:
        replace_file(output, png)  # a failed write leaves the old image whole
    except OSError as error:
        raise CliError(f"cannot write {output}: {error.strerror or error}") from error
    cut = [side for side in ("candidate", "reference") if getattr(result, f"{side}_truncated")]
    limit = engine.encoder.max_length
    print(
        f"{output}: {len(candidate_tokens)} x {len(reference_tokens)} tokens, {title}, "
        f"{engine.model_name} L{engine.num_layers}"
        + (f" ({' and '.join(cut)} cut at the model's {limit} tokens)" if cut else "")
    )
    return 0


def _check_pixels(size_inches: Any, dpi: int, rows: int, columns: int) -> None:
    """Refuse, before drawing, a PNG that would take gigabytes of memory."""
    width, height = (float(inches) for inches in size_inches)
    if width * height * dpi * dpi <= MAX_PIXELS:
        return
    largest_dpi = math.floor(math.sqrt(MAX_PIXELS / (width * height)))
    raise CliError(
        f"{rows} x {columns} tokens at --dpi {dpi} would be a "
        f"{round(width * dpi)} x {round(height * dpi)} pixel PNG, over the "
        f"{MAX_PIXELS:,} pixels this command draws; use --dpi {largest_dpi} or less"
    )


COMMAND = common.Command(
    "heatmap",
    help="draw one pair's token similarity matrix to a PNG",
    description="The cosine similarity of every candidate token with every reference "
    "token (the matrix BERTScore's greedy matching reads), as a heatmap with each "
    "candidate token's best match framed. Texts come from the command line or from "
    "line --line of two files.",
    add_arguments=add_arguments,
    run=run,
)
