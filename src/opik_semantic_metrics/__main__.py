"""``python -m opik_semantic_metrics``: the ``opik-semantic-metrics`` command."""

import sys

from opik_semantic_metrics.cli.main import main

sys.exit(main())
