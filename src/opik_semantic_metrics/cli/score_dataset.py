"""``score-dataset``: a metric over a dataset file on a Ray cluster, written to a file.

Ray and the scoring module are imported when the command runs, so the rest of the
command line works without the ``ray`` extra.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from opik_semantic_metrics.catalog import METRICS as CATALOG
from opik_semantic_metrics.cli.common import (
    CliError,
    Command,
    quiet_model_libraries,
    refusals_as_cli_errors,
)
from opik_semantic_metrics.cli.dataset_check import check_dataset_input

#: The metrics, by their command-line names (a metric's ``kind``, with hyphens).
METRICS = tuple(entry.command_name for entry in CATALOG)
#: Options that are metric settings: each is passed where the metric has that setting and
#: refused where it has not (``None`` and ``False`` are options not given).
_SETTING_OPTIONS = ("model", "dtype", "lang", "num_layers", "idf", "rescale_with_baseline")
#: Output suffixes written as one file; any other path is a directory of Parquet files.
_SINGLE_FILES = (".parquet", ".jsonl", ".csv")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("input", metavar="IN", help="dataset file or directory")
    parser.add_argument("--metric", choices=METRICS, default="bertscore", help="the metric")
    parser.add_argument(
        "-m", "--model", default=None, help="model (Hub id, directory or all-MiniLM-L6-v2)"
    )
    parser.add_argument(
        "--columns",
        default=None,
        help="metric argument=column, comma-separated (output=mt,reference=ref,input=src); "
        "arguments left out read the column of their own name",
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
        "--out", required=True, help="output: .parquet, .jsonl or .csv file, or a directory"
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


def _metric(args: argparse.Namespace) -> Any:
    """The metric the options ask for, built here on the CPU (actors build their own).

    Raises:
        CliError: An option that is no setting of the metric.
    """
    import inspect

    from opik_semantic_metrics.metrics.base import PackageMetric

    metric_class = PackageMetric.registered()[args.metric.replace("-", "_")]
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
    return metric_class.untracked(settings, "cpu")


def run(args: argparse.Namespace) -> int:
    # Before Ray starts (tens of seconds): a file of another kind, or a missing column.
    check_dataset_input(args.input, args.metric, parse_columns(args.columns))
    quiet_model_libraries()
    try:
        import ray

        from opik_semantic_metrics.distributed import score_dataset, scoring_summary
    except ImportError as error:
        raise CliError(str(error)) from error
    columns = parse_columns(args.columns)
    out = Path(args.out)
    if not ray.is_initialized():
        ray.init(address=args.address)
    with refusals_as_cli_errors():
        metric = _metric(args)
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
    _write(scored, out)
    print(scoring_summary(scored))
    print(f"Wrote {out}.")
    return 0


def _write(scored: Any, out: Path) -> None:
    """One file for a .parquet/.jsonl/.csv path (written block by block), else Ray's own
    directory of Parquet files."""
    import pyarrow as pa
    import pyarrow.csv as pa_csv
    import pyarrow.parquet as pq

    suffix = out.suffix.lower()
    if suffix not in _SINGLE_FILES:
        scored.write_parquet(str(out))
        return
    out.parent.mkdir(parents=True, exist_ok=True)
    batches = scored.iter_batches(batch_format="pyarrow", batch_size=None)
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
    "with one column per score and an error column. Needs the ray extra: "
    'pip install "opik-semantic-metrics[ray]".',
    add_arguments=add_arguments,
    run=run,
    # Its input is checked before the model libraries are imported (run).
    loads_models=False,
)
