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

from pacml.cluster.comms import all_reduce_time_s, transfer_time_s
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
    memo: dict[tuple, float] = {}

    def collective(total: float, servers: np.ndarray) -> float:
        c, r, s = coords[servers].T.tolist()  # a handful of servers: sets beat np.unique
        key = (total, len(set(c)), len(set(r)), len(set(s)))
        if key not in memo:
            memo[key] = all_reduce_time_s(total, key[1], key[2], key[3], cfg)
        return memo[key]

    # transfer groups (sync dependencies are in none: partition gives them group -1)
    groups = pg.group
    order = np.argsort(groups, kind="stable")
    bounds = np.flatnonzero(np.diff(groups[order])) + 1
    for idx in np.split(order, bounds):
        if len(idx) == 0 or groups[idx[0]] < 0:
            continue
        if not np.array_equal(np.sort(s_src[idx]), np.sort(s_dst[idx])):
            continue  # not a collective: the one-to-one times stand
        sel = idx[cross[idx]]
        if len(sel):  # the transfers that cross servers take the collective's time
            touched = np.unique(np.concatenate([s_src[idx], s_dst[idx]]))
            dur[sel] = collective(float(pg.size_bytes[idx].sum()), touched)
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
            [
                all_reduce_time_s(2 * sizes[k >> 3], 1 + (k >> 2 & 1), 1 + (k >> 1 & 1), 1 + (k & 1), cfg)
                for k in keys.tolist()
            ]
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
    dur = transfer_times_s(pg, placement, topo)
    # CSR of out-edges by source sub-op
    order = np.argsort(pg.src, kind="stable")
    starts = np.searchsorted(pg.src[order], np.arange(n_sub + 1)).tolist()
    out_dst = pg.dst[order].tolist()
    out_dur = dur[order].tolist()
    out_sync = pg.is_sync[order].tolist()
    waiting = np.bincount(pg.dst[~pg.is_sync], minlength=n_sub).tolist()

    key = list(zip(compute, range(n_sub)))  # static SPT priority
    remaining = list(compute)
    ready_at = [0.0] * n_sub
    queued: dict[int, list] = {}  # server -> heap of (key, op)
    running: dict[int, tuple[int, float, int]] = {}  # server -> (op, started, token)
    events: list[tuple[float, int, int, int]] = []  # (time_s, kind, seq, op)
    seq = 0
    end = 0.0
    done = 0

    def start(op: int, t: float) -> None:
        nonlocal seq
        running[server[op]] = (op, t, seq)
        heapq.heappush(events, (t + remaining[op], _FINISH, seq, op))
        seq += 1

    for op in range(n_sub):
        if waiting[op] == 0:
            heapq.heappush(events, (0.0, _READY, seq, op))
            seq += 1
    while events:
        t, kind, token, op = heapq.heappop(events)
        w = server[op]
        if kind == _READY:
            cur = running.get(w)
            if cur is None:
                start(op, t)
            elif key[op] < key[cur[0]]:  # preempt
                remaining[cur[0]] -= t - cur[1]
                heapq.heappush(queued.setdefault(w, []), (key[cur[0]], cur[0]))
                start(op, t)
            else:
                heapq.heappush(queued.setdefault(w, []), (key[op], op))
            continue
        cur = running.get(w)
        if cur is None or cur[2] != token:
            continue  # a preempted run's stale finish
        del running[w]
        done += 1
        end = max(end, t)
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
                heapq.heappush(events, (ready_at[c], _READY, seq, c))
                seq += 1
        q = queued.get(w)
        if q:
            _, nxt = heapq.heappop(q)
            start(nxt, t)
    assert done == n_sub, f"deadlock: {n_sub - done} sub-ops never ran"
    return StepResult(step_time_s=end, compute_busy_s=float(sum(compute)), num_workers=placement.num_workers)
