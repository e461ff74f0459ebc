"""Counting blocked jobs on a copy of the cluster: the inner loop of the planning policies.

`blocked_after` continues a `ClusterState` (the engine's free servers and pending
departures at one decision) through a given list of future arrivals, one degree for the
arriving job and a base policy for every later one, and counts the blocked jobs. It follows
the engine's rules exactly (departures at an instant free servers before the arrival at that
instant decides; a degree outside the mask, no placement or a JCT over the requirement blocks;
under paper accounting a job still running at the horizon is blocked) but keeps no records,
so a planner can afford thousands of continuations per decision. A test checks it against
`Episode.fork` stepped through the same arrivals.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pacml.sim.engine import ClusterModel

BaseRule = Callable[[int, float, int], int]
"""(graph index, beta, free-server mask) -> degree: a state-only policy for continuations."""


@dataclass(frozen=True)
class ClusterState:
    """The cluster at a decision: what a fork needs to continue exactly."""

    time_s: float
    free_mask: int
    departures: tuple[tuple[float, int, int], ...]
    """(finish_s, seq, workers_mask) of every running job, ascending."""
    next_seq: int


class ByFreeCount:
    """A base rule whose degree depends on the count of free servers alone (``fixed-K``,
    ``sequential``, ``para_max``): a table lookup that `blocked_after` reads inline."""

    def __init__(self, degree_by_free: list[int]):
        self.degree_by_free = degree_by_free

    def __call__(self, g: int, beta: float, free_mask: int) -> int:
        return self.degree_by_free[free_mask.bit_count()]


def base_rule(name: str, model: ClusterModel) -> BaseRule:
    """The continuation policy ``name`` (``fixed-K``, ``sequential``, ``para_max``, ``para_min``)
    as a function of the state alone, with the same choices as the baselines of that name."""
    placeable = sorted(a for a in model.placeable if a <= model.max_degree)
    counts = range(model.topology.num_workers + 1)
    # largest valid degree for each count of free servers
    largest = [max((a for a in placeable if a <= n), default=0) for n in counts]
    if name == "para_max":
        return ByFreeCount(largest)
    if name == "para_min":
        seq = [float(x) for x in model.sequential_jct_s]

        def para_min(g: int, beta: float, free_mask: int) -> int:
            free = free_mask.bit_count()
            k = math.ceil(seq[g] / (beta * seq[g]))
            for a in placeable:
                if a >= k and a <= free:
                    return a
            return largest[free]

        return para_min
    k = 1 if name == "sequential" else _fixed_degree(name)
    if k is not None:
        ok = k in placeable
        return ByFreeCount([k if ok and k <= n else 0 for n in counts])
    from pacml.errors import UnknownNameError

    raise UnknownNameError(f"unknown base policy {name!r}; known: para_max, para_min, sequential, fixed-K")


def _fixed_degree(name: str) -> int | None:
    prefix = "fixed-"
    if name.startswith(prefix) and name[len(prefix) :].isdigit():
        return int(name[len(prefix) :])
    return None


_MISSING = object()


def blocked_after(
    model: ClusterModel,
    state: ClusterState,
    graph: int,
    beta: float,
    degree: int,
    times_s: list[float],
    graphs: list[int],
    betas: list[float],
    base: BaseRule,
    steps: int | None = None,
    future_steps: list[int] | None = None,
) -> int:
    """Blocked jobs among the arriving job (at ``degree``) and the given later arrivals (by
    ``base``), continued from ``state``; arrivals at or after the horizon are not counted.
    ``steps`` and ``future_steps`` (given together) are the jobs' training steps (a trace's);
    None: each graph's own."""
    horizon = model.cfg.workload.horizon_s
    paper = model.cfg.workload.horizon_accounting == "paper"
    seq = model.sequential_jct_s.tolist()  # Python floats: the same values, faster arithmetic
    n_graph_steps = model.num_training_steps
    allocate = model.allocate
    cached = model.cache.placements.get  # allocate's own cache, read inline: the hot path
    table = base.degree_by_free if isinstance(base, ByFreeCount) else None
    free = state.free_mask
    heap = list(state.departures)  # sorted, hence a valid heap
    n = state.next_seq
    blocked = 0
    if steps is not None:  # per-job steps: both the JCT and the requirement scale with them
        step_s = model.sequential_step_s
        n_steps = [steps, *future_steps]
    t, g, b, a = state.time_s, graph, beta, degree
    i, count = -1, len(times_s)
    while True:
        if a == 0 or a > free.bit_count():
            blocked += 1
        else:
            alloc = cached((g, a, free), _MISSING)
            if alloc is _MISSING:
                alloc = allocate(g, a, free)
            if steps is None:
                jct = None if alloc is None else alloc.step.step_time_s * n_graph_steps[g]
                required_s = b * seq[g]
            else:
                k = n_steps[i + 1]
                jct = None if alloc is None else alloc.step.step_time_s * k
                required_s = b * step_s[g] * k
            if jct is None or jct > required_s:
                blocked += 1
            else:
                if paper and t + jct > horizon:
                    blocked += 1  # will be counted blocked at the horizon
                free &= ~alloc.workers_mask
                heapq.heappush(heap, (t + jct, n, alloc.workers_mask))
                n += 1
        i += 1
        if i >= count:
            return blocked
        t = times_s[i]
        if t >= horizon:
            return blocked
        while heap and heap[0][0] <= t:
            free |= heapq.heappop(heap)[2]
        g, b = graphs[i], betas[i]
        a = table[free.bit_count()] if table is not None else base(g, b, free)
