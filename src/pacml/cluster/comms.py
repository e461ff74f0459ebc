"""Transfer times on RAMP: one-to-one flows and the RAMP all-reduce collective.

Pure functions of sizes (bytes) and the cluster config; results in physical seconds.
Formulas from ddls.md 3.3 (ddls ``actions/utils.py``).
"""

from __future__ import annotations

import math

from pacml.config import ClusterConfig
from pacml.errors import InfeasibleClusterError

BYTES_PER_COMPUTE = 2
"""ddls' ``bytes_per_comp`` in the reduction model."""
MEMORY_FREQUENCY = 2e12
"""ddls A100 ``MEM_FRQ`` (device memory frequency) in the reduction model."""
PEAK_COMPUTE = 130e12
"""ddls A100 peak computational power pi in the reduction model."""


def transfer_time_s(size_bytes, bandwidth_bytes_per_s: float, cfg: ClusterConfig):
    """The one transfer formula: latency + 2 x I/O latency + circuit reconfiguration + size /
    bandwidth (sizes may be a numpy array). Every point-to-point transfer and every step of a
    collective is one such transfer, so each pays ``cfg.reconfiguration_s`` once (0 in ddls)."""
    return cfg.propagation_latency_s + 2 * cfg.io_latency_s + cfg.reconfiguration_s + size_bytes / bandwidth_bytes_per_s


def one_to_one_time_s(size_bytes: float, cfg: ClusterConfig) -> float:
    """A one-to-one flow over one channel; 0 for an empty transfer."""
    if size_bytes <= 0:
        return 0.0
    return transfer_time_s(size_bytes, cfg.channel_bandwidth_bytes_per_s, cfg)


def reduction_time_s(data_bytes: float, n: int) -> float:
    """Time to add up ``data_bytes`` spread over n devices (ddls' roofline reduction model)."""
    n_op = math.ceil(math.log2(n))
    ops = n_op * (data_bytes / n) / BYTES_PER_COMPUTE
    intensity = n_op / ((n + 1) * BYTES_PER_COMPUTE)
    return ops / min(MEMORY_FREQUENCY * intensity, PEAK_COMPUTE)


def all_reduce_time_s(total_bytes: float, groups: int, racks: int, servers: int, cfg: ClusterConfig) -> float:
    """RAMP all-reduce of ``total_bytes`` over a block touching ``groups`` distinct comm-group
    indices, ``racks`` distinct rack indices and ``servers`` distinct server indices.

    Reduce-scatter then all-gather over the hierarchy sub = [G, min(G, d), Rk, ceil(d/x)]
    with x = C transceivers; total = 2 x communication + reduction compute. ddls B11
    (bandwidth divided by C twice) and B12 (one contending rack) are reproduced; the first
    only while ``cfg.collective_bandwidth_per_channel_divided``.
    """
    x = cfg.communication_groups
    per_tx = (
        cfg.channel_bandwidth_bytes_per_s / x
        if cfg.collective_bandwidth_per_channel_divided
        else cfg.channel_bandwidth_bytes_per_s
    )
    contending = 1  # ddls B12: the contending-rack count is always 1
    subgroups = (groups, min(groups, servers), racks, math.ceil(servers / x))
    comm = comp = 0.0
    message = total_bytes
    for k, sub in enumerate(subgroups):
        message = math.ceil(message / sub)
        if sub == 1:
            continue
        eff = min(x // contending, x // (sub - 1))
        if eff == 0:
            raise InfeasibleClusterError(
                f"all-reduce over {sub} peers exceeds the {x} transceivers per node (step {k}); "
                "reduce cluster.servers_per_rack or raise cluster.communication_groups"
            )
        comm += transfer_time_s(message, eff * per_tx, cfg)
        comp += reduction_time_s(message * sub, sub)
    return 2 * comm + comp
