"""The RAMP topology: C communication groups x R racks x S servers, one worker per server.

Servers are numbered in nested (c, r, s) order: ``index = (c * R + r) * S + s``. The
network is a full mesh with single-hop channels (ddls.md 3.1). Block shapes follow the
RAMP first-fit placer (ddls.md 3.4): a degree is placeable only on a "symmetric" block.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from pacml.cluster.comms import all_reduce_time_s
from pacml.config import ClusterConfig
from pacml.errors import ConfigError

Shape = tuple[int, int, int]


def block_shapes(n: int, C: int, R: int, S: int) -> tuple[Shape, ...]:
    """Candidate block shapes (c, r, s) for n sub-ops, in the placer's order (ddls.md 3.4).

    For each divisor k of n (ascending), with m = n / k: (sqrt m, sqrt m, k) when m is a
    square with sqrt m <= C, R and k <= S; then (m, 1, k) and (m, k, 1) when m <= C, R and
    k <= S; then the diagonal (n, n, -1) (servers (c0+i, r0+i, s0)); then (n, 1, 1).
    Shapes that do not fit inside (C, R, S) are dropped, duplicates keep their first place.
    """
    out: list[Shape] = []

    def add(shape: Shape) -> None:
        c, r, s = shape
        fits = c <= C and r <= R and s <= S  # the diagonal's s = -1 always fits
        if fits and shape not in out:
            out.append(shape)

    if n == 1:
        return ((1, 1, 1),)
    for k in range(1, n + 1):
        if n % k:
            continue
        m = n // k
        root = math.isqrt(m)
        if root * root == m and root <= C and root <= R and k <= S:
            add((root, root, k))
        if m <= C and m <= R and k <= S:
            add((m, 1, k))
            add((m, k, 1))
    add((n, n, -1))
    add((n, 1, 1))
    return tuple(out)


@dataclass(frozen=True, eq=False)
class RampTopology:
    """Immutable RAMP cluster geometry with its precomputed first-fit block candidates."""

    cfg: ClusterConfig

    def __post_init__(self) -> None:
        for key in ("communication_groups", "racks_per_group", "servers_per_rack"):
            if getattr(self.cfg, key) < 1:
                raise ConfigError(f"cluster.{key}", getattr(self.cfg, key), "must be >= 1")

    @property
    def C(self) -> int:
        return self.cfg.communication_groups

    @property
    def R(self) -> int:
        return self.cfg.racks_per_group

    @property
    def S(self) -> int:
        return self.cfg.servers_per_rack

    @property
    def num_workers(self) -> int:
        return self.cfg.num_workers

    def index(self, c: int, r: int, s: int) -> int:
        return (c * self.R + r) * self.S + s

    @cached_property
    def coords(self) -> np.ndarray:
        """(num_workers, 3) int array of each server's (c, r, s)."""
        idx = np.arange(self.num_workers)
        out = np.stack([idx // (self.R * self.S), (idx // self.S) % self.R, idx % self.S], axis=1)
        out.setflags(write=False)
        return out

    @cached_property
    def _all_reduce_memo(self) -> dict[tuple[float, int, int, int], float]:
        return {}

    def all_reduce_time_s(self, total_bytes: float, groups: int, racks: int, servers: int) -> float:
        """`pacml.cluster.comms.all_reduce_time_s` on this cluster, memoised: a pure function
        of its arguments that every step simulation asks for the same few sizes."""
        key = (total_bytes, groups, racks, servers)
        memo = self._all_reduce_memo
        t = memo.get(key)
        if t is None:
            t = memo[key] = all_reduce_time_s(total_bytes, groups, racks, servers, self.cfg)
        return t

    def shapes(self, n: int) -> tuple[Shape, ...]:
        return block_shapes(n, self.C, self.R, self.S)  # () when n > num_workers: no shape fits

    @cached_property
    def _blocks(self) -> dict[int, tuple[tuple[int, tuple[int, ...]], ...]]:
        return {}

    def blocks(self, n: int) -> tuple[tuple[int, tuple[int, ...]], ...]:
        """First-fit candidates for n sub-ops: (bitmask, servers in sub-op order), scan order."""
        cache = self._blocks
        if n not in cache:
            out = []
            for cs, rs, ss in self.shapes(n):
                if ss == -1:  # the diagonal
                    for c0 in range(self.C - cs + 1):
                        for r0 in range(self.R - rs + 1):
                            for s0 in range(self.S):
                                servers = tuple(self.index(c0 + i, r0 + i, s0) for i in range(n))
                                out.append((_mask(servers), servers))
                    continue
                for c0 in range(self.C - cs + 1):
                    for r0 in range(self.R - rs + 1):
                        for s0 in range(self.S - ss + 1):
                            servers = tuple(
                                self.index(c, r, s)
                                for c in range(c0, c0 + cs)
                                for r in range(r0, r0 + rs)
                                for s in range(s0, s0 + ss)
                            )
                            out.append((_mask(servers), servers))
            cache[n] = tuple(out)
        return cache[n]

    @cached_property
    def placeable_degrees(self) -> tuple[int, ...]:
        """Degrees a in 1..max_degree an action may choose on an empty cluster: 1, or even
        with at least one block shape (ddls.md 2.3). 32 workers: (1, 2, 4, 6, 8, 16)."""
        top = min(self.cfg.max_degree, self.num_workers)
        return tuple(a for a in range(1, top + 1) if a == 1 or (a % 2 == 0 and self.shapes(a)))

    @property
    def all_mask(self) -> int:
        return (1 << self.num_workers) - 1


def _mask(servers) -> int:
    m = 0
    for s in servers:
        m |= 1 << s
    return m
