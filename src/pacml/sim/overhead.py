"""Network overhead against the number of workers (the paper's first figure).

A job graph partitioned at each degree is placed on an empty cluster and one training step is
simulated twice: on the configured network, and on the same cluster with an ideal network
(no propagation, I/O or reconfiguration latency, unlimited bandwidth; the collectives'
reduction compute stays, it is work, not network). The network overhead is the share of the
step that the network costs: 1 - ideal step time / step time. Pure: no I/O, no randomness.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

from pacml.config import Config
from pacml.graphs.opgraph import OpGraph

OVERHEAD_COLUMNS = ("model", "degree", "workers", "step_time_s", "ideal_step_time_s", "network_overhead")


def ideal_network(cfg: Config) -> Config:
    """``cfg`` with a network that costs nothing: zero latencies, unlimited bandwidth."""
    cluster = dataclasses.replace(
        cfg.cluster,
        node_bandwidth_bytes_per_s=math.inf,
        propagation_latency_s=0.0,
        io_latency_s=0.0,
        reconfiguration_s=0.0,
    )
    return dataclasses.replace(cfg, cluster=cluster)


def network_overhead(graphs: Sequence[OpGraph], cfg: Config) -> list[dict]:
    """One row per (graph, degree the cluster can place it at on its own): ``OVERHEAD_COLUMNS``.
    Degrees are the actions 1..max degree; an action the partitioner rounds to a degree
    already seen is left out."""
    from pacml.sim.experiment import ClusterModel

    real, ideal = ClusterModel(graphs, cfg), ClusterModel(graphs, ideal_network(cfg))
    empty = real.topology.all_mask
    rows = []
    for g, graph in enumerate(real.graphs):
        seen = set()
        for action in range(1, real.max_degree + 1):
            degree = int(real.partitioned(g, action).degree.max())
            alloc = real.allocate(g, action, empty)
            if degree in seen or alloc is None:
                continue
            seen.add(degree)
            # placement reads no network key: the ideal network places the job on the same servers
            free = ideal.allocate(g, action, empty)
            step, ideal_step = alloc.step.step_time_s, free.step.step_time_s
            rows.append(
                {
                    "model": graph.name,
                    "degree": degree,
                    "workers": alloc.step.num_workers,
                    "step_time_s": step,
                    "ideal_step_time_s": ideal_step,
                    "network_overhead": 1.0 - ideal_step / step,  # > 0: the model refuses a job of no time
                }
            )
    return rows
