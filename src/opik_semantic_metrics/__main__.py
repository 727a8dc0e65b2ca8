"""``python -m opik_semantic_metrics``: the ``opik-semantic-metrics`` command."""

import sys

from opik_semantic_metrics.cli.main import main

# Guarded so that tools walking the package (pydoc, Sphinx, pkgutil) can import it.
if __name__ == "__main__":
    sys.exit(main())
