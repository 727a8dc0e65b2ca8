"""Log a comparison to a Comet offline experiment (``comet_ml.OfflineExperiment``).

The experiment is written to a local zip that ``comet upload <zip>`` sends later, so a
run made with no network (the offline demo) can still end up in Comet. ``comet_ml`` is
an optional dependency: ``pip install 'opik-semantic-metrics[comet]'``.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from opik_semantic_metrics.compare.experiments import MetricSummary
from opik_semantic_metrics.report.tables import Table

#: Comet's automatic logging that has nothing to do with a comparison, switched off.
_QUIET: dict[str, Any] = {
    "log_code": False,
    "log_graph": False,
    "auto_param_logging": False,
    "auto_metric_logging": False,
    "parse_args": False,
    "auto_output_logging": False,
    "log_env_details": False,
    "log_git_metadata": False,
    "log_git_patch": False,
    "log_env_gpu": False,
    "log_env_host": False,
    "log_env_cpu": False,
    "log_env_network": False,
    "log_env_disk": False,
    "display_summary_level": 0,
}


def log_comet_offline(
    directory: str | Path,
    *,
    project_name: str,
    experiment_name: str,
    parameters: Mapping[str, Any],
    summaries: Sequence[MetricSummary],
    tables: Mapping[str, Table],
    images: Mapping[str, bytes],
    html: str | None = None,
) -> Path:
    """Write one Comet offline experiment holding a comparison.

    Args:
        directory: Where the experiment's zip is written (created if missing).
        project_name: Comet project to upload to later.
        experiment_name: The experiment's name.
        parameters: Settings of the run (models, data, options).
        summaries: Logged as metrics ``<system>/<metric>/mean``, ``.../low``, ``.../high``.
        tables: File name (``.csv``) -> table.
        images: Image name -> PNG bytes.
        html: A page for Comet's HTML tab (the HTML report).

    Returns:
        The zip file to give to ``comet upload``.

    Raises:
        ImportError: ``comet_ml`` is not installed.
    """
    try:
        import comet_ml
    except ImportError as error:
        raise ImportError(
            "Logging to Comet needs comet_ml: pip install 'opik-semantic-metrics[comet]'."
        ) from error
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    experiment = comet_ml.OfflineExperiment(
        project_name=project_name, offline_directory=str(directory), **_QUIET
    )
    experiment.set_name(experiment_name)
    experiment.log_parameters(dict(parameters))
    for summary in summaries:
        for system, interval in summary.intervals.items():
            prefix = f"{system}/{summary.metric}"
            experiment.log_metrics(
                {
                    f"{prefix}/mean": interval.mean,
                    f"{prefix}/low": interval.low,
                    f"{prefix}/high": interval.high,
                }
            )
    for filename, table in tables.items():
        experiment.log_table(
            filename, tabular_data=[list(row) for row in table.rows], headers=list(table.headers)
        )
    for name, png in images.items():
        experiment.log_image(io.BytesIO(png), name=name)
    if html is not None:
        experiment.log_html(html)
    experiment.end()
    return directory / f"{experiment.id}.zip"
