"""``score-dataset``: a metric over a dataset file on a Ray cluster, written to a file.

Ray and the scoring module are imported when the command runs, so the rest of the
command line works without the ``ray`` extra.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from opik_semantic_metrics.catalog import METRICS as CATALOG
from opik_semantic_metrics.cli.common import (
    CliError,
    Command,
    check_rescaling,
    quiet_model_libraries,
    refusals_as_cli_errors,
)
from opik_semantic_metrics.cli.dataset_check import check_column_arguments, check_dataset_input

#: The metrics, by their command-line names (a metric's ``kind``, with hyphens).
METRICS = tuple(entry.command_name for entry in CATALOG)
#: Options that are metric settings: each is passed where the metric has that setting and
#: refused where it has not (``None`` and ``False`` are options not given).
_SETTING_OPTIONS = ("model", "dtype", "lang", "num_layers", "idf", "rescale_with_baseline")
#: Output suffixes written as one file; a path without a suffix (or ending in "/", or an
#: existing directory) is a directory of Parquet files; any other suffix is refused.
_SINGLE_FILES = (".parquet", ".jsonl", ".csv")
#: The model where neither ``-m`` nor ``--lang`` names one, for the metrics that take a
#: model (``command_line_settings``): BERTScore's default is the packaged MiniLM here, not
#: ``bert-score``'s roberta-large, so that a cluster job runs with no network and no 1.4 GB
#: download; ``--lang en`` chooses roberta-large.
MODEL_HELP = (
    "model: Hub id, local directory or all-MiniLM-L6-v2 (default: all-MiniLM-L6-v2, the "
    "packaged offline model, for bertscore and semantic-match, or with --lang that "
    "language's bert_score model, en: roberta-large; Unbabel/wmt22-comet-da for comet; "
    "answer-match loads none)"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("input", metavar="IN", help="dataset file or directory")
    parser.add_argument("--metric", choices=METRICS, default="bertscore", help="the metric")
    parser.add_argument("-m", "--model", default=None, help=MODEL_HELP)
    parser.add_argument(
        "--columns",
        default=None,
        help="metric argument=column, comma-separated (output=mt,reference=ref,input=src); "
        "arguments left out read the column of their own name; an argument the metric does "
        "not read is refused",
    )
    parser.add_argument(
        "--address",
        default=None,
        help="Ray cluster to join (auto: the one on this machine; ray://host:10001); "
        "default: RAY_ADDRESS, or a new local cluster",
    )
    parser.add_argument("--actors", type=int, default=None, help="actors (default: per GPU/CPUs)")
    parser.add_argument(
        "--cpus-per-actor", type=float, default=None, help="CPUs each actor reserves"
    )
    parser.add_argument(
        "--gpus-per-actor",
        type=float,
        default=None,
        help="GPUs each actor reserves (default: 1 where the cluster has GPUs; 0: CPUs)",
    )
    parser.add_argument(
        "--rows-per-batch", type=int, default=None, help="rows per call of the metric"
    )
    parser.add_argument("--dtype", default=None, help="weight type (float32, fast, ...)")
    parser.add_argument("--lang", default=None, help="BERTScore: language of the default model")
    parser.add_argument("--num-layers", type=int, default=None, help="BERTScore: layer")
    parser.add_argument(
        "--idf", action="store_true", help="BERTScore: idf from the whole reference column"
    )
    parser.add_argument(
        "--rescale-with-baseline", action="store_true", help="BERTScore: rescale (needs --lang)"
    )
    parser.add_argument(
        "--fit",
        action="store_true",
        help="SemanticMatch: fit idf and the paragraph baseline on the reference column",
    )
    parser.add_argument(
        "--out",
        required=True,
        help="output: a .parquet, .jsonl or .csv file, or a directory of Parquet files (a "
        "path without a suffix, or ending in /); every input column, the scores, an error "
        "column and <metric>_model, the model that scored",
    )


def parse_columns(text: str | None) -> dict[str, str]:
    """``output=mt,reference=ref`` as ``{"output": "mt", "reference": "ref"}``.

    Example:
        >>> parse_columns("output=mt, reference=ref")
        {'output': 'mt', 'reference': 'ref'}
    """
    if not text:
        return {}
    mapping = {}
    for part in text.split(","):
        argument, equals, column = part.partition("=")
        if not equals or not argument.strip() or not column.strip():
            raise CliError(f"Expected --columns as argument=column,..., got {part.strip()!r}.")
        mapping[argument.strip()] = column.strip()
    return mapping


def _metric_class(metric: str) -> Any:
    from opik_semantic_metrics.metrics.base import PackageMetric

    return PackageMetric.registered()[metric.replace("-", "_")]


def _settings(args: argparse.Namespace) -> dict[str, Any]:
    """The metric settings the options give, checked before Ray starts or a model loads.

    Raises:
        CliError: An option that is no setting of the metric.
    """
    import inspect

    metric_class = _metric_class(args.metric)
    accepted = inspect.signature(metric_class).parameters
    settings: dict[str, Any] = {}
    for option in _SETTING_OPTIONS:
        value = getattr(args, option)
        if value is None or value is False:
            continue
        if option not in accepted:
            flag = "--" + option.replace("_", "-")
            raise CliError(f"{flag} is no setting of --metric {args.metric}.")
        settings[option] = value
    offline_model = metric_class.entry.command_line_model
    if offline_model and settings.get("model") is None and settings.get("lang") is None:
        settings["model"] = offline_model  # a command line works offline by default
    return settings


def _metric(args: argparse.Namespace, settings: dict[str, Any] | None = None) -> Any:
    """The metric the options ask for (``settings``: :func:`_settings` of them, checked
    already), built here on the CPU (actors build their own).

    Raises:
        CliError: An option that is no setting of the metric.
    """
    if settings is None:
        settings = _settings(args)
    return _metric_class(args.metric).untracked(settings, "cpu")


def output_path(text: str) -> Path:
    """``--out`` checked before anything runs: a file of a suffix written as one file, or
    a directory (no suffix, a trailing ``/``, or an existing directory).

    Raises:
        CliError: Any other suffix (``x.txt`` would have become a directory named so, at
            the end of the whole run).

    Example:
        >>> output_path("scored.csv"), output_path("scored")
        (PosixPath('scored.csv'), PosixPath('scored'))
    """
    out = Path(text)
    if out.suffix.lower() in _SINGLE_FILES or not out.suffix:
        return out
    if text.endswith(("/", "\\")) or out.is_dir():
        return out
    raise CliError(
        f"--out {text}: expected a .parquet, .jsonl or .csv file, or a directory of Parquet "
        f"files (a path without a suffix, or ending in /); {out.suffix} is none of these."
    )


def model_column(metric: str) -> str:
    """The output column naming the model that scored: ``<metric name>_model``, beside the
    metric's score and error columns (a dataset's own ``model`` column, often the system
    that wrote the outputs, is left alone)."""
    return f"{metric.replace('-', '_')}_model"


def run(args: argparse.Namespace) -> int:
    # Before Ray starts (tens of seconds) or a model loads: options that cannot work, a
    # file of another kind, or a missing column.
    columns = parse_columns(args.columns)
    check_column_arguments(args.metric, columns)
    out = output_path(args.out)
    names = check_dataset_input(args.input, args.metric, columns)
    if names is not None and model_column(args.metric) in names:
        raise CliError(
            f"{args.input} already has a column {model_column(args.metric)!r}, which "
            "score-dataset writes: rename it."
        )
    if args.metric == "bertscore":
        # The packaged MiniLM where neither -m nor --lang chooses (command_line_settings).
        model = args.model if args.model or args.lang else "all-MiniLM-L6-v2"
        check_rescaling(args.rescale_with_baseline, args.lang, model, takes_baseline_path=False)
    try:
        import ray
        import ray.data
    except ImportError as error:
        raise CliError(
            f'score-dataset needs the ray extra: pip install "opik-semantic-metrics[ray]" '
            f"({error})."
        ) from error
    settings = _settings(args)  # imports the metrics: Opik and PyTorch, no model yet
    quiet_model_libraries()
    from opik_semantic_metrics.distributed import score_dataset, scoring_summary

    if not ray.is_initialized():
        ray.init(address=args.address)
    with refusals_as_cli_errors():
        metric = _metric(args, settings)
        if args.fit and metric.reference_fit() is None:
            raise CliError(f"--fit is no setting of --metric {args.metric}.")
        scored = score_dataset(
            args.input,
            metric,
            columns=columns,
            num_actors=args.actors,
            cpus_per_actor=args.cpus_per_actor,
            gpus_per_actor=args.gpus_per_actor,
            batch_size=args.rows_per_batch,
            fit_on_references=args.fit,
        )
    engine = getattr(metric, "engine", None)
    model_name = getattr(engine, "model_name", None) if metric.uses_model else None
    _write(scored, out, {model_column(args.metric): model_name} if model_name else {})
    # score_dataset prints the summary on stderr under Ray's progress bars; printed here
    # too, it showed twice in a terminal. Said once, on stderr, where the bars are.
    if not ray.data.DataContext.get_current().enable_progress_bars:
        print(scoring_summary(scored), file=sys.stderr)
    print(f"Wrote {out}.")
    return 0


def _write(scored: Any, out: Path, constants: dict[str, str]) -> None:
    """One file for a .parquet/.jsonl/.csv path (written block by block), else Ray's own
    directory of Parquet files; ``constants`` added as columns of one value."""
    import pyarrow as pa
    import pyarrow.csv as pa_csv
    import pyarrow.parquet as pq

    def with_constants(batch: pa.Table) -> pa.Table:
        for name, value in constants.items():
            batch = batch.append_column(name, pa.array([value] * batch.num_rows, pa.string()))
        return batch

    suffix = out.suffix.lower()
    if suffix not in _SINGLE_FILES:
        scored.map_batches(with_constants, batch_format="pyarrow").write_parquet(str(out))
        return
    out.parent.mkdir(parents=True, exist_ok=True)
    batches = (
        with_constants(batch)
        for batch in scored.iter_batches(batch_format="pyarrow", batch_size=None)
    )
    if suffix == ".parquet":
        writer: pq.ParquetWriter | None = None
        try:
            for batch in batches:
                if writer is None:
                    writer = pq.ParquetWriter(str(out), batch.schema)
                elif batch.schema != writer.schema:
                    batch = batch.cast(writer.schema)
                writer.write_table(batch)
        finally:
            if writer is not None:
                writer.close()
        return
    if suffix == ".csv":
        pa_csv.write_csv(pa.concat_tables(list(batches), promote_options="default"), str(out))
        return
    import json

    with out.open("w", encoding="utf-8") as file:
        for batch in batches:
            for row in batch.to_pylist():
                file.write(json.dumps(row, ensure_ascii=False) + "\n")


COMMAND = Command(
    "score-dataset",
    help="score a Parquet/JSONL/CSV dataset on a Ray cluster",
    description="Score every row of a dataset (Parquet, JSON Lines or CSV; a file or a "
    "directory) with a metric on a pool of Ray actors, and write every input column "
    "with one column per score, an error column and a column naming the model. Without "
    "-m, BERTScore uses the packaged all-MiniLM-L6-v2 (bert-score's default is "
    "roberta-large: pass --lang en or -m roberta-large for it). Needs the ray extra: "
    'pip install "opik-semantic-metrics[ray]".',
    add_arguments=add_arguments,
    run=run,
    # Its input is checked before the model libraries are imported (run).
    loads_models=False,
)
