"""`blocked_after` compiled with numba, for every degree and future of one decision at once.

The rollout planners spend most of their time in `pacml.sim.lookahead.blocked_after`: about
0.5 us an arrival in Python, half of one agent's training (the DAgger teacher labels every
state). `count_blocked` runs the same loop, statement for statement and with the same float
operations in the same order (numba leaves fastmath off), over a whole decision's (degree,
future) pairs in one call, so the scores are identical to the last bit (`tests/test_lookahead_jit.py`
checks both on random states and whole planner episodes).

It covers what the hot path needs: free-server masks of at most 64 workers (uint64), base
policies that depend on the free count alone (`ByFreeCount`: fixed-K, sequential, para_max),
with or without per-job training steps (trace arrivals). Anything else (para_min as a base, a
cluster over 64 workers) runs the Python loop; `supported` says which.

Placements come from the model's own `allocate`: the kernel reads a typed dict of (graph,
degree, free mask) -> (workers mask, step time), held on the model's `JctCache` (``plan_memo``)
like every other memo, and returns to Python on a key it lacks; Python places the job, stores
the result and the kernel resumes at the pair it stopped in (that pair from its start).
Only the planners import this module (numba with it), so `import pacml` stays free of numba.
The kernels are cached (numba's `cache=True`, beside this file): a process compiles them once
(about 7 s), later processes load them.
"""

from __future__ import annotations

import heapq
from typing import TYPE_CHECKING

import numpy as np
from numba import njit, types
from numba.typed import Dict

from pacml.sim.lookahead import ByFreeCount, ClusterState

if TYPE_CHECKING:
    from pacml.sim.engine import ClusterModel

MAX_WORKERS = 64
"""Free-server masks are uint64 in the kernel."""


def supported(model: ClusterModel, bases) -> bool:
    """Whether `count_blocked` can score with these base policies on this cluster."""
    return model.topology.num_workers <= MAX_WORKERS and all(isinstance(b, ByFreeCount) for b in bases)


_M1 = np.uint64(0x5555555555555555)
_M2 = np.uint64(0x3333333333333333)
_M4 = np.uint64(0x0F0F0F0F0F0F0F0F)
_H01 = np.uint64(0x0101010101010101)
_ZERO = np.uint64(0)
_KEY = types.Tuple((types.int64, types.int64, types.uint64))
_VALUE = types.Tuple((types.uint64, types.float64))


@njit(cache=True)
def _popcount(x):
    x = x - ((x >> np.uint64(1)) & _M1)
    x = (x & _M2) + ((x >> np.uint64(2)) & _M2)
    x = (x + (x >> np.uint64(4))) & _M4
    return np.int64((x * _H01) >> np.uint64(56))


@njit(cache=True)
def _one(memo, cluster, job, a0, times, graphs, betas, ksteps, table, pool):
    """The loop of `lookahead.blocked_after` for degree ``a0`` on one future (``times``, ``graphs``,
    ``betas``, ``ksteps``) continued by the base rule ``table``: (blocked, 0, 0, 0), or
    (-1, g, a, free) at a placement the memo lacks. The tuples are built by `count_blocked`."""
    free, dep_t, dep_seq, dep_mask, next_seq, t0 = cluster
    g0, b0, k0 = job
    horizon, paper, seq, n_graph_steps, step_s, use_steps = pool
    heap = [(0.0, np.int64(0), _ZERO)]
    heap.pop()
    for j in range(dep_t.shape[0]):
        heap.append((dep_t[j], dep_seq[j], dep_mask[j]))  # sorted, hence a valid heap
    n = next_seq
    blocked = 0
    nfree = _popcount(free)
    t, g, b, a, k = t0, g0, b0, a0, k0
    i, count = -1, times.shape[0]
    while True:
        if a == 0 or a > nfree:
            blocked += 1
        else:
            key = (g, a, free)
            if key not in memo:
                return -1, g, a, free
            mask, step_time_s = memo[key]
            if mask == _ZERO:  # no placement
                blocked += 1
            else:
                if use_steps:
                    jct = step_time_s * k
                    required_s = b * step_s[g] * k
                else:
                    jct = step_time_s * n_graph_steps[g]
                    required_s = b * seq[g]
                if jct > required_s:
                    blocked += 1
                else:
                    if paper and t + jct > horizon:
                        blocked += 1  # will be counted blocked at the horizon
                    free = free & ~mask
                    nfree = _popcount(free)
                    heapq.heappush(heap, (t + jct, n, mask))
                    n += 1
        i += 1
        if i >= count:
            return blocked, 0, 0, _ZERO
        t = times[i]
        if t >= horizon:
            return blocked, 0, 0, _ZERO
        if len(heap) > 0 and heap[0][0] <= t:
            while len(heap) > 0 and heap[0][0] <= t:
                free = free | heapq.heappop(heap)[2]
            nfree = _popcount(free)
        g, b = graphs[i], betas[i]
        if use_steps:
            k = ksteps[i]
        a = table[nfree]


