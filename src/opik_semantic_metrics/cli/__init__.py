"""The ``opik-semantic-metrics`` command: score files, compare results, draw heatmaps.

Each subcommand parses its arguments, calls the library and prints; nothing here
computes a score itself. See :func:`opik_semantic_metrics.cli.main.main`.
"""

from opik_semantic_metrics.cli.main import main

__all__ = ["main"]
