"""Exact event-driven simulation of one training step of a placed job (ddls.md 4.2).

Jobs never share servers or channels on RAMP, so a job's step time is a function of its
own partitioned graph and placement alone; the engine multiplies it by the training steps.

Semantics:
- each server runs one sub-op at a time, preemptive shortest-processing-time-first with
  static keys (initial compute time, then sub-op id) -- ddls' SRPT op scheduler;
- a dependency starts when its source finishes and takes its own transfer time; flows
  never share bandwidth (ddls B15: every ready flow advances in parallel);
- a transfer between sub-ops on one server, or of 0 bytes, takes no time;
- a transfer group (ddls.md 3.3) whose multiset of source servers equals that of its
  destination servers is a collective: all its cross-server transfers take the RAMP
  all-reduce time of the group's total size; every pair of sync transfers is a 2-transfer
  collective; everything else is one-to-one;
- a sub-op is ready when all its non-sync inputs have arrived (ddls B5 fixed);
- the step ends when every sub-op and every transfer (sync included) has finished.
Compute times are physical x ``compute_time_scale``; transfer times are physical seconds.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

import numpy as np

from pacml.cluster.comms import transfer_time_s
from pacml.cluster.placement import Placement
from pacml.cluster.topology import RampTopology
from pacml.graphs.partition import PartitionedGraph

_FINISH, _READY = 0, 1


@dataclass(frozen=True)
class StepResult:
    """One simulated training step of a placed job (simulation-clock seconds)."""

    step_time_s: float
    compute_busy_s: float
    """Sum over the job's servers of the time they computed."""
    num_workers: int

    @property
    def utilisation(self) -> float:
        """Fraction of the job's worker-time spent computing."""
        return self.compute_busy_s / (self.num_workers * self.step_time_s) if self.step_time_s > 0 else 1.0