@njit(cache=True)
def _batch(memo, out, start, cluster, job, degrees, times, graphs, betas, ksteps, tables, pool):
    """out[base, degree, future] from pair ``start`` on, in that order; (-1, 0, 0, 0) when done,
    else (the pair, g, a, free) of the placement the memo lacks."""
    nb, nd, nk = out.shape
    for p in range(start, nb * nd * nk):
        q, f = p // nk, p % nk
        bi, d = q // nd, q % nd
        r, g, a, fr = _one(memo, cluster, job, degrees[d], times[f], graphs[f], betas[f], ksteps[f], tables[bi], pool)
        if r < 0:
            return p, g, a, fr
        out[bi, d, f] = r
    return -1, 0, 0, _ZERO


@njit(cache=True)
def _new_memo():
    """An empty memo, made in compiled code: the interpreter's own typed-dict calls compile
    their methods afresh in every process (seconds)."""
    return Dict.empty(key_type=_KEY, value_type=_VALUE)


@njit(cache=True)
def _store(memo, g, a, free, mask, step_time_s):
    memo[(g, a, free)] = (mask, step_time_s)


def _memo(model: ClusterModel):
    if model.cache.plan_memo is None:
        model.cache.plan_memo = _new_memo()
    return model.cache.plan_memo


def count_blocked(
    model: ClusterModel,
    state: ClusterState,
    graph: int,
    beta: float,
    degrees: list[int],
    times_s: np.ndarray,
    graphs: np.ndarray,
    betas: np.ndarray,
    bases: tuple[ByFreeCount, ...],
    steps: int | None = None,
    future_steps: np.ndarray | None = None,
) -> np.ndarray:
    """Blocked jobs (int64, shape (bases, degrees, futures)): entry [b, d, f] is
    ``blocked_after(model, state, graph, beta, degrees[d], times_s[f], graphs[f], betas[f],
    bases[b], steps, future_steps[f])``. ``times_s``, ``graphs``, ``betas`` (and
    ``future_steps``) are (futures, H) arrays."""
    memo = _memo(model)
    w = model.cfg.workload
    deps = state.departures
    nd = len(deps)
    dep_t = np.fromiter((x[0] for x in deps), np.float64, nd)
    dep_seq = np.fromiter((x[1] for x in deps), np.int64, nd)
    dep_mask = np.fromiter((x[2] for x in deps), np.uint64, nd)
    times = np.ascontiguousarray(times_s, dtype=np.float64)
    nk = times.shape[0]
    use_steps = steps is not None
    ksteps = np.ascontiguousarray(future_steps if use_steps else np.zeros((nk, 0)), dtype=np.int64)
    tables = np.array([b.degree_by_free for b in bases], dtype=np.int64)
    out = np.empty((len(bases), len(degrees), nk), dtype=np.int64)
    cluster = (np.uint64(state.free_mask), dep_t, dep_seq, dep_mask, state.next_seq, float(state.time_s))
    job = (int(graph), float(beta), int(steps) if use_steps else 0)
    pool = (
        float(w.horizon_s),
        w.horizon_accounting == "paper",
        np.asarray(model.sequential_jct_s, dtype=np.float64),
        np.asarray(model.num_training_steps, dtype=np.int64),
        np.asarray(model.sequential_step_s, dtype=np.float64),
        use_steps,
    )
    args = (
        cluster,
        job,
        np.asarray(degrees, dtype=np.int64),
        times,
        np.ascontiguousarray(graphs, dtype=np.int64),
        np.ascontiguousarray(betas, dtype=np.float64),
        ksteps,
        tables,
        pool,
    )
    start = 0
    while True:
        p, g, a, free = _batch(memo, out, start, *args)
        if p < 0:
            return out
        alloc = model.allocate(int(g), int(a), int(free))
        key = (np.int64(g), np.int64(a), np.uint64(free))
        if alloc is None:
            _store(memo, *key, _ZERO, 0.0)
        else:
            _store(memo, *key, np.uint64(alloc.workers_mask), float(alloc.step.step_time_s))
        start = p
