"""Op placement on RAMP, on an occupancy bitmask: ddls' first-fit (`place`, ddls.md 3.4) or
a compact variant (`place_compact`); `placer` picks one by its config name.

ddls. Forward ops are walked in Kahn order. An op of degree n first tries its parents (in
dependency order): if a parent sits on exactly n servers with room for the op, sub-op i
goes on the parent's i-th server. Otherwise the first block of a candidate shape (in the
placer's shape and origin order) whose servers are free or already this job's, and have
room, takes it. A backward op sits where its forward twin sits. A job may so occupy more
servers than its degree (gnmt at a=16 takes 21). Servers are exclusive to one job.

compact. A job whose largest op degree is n takes exactly the n servers of one block: the
first candidate block of n (in the same shape and origin order) whose servers are all free
and can hold the job; an op of degree k goes on the block's first k servers in sub-op order
(sub-op i on the i-th), its backward twin with it. The job never occupies a server outside
its block, so n servers are all it takes (gnmt at a=16 takes 16, not 21).

Memory: both twins' memory is counted (ddls B13 counted the forward op only; with 80 GB
workers and the paper's graphs memory never binds, so the fix changes no result).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from pacml.cluster.topology import RampTopology
from pacml.graphs.partition import PartitionedGraph


@dataclass(frozen=True, eq=False)
class Placement:
    """Where every sub-op of a partitioned job runs."""

    sub_op_server: np.ndarray
    """(n_sub,) server index of each sub-op."""
    workers_mask: int
    """Bitmask of the servers the job occupies."""
    num_workers: int


def place(pg: PartitionedGraph, topo: RampTopology, free_mask: int) -> Placement | None:
    """First-fit placement of ``pg`` on the servers in ``free_mask``; None if it does not fit."""
    need = _need_per_sub_op(pg)
    if not _memory_may_bind(need, topo):
        return _place_by_degree(pg, topo, free_mask)
    return _first_fit(pg, topo, free_mask, need)


def _need_per_sub_op(pg: PartitionedGraph) -> np.ndarray:
    """Bytes one sub-op of each forward op needs, its backward twin's included."""
    graph = pg.graph
    n_fwd = graph.num_forward
    return (graph.memory_bytes[:n_fwd] + graph.memory_bytes[n_fwd:]) / pg.degree[:n_fwd]


def _memory_may_bind(need: np.ndarray, topo: RampTopology) -> bool:
    """A server holds at most one sub-op of each op, so when even all ops' sub-ops together
    fit one server (with a margin far above rounding), no memory test can fail."""
    return float(need.sum()) > topo.cfg.worker_memory_bytes * (1.0 - 1e-9)


