"""``python -m opik_semantic_metrics.cli``."""

import sys

from opik_semantic_metrics.cli.main import main

sys.exit(main())
