"""One real local Ray cluster (2 CPUs) for the whole distributed test session."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

ray = pytest.importorskip("ray", reason='needs the ray extra: pip install ".[ray]"')
pytest.importorskip("ray.data")


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[None]:
    """A local cluster of 2 CPUs, as a 2-core laptop has; started once."""
    # Token authentication (newer Ray releases) is off for a local test cluster.
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    if ray.is_initialized():
        ray.shutdown()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    ray.data.DataContext.get_current().enable_progress_bars = False
    yield
    ray.shutdown()
