"""Split a job graph by a partition degree (ddls.md 2.1, 2.2). Pure and cacheable.

Action a >= 1 gives every forward op of physical time t the degree
``n = max(1, min(a, smallest even number >= t / q)))``; its backward twin gets the same.
An op of degree n becomes n sub-ops, each with 1/n of its time and memory. Each
dependency u -> v becomes the complete bipartite set of n_u x n_v sub-dependencies, and
each split backward op gets directed "sync" dependencies between every ordered pair of
its sub-ops (the weight all-reduce); sync dependencies must finish before the step ends
but gate no op (ddls B5 fixed).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from pacml.graphs.opgraph import OpGraph


def op_degrees(
    graph: OpGraph, action: int, min_op_time_s: float, placeable: tuple[int, ...] | None = None
) -> np.ndarray:
    """Degree of every op (forward and backward) for the action ``action`` >= 1.

    With ``placeable`` (the degrees that have a block shape), a degree without one is
    rounded down to the largest placeable degree below it; without it, such an op makes
    the whole job unplaceable (ddls B10: 10, 12 and 14 on 32 workers).
    """
    assert action >= 1, "action 0 places nothing"
    n = graph.num_forward
    t = graph.compute_time_s[:n]
    # round() guards the ceiling against t/q landing a hair above an integer
    pieces = np.ceil(np.round(t / min_op_time_s, 9))
    even = 2 * np.ceil(pieces / 2)
    fwd = np.maximum(1, np.minimum(action, even)).astype(np.int64)
    if placeable is not None:
        allowed = np.asarray(sorted(placeable), dtype=np.int64)
        fwd = allowed[np.searchsorted(allowed, fwd, side="right") - 1]
    out = np.concatenate([fwd, fwd])
    out.setflags(write=False)
    return out


@dataclass(frozen=True, eq=False)
class PartitionedGraph:
    """A job graph split by per-op degrees.

    Sub-ops of op i are ``offset[i] .. offset[i+1]-1`` (sub-op j of op i is ``offset[i]+j``).
    ``group`` tags each sub-dependency with the transfer group that may form a collective
    (ddls.md 3.3): the split forward op whose sub-ops send it, else the split backward op
    whose sub-ops receive it; -1 when neither; sync pairs are handled separately.
    """

    graph: OpGraph
    action: int
    degree: np.ndarray  # (n_ops,) per-op degree
    offset: np.ndarray  # (n_ops+1,)
    sub_op: np.ndarray  # (n_sub,) op index of each sub-op
    sub_index: np.ndarray  # (n_sub,) j within its op
    compute_time_s: np.ndarray  # (n_sub,) physical seconds
    memory_bytes: np.ndarray  # (n_sub,)
    src: np.ndarray  # (n_subdeps,) sub-op ids
    dst: np.ndarray
    size_bytes: np.ndarray
    is_sync: np.ndarray  # (n_subdeps,) bool
    group: np.ndarray  # (n_subdeps,) int

    @property
    def num_sub_ops(self) -> int:
        return len(self.sub_op)

    @property
    def total_dep_size_bytes(self) -> float:
        return float(self.size_bytes.sum())

    @cached_property
    def out_edges(self) -> OutEdges:
        """Every sub-op's outgoing sub-dependencies (CSR, stable by id) and its count of
        non-sync inputs: what a step simulation walks, laid out once."""
        order = np.argsort(self.src, kind="stable")
        n = self.num_sub_ops
        return OutEdges(
            order,
            np.searchsorted(self.src[order], np.arange(n + 1)).tolist(),
            self.dst[order].tolist(),
            self.is_sync[order].tolist(),
            tuple(np.bincount(self.dst[~self.is_sync], minlength=n).tolist()),
        )

    @cached_property
    def transfer_groups(self) -> TransferGroups:
        """The sub-dependencies of every transfer group, laid out once (placement-free)."""
        order = np.argsort(self.group, kind="stable")
        order = order[self.group[order] >= 0]  # sync and ungrouped dependencies are in none
        g = self.group[order]
        starts = np.flatnonzero(np.r_[True, g[1:] != g[:-1]]) if len(g) else np.zeros(0, dtype=np.int64)
        bounds = np.r_[starts, len(order)]
        # each group's total size, summed as np.sum sums it (pairwise) over its ascending indices
        totals = [float(self.size_bytes[order[a:b]].sum()) for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist())]
        position = np.repeat(np.arange(len(starts)), np.diff(bounds))
        return TransferGroups(order, starts, position, totals)


@dataclass(frozen=True)
class OutEdges:
    """The sub-dependencies of a `PartitionedGraph` by source sub-op."""

    order: np.ndarray
    """Sub-dependency ids by source sub-op (stable)."""
    starts: list[int]
    """Sub-op i's out-edges are ``order[starts[i]:starts[i + 1]]``."""
    dst: list[int]
    is_sync: list[bool]
    waiting: tuple[int, ...]
    """Each sub-op's count of non-sync inputs."""