def transfer_times_s(pg: PartitionedGraph, placement: Placement, topo: RampTopology) -> np.ndarray:
    """Duration of every sub-dependency of ``pg`` under ``placement`` (physical seconds)."""
    cfg = topo.cfg
    srv = placement.sub_op_server
    s_src, s_dst = srv[pg.src], srv[pg.dst]
    cross = (s_src != s_dst) & (pg.size_bytes > 0)
    dur = np.zeros(len(pg.src))
    # comms.one_to_one_time_s over every cross-server dependency at once
    dur[cross] = transfer_time_s(pg.size_bytes[cross], cfg.channel_bandwidth_bytes_per_s, cfg)
    coords = topo.coords
    all_reduce = topo.all_reduce_time_s  # memoised on the topology
    tg = pg.transfer_groups  # the groups (sync dependencies are in none: partition gives them -1)
    if len(tg.deps):
        # a group is a collective when its source servers and destination servers are the
        # same multiset: sorted by (group, server), the two agree entry by entry
        width = topo.num_workers
        offset = tg.position * width
        key_src = np.sort(offset + s_src[tg.deps])
        key_dst = np.sort(offset + s_dst[tg.deps])
        collective = np.add.reduceat(key_src != key_dst, tg.starts) == 0
        crosses = cross[tg.deps]
        crossing = np.add.reduceat(crosses, tg.starts) > 0
        chosen = collective & crossing  # the transfers that cross servers take its time
        if chosen.any():
            # how many distinct communication groups, racks and servers each group touches
            # (its sources are the same servers as its destinations); every group has a source
            group_of, server = key_src // width, key_src % width
            distinct = []
            for col in range(3):
                pairs = np.unique(group_of * width + coords[server, col])
                distinct.append(np.bincount(pairs // width).tolist())
            time_of = np.zeros(len(tg.starts))
            for j in np.flatnonzero(chosen).tolist():
                time_of[j] = all_reduce(tg.total_size_bytes[j], distinct[0][j], distinct[1][j], distinct[2][j])
            take = chosen[tg.position] & crosses
            dur[tg.deps[take]] = time_of[tg.position[take]]
    # each sync pair is a 2-transfer collective: its time depends only on its size and on
    # which of the (c, r, s) coordinates of the two servers differ
    sync = np.flatnonzero(pg.is_sync & cross)
    if len(sync):
        differ = coords[s_src[sync]] != coords[s_dst[sync]]
        # one key per (size, differing coordinates): an integer, as np.unique(axis=0) sorts
        # its rows as opaque bytes, slowly (a fifth of a 256-worker episode)
        sizes, size_idx = np.unique(pg.size_bytes[sync], return_inverse=True)
        keys, inverse = np.unique(size_idx * 8 + differ @ np.array([4, 2, 1]), return_inverse=True)
        times = np.array(
            [all_reduce(2 * sizes[k >> 3], 1 + (k >> 2 & 1), 1 + (k >> 1 & 1), 1 + (k & 1)) for k in keys.tolist()]
        )
        dur[sync] = times[inverse.ravel()]
    return dur


def simulate_step(
    pg: PartitionedGraph, placement: Placement, topo: RampTopology, compute_time_scale: float
) -> StepResult:
    """Simulate one training step; see the module doc for the semantics."""
    n_sub = pg.num_sub_ops
    compute = (pg.compute_time_s * compute_time_scale).tolist()
    server = placement.sub_op_server.tolist()
    edges = pg.out_edges
    starts, out_dst, out_sync = edges.starts, edges.dst, edges.is_sync
    out_dur = transfer_times_s(pg, placement, topo)[edges.order].tolist()
    waiting = list(edges.waiting)

    key = list(zip(compute, range(n_sub)))  # static SPT priority
    remaining = list(compute)
    ready_at = [0.0] * n_sub
    queued: list[list] = [[] for _ in range(topo.num_workers)]  # by server: heap of (key, op)
    running: list[tuple[int, float, int] | None] = [None] * topo.num_workers  # by server: (op, started, token)
    # (time_s, kind, seq, op): the sub-ops ready at 0, in seq order (a sorted list is a heap)
    events = [(0.0, _READY, i, op) for i, op in enumerate(op for op in range(n_sub) if waiting[op] == 0)]
    seq = len(events)
    end = 0.0
    done = 0
    push, pop = heapq.heappush, heapq.heappop
    while events:
        t, kind, token, op = pop(events)
        w = server[op]
        cur = running[w]
        if kind == _READY:
            if cur is None:
                running[w] = (op, t, seq)
                push(events, (t + remaining[op], _FINISH, seq, op))
                seq += 1
            elif key[op] < key[cur[0]]:  # preempt
                remaining[cur[0]] -= t - cur[1]
                push(queued[w], (key[cur[0]], cur[0]))
                running[w] = (op, t, seq)
                push(events, (t + remaining[op], _FINISH, seq, op))
                seq += 1
            else:
                push(queued[w], (key[op], op))
            continue
        if cur is None or cur[2] != token:
            continue  # a preempted run's stale finish
        running[w] = None
        done += 1
        if t > end:
            end = t
        for i in range(starts[op], starts[op + 1]):
            arrive = t + out_dur[i]
            if arrive > end:
                end = arrive
            if out_sync[i]:
                continue
            c = out_dst[i]
            if arrive > ready_at[c]:
                ready_at[c] = arrive
            waiting[c] -= 1
            if waiting[c] == 0:
                push(events, (ready_at[c], _READY, seq, c))
                seq += 1
        q = queued[w]
        if q:
            nxt = pop(q)[1]
            running[w] = (nxt, t, seq)
            push(events, (t + remaining[nxt], _FINISH, seq, nxt))
            seq += 1
    assert done == n_sub, f"deadlock: {n_sub - done} sub-ops never ran"
    return StepResult(step_time_s=end, compute_busy_s=float(sum(compute)), num_workers=placement.num_workers)