def _first_fit(pg: PartitionedGraph, topo: RampTopology, free_mask: int, need: np.ndarray) -> Placement | None:
    """`place` op by op, testing memory (``need``: bytes per sub-op of each forward op, both twins)."""
    graph = pg.graph
    n_fwd = graph.num_forward
    capacity = topo.cfg.worker_memory_bytes
    degree = pg.degree
    used: dict[int, float] = {}  # this job's memory per server
    own_mask = 0
    servers_of: list[tuple[int, ...] | None] = [None] * n_fwd
    parents = graph.parents
    for f in graph.forward_topological_order:
        n = int(degree[f])
        chosen = None
        for p in parents[f]:
            ps = servers_of[p] if p < n_fwd else None
            if ps is not None and len(ps) == n and sum(capacity - used.get(s, 0.0) for s in ps) >= need[f] * n:
                chosen = ps
                break
        if chosen is None:
            allowed = free_mask | own_mask
            for bmask, servers in topo.blocks(n):
                if bmask & ~allowed:
                    continue
                if all(capacity - used.get(s, 0.0) >= need[f] for s in servers):
                    chosen = servers
                    own_mask |= bmask
                    break
            if chosen is None:
                return None
        servers_of[f] = chosen
        for s in chosen:
            used[s] = used.get(s, 0.0) + need[f]
    # sub-op i of an op on its i-th server; ops in index order, backward twins after (offsets)
    forward = np.fromiter(itertools.chain.from_iterable(servers_of), dtype=np.int64, count=pg.num_sub_ops // 2)
    sub_server = np.concatenate([forward, forward])
    sub_server.setflags(write=False)
    return Placement(sub_server, own_mask, own_mask.bit_count())


def _place_by_degree(pg: PartitionedGraph, topo: RampTopology, free_mask: int) -> Placement | None:
    """`place` where memory cannot bind. The job only ever takes free servers, so the blocks it
    may take stay those within ``free_mask``: an op that looks for a block takes the first free
    one of its degree, which is also where any parent of its degree sits. So every op of degree
    n sits on the first free block of n servers, sub-op i on its i-th server."""
    degree = pg.degree
    table = np.empty((int(degree.max()) + 1, int(degree.max())), dtype=np.int64)
    own_mask = 0
    for n in np.unique(degree).tolist():
        block = next(((bmask, servers) for bmask, servers in topo.blocks(n) if not bmask & ~free_mask), None)
        if block is None:
            return None
        own_mask |= block[0]
        table[n, :n] = block[1]
    sub_server = table[degree[pg.sub_op], pg.sub_index]
    sub_server.setflags(write=False)
    return Placement(sub_server, own_mask, own_mask.bit_count())


def place_compact(pg: PartitionedGraph, topo: RampTopology, free_mask: int) -> Placement | None:
    """Compact placement of ``pg`` on the servers in ``free_mask`` (module doc); None if no
    free block of the job's largest degree can hold it."""
    graph = pg.graph
    n_fwd = graph.num_forward
    degree = pg.degree[:n_fwd]
    n = int(degree.max())
    need = _need_per_sub_op(pg)
    # memory each of the block's positions 0..n-1 holds: an op of degree k adds to the first k
    load = np.zeros(n)
    for k in np.unique(degree):
        load[:k] += need[degree == k].sum()
    if (load > topo.cfg.worker_memory_bytes).any():
        return None
    for bmask, servers in topo.blocks(n):
        if bmask & ~free_mask:
            continue
        block = np.asarray(servers, dtype=np.int64)
        sub_server = np.empty(pg.num_sub_ops, dtype=np.int64)
        off = pg.offset
        for f in range(n_fwd):
            k = int(degree[f])
            sub_server[off[f] : off[f + 1]] = block[:k]
            sub_server[off[f + n_fwd] : off[f + n_fwd + 1]] = block[:k]
        sub_server.setflags(write=False)
        return Placement(sub_server, bmask, n)
    return None


def deciding_degrees(pg: PartitionedGraph, topo: RampTopology, placer: str) -> tuple[int, ...] | None:
    """The degrees whose first free blocks (`first_free_block`) decide ``pg``'s placement by
    ``placer`` on every occupancy, or None where more decides it (ddls' memory test may bind).

    ddls without a binding memory test puts every op of degree n on the first free block of
    n servers (`_place_by_degree`), so those blocks, one per distinct degree, are the whole
    placement. compact puts the job on the first free block of its largest degree, or
    nowhere whatever the occupancy when its memory does not fit. Two occupancies with the
    same first free blocks thus give the same placement: the model keys its memo on them.
    """
    if placer == "ddls":
        if _memory_may_bind(_need_per_sub_op(pg), topo):
            return None
        return tuple(np.unique(pg.degree).tolist())
    if placer == "compact":
        return (int(pg.degree.max()),)
    return None


def first_free_block(topo: RampTopology, n: int, free_mask: int) -> int:
    """Index in ``topo.blocks(n)`` of the first block of n servers all in ``free_mask``; -1 if none."""
    for i, (bmask, _servers) in enumerate(topo.blocks(n)):
        if not bmask & ~free_mask:
            return i
    return -1


Placer = Callable[[PartitionedGraph, RampTopology, int], Placement | None]

PLACERS: dict[str, Placer] = {"ddls": place, "compact": place_compact}
"""The placers by their config name (``cluster.placement``)."""


def canonical_key(placement: Placement, topo: RampTopology) -> bytes:
    """A key equal for placements that the JCT simulation cannot tell apart.

    The step time depends on which sub-ops share a server and, for collectives, on how
    many distinct comm-group, rack and server indices a transfer touches. Relabelling each
    coordinate by order of first appearance keeps all of these, so translated blocks share
    one simulation. The key holds the same information in two parts: each sub-op's server
    as the order in which that server first appears, and the relabelled coordinates of the
    distinct servers in that order (a server's three coordinates identify it, so sub-op
    coordinates follow from the two parts and the two parts from them).
    """
    sub_server = placement.sub_op_server
    servers, first = np.unique(sub_server, return_index=True)
    ordered = servers[np.argsort(first)].tolist()  # distinct servers, by first appearance
    lookup = np.empty(topo.num_workers, dtype=np.int16)
    lookup[ordered] = np.arange(len(ordered), dtype=np.int16)
    labels: tuple[dict, dict, dict] = ({}, {}, {})
    relabelled = [[label.setdefault(int(x), len(label)) for label, x in zip(labels, topo.coords[s])] for s in ordered]
    return lookup[sub_server].tobytes() + np.asarray(relabelled, dtype=np.int16).tobytes()
