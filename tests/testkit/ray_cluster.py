"""A real two-node Ray cluster on this machine for the distributed tests (`ray.cluster_utils.Cluster`: a head and
one more node, one CPU each, no dashboard), with this process connected to it as the driver."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest


@contextmanager
def two_node_cluster(env: dict[str, str] | None = None) -> Iterator[Any]:
    """Start the cluster with `env` set in this process (the nodes' processes inherit it), connect, and take it
    all down afterwards. Yields the `Cluster` (its `address`, `add_node`, `remove_node`)."""
    import ray
    from ray.cluster_utils import Cluster

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RAY_USAGE_STATS_ENABLED", "0")
        for k, v in (env or {}).items():
            mp.setenv(k, v)
        c = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
        c.add_node(num_cpus=1)
        c.wait_for_nodes()
        ray.init(address=c.address, include_dashboard=False, log_to_driver=False, configure_logging=False)
        try:
            yield c
        finally:
            ray.shutdown()
            c.shutdown()
