"""``bert-score``: BERTScore of a candidate file against one or more reference files.

The options follow bert_score's own ``bert-score`` command (``-c``, ``-r`` with several
files, ``--lang``, ``-m``, ``-l``, ``--idf``, ``--rescale-with-baseline``), and the
scores equal its ``batch_size=1`` values (see the engine). Its underscore spellings
(``--num_layers``, ``--batch_size``, ``--rescale_with_baseline``, ``--baseline_path``,
``--use_fast_tokenizer``) are accepted beside ours, so that a command copied from
bert_score runs unchanged (its ``-s`` aside: every line is printed anyway). As there, the
fast tokenizer is the default, and the printed hash is the one bert_score prints.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from opik_semantic_metrics.cli import common
from opik_semantic_metrics.report.tables import Table

if TYPE_CHECKING:
    from opik_semantic_metrics.bertscore.engine import BERTScoreEngine, BERTScoreResult

_SCORES = ("precision", "recall", "f1")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    common.add_text_files(parser, several_references=True)
    parser.add_argument(
        "-l", "--num-layers", "--num_layers", type=int, default=None, help="layer to use"
    )
    parser.add_argument("--lang", default=None, help="language of the default model/baseline")
    parser.add_argument("--idf", action="store_true", help="idf weights from the references")
    parser.add_argument(
        "--rescale-with-baseline",
        "--rescale_with_baseline",
        action="store_true",
        help="rescale with a baseline",
    )
    parser.add_argument(
        "--baseline-path", "--baseline_path", default=None, help="a baseline file of your own"
    )
    # bert_score's command loads the fast tokenizer unless given --use_fast_tokenizer (an
    # argparse store_false), and its hash says so; the same default gives the same hash.
    parser.add_argument(
        "--slow-tokenizer",
        "--use_fast_tokenizer",
        dest="slow_tokenizer",
        action="store_true",
        help="load transformers' Python tokenizer class instead of the fast one (bert_score's "
        "command spells this --use_fast_tokenizer)",
    )
    common.add_json_option(parser)
    common.add_model_options(parser, default_model=None)


def run(args: argparse.Namespace) -> int:
    candidates, *reference_columns = common.read_aligned([args.candidates, *args.references])
    # Before PyTorch is imported and the model loads (seconds).
    common.check_rescaling(args.rescale_with_baseline, args.lang, args.model, args.baseline_path)
    references = [list(group) for group in zip(*reference_columns, strict=True)]
    engine = common.bertscore_engine(
        args,
        idf=args.idf,
        rescale_with_baseline=args.rescale_with_baseline,
        baseline_path=args.baseline_path,
        use_fast_tokenizer=not args.slow_tokenizer,
    )
    if args.idf:
        engine.fit_idf(references)
    results = common.score_lines(engine.score, [candidates, references], args)
    means = {key: sum(getattr(r, key) for r in results) / len(results) for key in _SCORES}
    if args.json:
        print(common.json_text(_as_json(args, engine, results, means)))
    else:
        rows = tuple(
            (str(line), *(_fixed(getattr(result, key)) for key in _SCORES))
            for line, result in enumerate(results, start=1)
        )
        print(Table(("line", "P", "R", "F1"), rows).to_text())
        print(
            f"{engine.hash} P: {_fixed(means['precision'])} R: {_fixed(means['recall'])} "
            f"F1: {_fixed(means['f1'])}"
        )
    return 0


def _fixed(value: float) -> str:
    return f"{value:.6f}"


def _as_json(
    args: argparse.Namespace,
    engine: BERTScoreEngine,
    results: list[BERTScoreResult],
    means: dict[str, float],
) -> dict[str, Any]:
    from opik_semantic_metrics.records import bertscore_record

    return {
        "metric": "bertscore",
        **bertscore_record(engine),
        "candidates": args.candidates,
        "references": args.references,
        "mean": means,
        "scores": [
            {
                "line": line,
                **{key: getattr(result, key) for key in _SCORES},
                "best_reference": result.best_reference,
                "truncated": result.candidate_truncated or result.reference_truncated,
                "empty": result.candidate_empty or result.reference_empty,
            }
            for line, result in enumerate(results, start=1)
        ],
    }


COMMAND = common.Command(
    "bert-score",
    help="BERTScore of candidate lines against reference lines",
    description="BERTScore of each candidate line against the same line of every "
    "reference file (several files: the best reference counts, per score), with the "
    "means. Without --model, the default model of --lang (en: roberta-large L17).",
    add_arguments=add_arguments,
    run=run,
)