@dataclass(frozen=True)
class TransferGroups:
    """The grouped sub-dependencies of a `PartitionedGraph`, group by group."""

    deps: np.ndarray
    """Sub-dependency ids, by group and then ascending."""
    starts: np.ndarray
    """Where each group begins in ``deps``."""
    position: np.ndarray
    """Each entry of ``deps``: its group's position (0, 1, ...)."""
    total_size_bytes: list[float]
    """Each group's total size."""


def partition(
    graph: OpGraph,
    action: int,
    min_op_time_s: float,
    paper_edge_sizes: bool = True,
    placeable: tuple[int, ...] | None = None,
) -> PartitionedGraph:
    """Split ``graph`` for action ``action`` >= 1 (see module doc).

    Sub-dependency sizes with ``paper_edge_sizes`` (ddls B7/B8, applied in ddls' order,
    forward op f then its twin b, in op order): unsplit-to-unsplit carries the source op's
    memory; otherwise, if the later-split endpoint is the destination v it carries
    mem(u) / (n_u n_v), and if it is the source u, mem(v) / (n_u n_v). Without it, each
    carries the original size / (n_u n_v). Sync dependencies carry the sub-op's memory.
    """
    degree = op_degrees(graph, action, min_op_time_s, placeable)
    n_fwd = graph.num_forward
    offset = np.concatenate([[0], np.cumsum(degree)]).astype(np.int64)
    sub_op = np.repeat(np.arange(graph.num_ops), degree)
    sub_index = np.arange(len(sub_op)) - offset[sub_op]
    compute = graph.compute_time_s[sub_op] / degree[sub_op]
    memory = graph.memory_bytes[sub_op] / degree[sub_op]
    mem = graph.memory_bytes
    # ddls splits in op order: forward op k at step 2k, its backward twin at 2k+1
    op_ids = np.arange(graph.num_ops)
    split_step = np.where(op_ids < n_fwd, 2 * op_ids, 2 * (op_ids - n_fwd) + 1)
    split_step = np.where(degree > 1, split_step, -1)

    srcs, dsts, sizes, syncs, groups = [], [], [], [], []
    for e, (u, v) in enumerate(zip(graph.src.tolist(), graph.dst.tolist())):
        nu, nv = int(degree[u]), int(degree[v])
        if paper_edge_sizes:
            if nu == 1 and nv == 1:
                size = mem[u]
            elif split_step[v] > split_step[u]:
                size = mem[u] / (nu * nv)
            else:
                size = mem[v] / (nu * nv)
        else:
            size = graph.size_bytes[e] / (nu * nv)
        su = np.repeat(np.arange(offset[u], offset[u + 1]), nv)
        sv = np.tile(np.arange(offset[v], offset[v + 1]), nu)
        if u < n_fwd and nu > 1:
            grp = u  # out-edges of a split forward op
        elif v >= n_fwd and nv > 1:
            grp = v  # in-edges of a split backward op
        else:
            grp = -1
        srcs.append(su)
        dsts.append(sv)
        sizes.append(np.full(len(su), size))
        syncs.append(np.full(len(su), False))
        groups.append(np.full(len(su), grp))
    for b in range(n_fwd, graph.num_ops):
        nb = int(degree[b])
        if nb == 1:
            continue
        ids = np.arange(offset[b], offset[b + 1])
        su, sv = np.meshgrid(ids, ids, indexing="ij")
        keep = su != sv
        srcs.append(su[keep])
        dsts.append(sv[keep])
        sizes.append(np.full(int(keep.sum()), mem[b] / nb))
        syncs.append(np.full(int(keep.sum()), True))
        groups.append(np.full(int(keep.sum()), -1))
    # a training graph has at least one edge (the join of the last forward op and its twin)
    arrays = dict(
        degree=degree,
        offset=offset,
        sub_op=sub_op,
        sub_index=sub_index,
        compute_time_s=compute,
        memory_bytes=memory,
        src=np.concatenate(srcs),
        dst=np.concatenate(dsts),
        size_bytes=np.concatenate(sizes),
        is_sync=np.concatenate(syncs),
        group=np.concatenate(groups),
    )
    for a in arrays.values():
        a.setflags(write=False)
    return PartitionedGraph(graph=graph, action=action, **arrays)
