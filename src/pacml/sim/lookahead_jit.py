"""`blocked_after` compiled with numba, for every degree and future of one decision at once.

The rollout planners spend most of their time in `pacml.sim.lookahead.blocked_after`: about
0.5 us an arrival in Python, half of one agent's training (the DAgger teacher labels every
state). `count_blocked` runs the same loop, statement for statement and with the same float
operations in the same order (numba leaves fastmath off), over a whole decision's (degree,
future) pairs in one call, so the scores are identical to the last bit (`tests/test_lookahead_jit.py`
checks both on random states and whole planner episodes).

It covers what the hot path needs: clusters of at most 256 workers (a free-server mask is a
tuple of uint64 words: one up to 64 workers, four up to 256; `words_for`), base policies that
depend on the free count alone (`ByFreeCount`: fixed-K, sequential, para_max), with or without
per-job training steps (trace arrivals). Anything else (para_min as a base, a cluster over 256
workers) runs the Python loop; `supported` says which.

Placements come from the model's own `allocate`, through two typed dicts held on the model's
`JctCache` (``plan_memo``, a `_Plan`) like every other memo: one keyed by (graph, degree, free
mask), and one keyed by (graph, degree, the first free blocks of the degrees that decide the
placement, coded as one number), the model's ``by_blocks`` memo, which answers for masks never
seen (at 128 workers and more masks rarely repeat). A pair of (degree, future) that meets a
placement neither holds is set aside; when every pair has run, Python places the jobs set
aside, stores the results and the kernel runs those pairs again from their start.
Only the planners import this module (numba with it), so `import pacml` stays free of numba.
The kernels are cached (numba's `cache=True`, beside this file): a process compiles them once
(about 7 s), later processes load them.
"""

from __future__ import annotations

import heapq
from typing import TYPE_CHECKING

import numpy as np
from numba import njit, types
from numba.cpython.unsafe.tuple import tuple_setitem
from numba.typed import Dict

from pacml.sim.lookahead import ByFreeCount, ClusterState

if TYPE_CHECKING:
    from pacml.sim.engine import ClusterModel

MAX_WORKERS = 256
"""A free-server mask is a tuple of uint64 words in the kernel (`words_for`): one word up to 64
workers, four up to 256; word i holds workers 64 i to 64 i + 63."""


def words_for(num_workers: int) -> int:
    """Words of a free-server mask on a cluster of ``num_workers`` (one kernel per count)."""
    return 1 if num_workers <= 64 else 4


def supported(model: ClusterModel, bases) -> bool:
    """Whether `count_blocked` can score with these base policies on this cluster."""
    return model.topology.num_workers <= MAX_WORKERS and all(isinstance(b, ByFreeCount) for b in bases)


_M1 = np.uint64(0x5555555555555555)
_M2 = np.uint64(0x3333333333333333)
_M4 = np.uint64(0x0F0F0F0F0F0F0F0F)
_H01 = np.uint64(0x0101010101010101)
_ZERO = np.uint64(0)
_WORD = (1 << 64) - 1


def _types(words: int):
    """The memo's flat key (graph, degree, *free words) and value (*workers words, step time)."""
    mask = (types.uint64,) * words
    return types.Tuple((types.int64, types.int64, *mask)), types.Tuple((*mask, types.float64))


_KEY1, _VALUE1 = _types(1)
_KEY4, _VALUE4 = _types(4)
_BLOCK_KEY = types.UniTuple(types.int64, 3)


@njit(cache=True)
def _popcount(x):
    x = x - ((x >> np.uint64(1)) & _M1)
    x = (x & _M2) + ((x >> np.uint64(2)) & _M2)
    x = (x + (x >> np.uint64(4))) & _M4
    return np.int64((x * _H01) >> np.uint64(56))


# Masks of any word count: numba compiles each helper once per tuple length, so the one-word
# kernel does the single uint64 operation it always did.


@njit(cache=True)
def _count(m):
    c = np.int64(0)
    for i in range(len(m)):
        c += _popcount(m[i])
    return c


@njit(cache=True)
def _take(free, m):
    out = free
    for i in range(len(free)):
        out = tuple_setitem(out, i, free[i] & ~m[i])
    return out


@njit(cache=True)
def _give(free, m):
    out = free
    for i in range(len(free)):
        out = tuple_setitem(out, i, free[i] | m[i])
    return out


@njit(cache=True)
def _is_empty(m):
    for i in range(len(m)):
        if m[i] != _ZERO:
            return False
    return True


@njit(cache=True)
def _empty_like(m):
    out = m
    for i in range(len(m)):
        out = tuple_setitem(out, i, _ZERO)
    return out


def _words(mask: int, words: int) -> tuple[np.uint64, ...]:
    """A Python int mask as the kernel's words."""
    return tuple(np.uint64((mask >> (64 * i)) & _WORD) for i in range(words))


def _int(words) -> int:
    return sum(int(w) << (64 * i) for i, w in enumerate(words))


@njit(cache=True)
def _one(memo, blocks, cluster, job, a0, times, graphs, betas, ksteps, table, pool):
    """The loop of `lookahead.blocked_after` for degree ``a0`` on one future (``times``, ``graphs``,
    ``betas``, ``ksteps``) continued by the base rule ``table``: (blocked, 0, 0, 0), or
    (-1, g, a, free) at a placement the memos lack. The tuples are built by `count_blocked`."""
    free, dep_t, dep_seq, dep_mask, next_seq, t0 = cluster
    g0, b0, k0 = job
    horizon, paper, seq, n_graph_steps, step_s, use_steps = pool
    none = _empty_like(free)
    heap = [(0.0, np.int64(0), none)]
    heap.pop()
    for j in range(dep_t.shape[0]):  # sorted, hence a valid heap
        row = none
        for w in range(dep_mask.shape[1]):
            row = tuple_setitem(row, w, dep_mask[j, w])
        heap.append((dep_t[j], dep_seq[j], row))
    n = next_seq
    blocked = 0
    nfree = _count(free)
    t, g, b, a, k = t0, g0, b0, a0, k0
    i, count = -1, times.shape[0]
    while True:
        if a == 0 or a > nfree:
            blocked += 1
        else:
            key = (g, a) + free
            if key in memo:
                value = memo[key]
            else:  # the placement its first free blocks decide (`_Plan`), if known
                code = _block_code(blocks, g, a, free)
                if code < 0 or (g, a, code) not in blocks[0]:
                    return -1, g, a, free
                value = blocks[0][(g, a, code)]
            mask, step_time_s = value[:-1], value[-1]
            if _is_empty(mask):  # no placement
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
                    free = _take(free, mask)
                    nfree = _count(free)
                    heapq.heappush(heap, (t + jct, n, mask))
                    n += 1
        i += 1
        if i >= count:
            return blocked, 0, 0, none
        t = times[i]
        if t >= horizon:
            return blocked, 0, 0, none
        if len(heap) > 0 and heap[0][0] <= t:
            while len(heap) > 0 and heap[0][0] <= t:
                free = _give(free, heapq.heappop(heap)[2])
            nfree = _count(free)
        g, b = graphs[i], betas[i]
        if use_steps:
            k = ksteps[i]
        a = table[nfree]


@njit(cache=True)
def _batch(
    memo, blocks, out, pairs, missed, missed_free, cluster, job, degrees, times, graphs, betas, ksteps, tables, pool
):
    """out[base, degree, future] for each pair in ``pairs`` (its index in out's order); a pair that
    meets a placement the memos lack is left for later, its index, g and a written to the next
    row of ``missed`` and the free words to ``missed_free``. Returns the number left."""
    nb, nd, nk = out.shape
    m = 0
    for p in pairs:
        q, f = p // nk, p % nk
        bi, d = q // nd, q % nd
        r, g, a, fr = _one(
            memo, blocks, cluster, job, degrees[d], times[f], graphs[f], betas[f], ksteps[f], tables[bi], pool
        )
        if r < 0:
            missed[m, 0], missed[m, 1], missed[m, 2] = p, g, a
            for w in range(len(fr)):
                missed_free[m, w] = fr[w]
            m += 1
        else:
            out[bi, d, f] = r
    return m


@njit(cache=True)
def _first_block(free, masks, first, count):
    """Index of the first of ``count`` blocks (rows ``first``.. of ``masks``) all free; -1 if none:
    `pacml.cluster.placement.first_free_block`."""
    for i in range(count):
        fits = True
        for w in range(len(free)):
            if masks[first + i, w] & ~free[w] != _ZERO:
                fits = False
                break
        if fits:
            return i
    return -1


@njit(cache=True)
def _block_code(blocks, g, a, free):
    """The first free block of each of (g, a)'s deciding degrees, as one number (mixed radix);
    -1 where they do not decide the placement or are not known yet."""
    _, state, degrees, num_degrees, masks, first, count = blocks
    if state[g, a] != _DECIDED:
        return np.int64(-1)
    code = np.int64(0)
    for j in range(num_degrees[g, a]):
        n = degrees[g, a, j]
        code = code * (count[n] + 1) + _first_block(free, masks, first[n], count[n]) + 1
    return code


@njit(cache=True)
def _new_memos1():
    """Empty memos, made in compiled code: the interpreter's own typed-dict calls compile
    their methods afresh in every process (seconds)."""
    return Dict.empty(key_type=_KEY1, value_type=_VALUE1), Dict.empty(key_type=_BLOCK_KEY, value_type=_VALUE1)


@njit(cache=True)
def _new_memos4():
    return Dict.empty(key_type=_KEY4, value_type=_VALUE4), Dict.empty(key_type=_BLOCK_KEY, value_type=_VALUE4)


@njit(cache=True)
def _store(memo, blocks, empty, keys, frees, masks, step_times_s):
    """Row i: job graph keys[i, 0] at degree keys[i, 1] on free words frees[i] is placed on
    masks[i] (all zero: nowhere) with step time step_times_s[i]. ``empty``: a mask of no worker."""
    free, mask = empty, empty
    for i in range(keys.shape[0]):
        for w in range(frees.shape[1]):
            free = tuple_setitem(free, w, frees[i, w])
            mask = tuple_setitem(mask, w, masks[i, w])
        g, a = keys[i, 0], keys[i, 1]
        value = mask + (step_times_s[i],)
        memo[(g, a) + free] = value
        code = _block_code(blocks, g, a, free)
        if code >= 0:
            blocks[0][(g, a, code)] = value


_UNKNOWN, _DECIDED, _UNDECIDED = 0, 1, 2


class _Plan:
    """The kernel's memos and placement tables for one model, held on its `JctCache`
    (``plan_memo``) and dropped with the other mask-keyed memos (`JctCache.forget_placements`).

    ``memo``: (g, a, *free words) -> (*workers words, step time), every placement the kernel
    asked Python for. ``by_blocks``: (g, a, code) -> the same, where the first free blocks of
    the degrees that decide (g, a)'s placement (`ClusterModel.deciding`) are coded in ``code``:
    the model's ``by_blocks`` memo, so a placement on a mask never seen is found without
    Python when its deciding blocks were (at 128 workers and more, where masks rarely repeat,
    almost always). ``state[g, a]``: whether (g, a)'s deciding degrees are known, and whether
    they decide; ``degrees[g, a, :num_degrees[g, a]]`` lists them; the blocks of n servers are
    rows ``first[n]``.. ``first[n] + count[n]`` of ``masks`` (`RampTopology.blocks` in order).
    """

    def __init__(self, model: ClusterModel):
        topo = model.topology
        self.model = model
        self.words = words_for(topo.num_workers)
        self.memo, self.by_blocks = (_new_memos1 if self.words == 1 else _new_memos4)()
        top = topo.num_workers  # a degree the kernel places is at most the free count
        shape = (len(model.graphs), top + 1)
        self.state = np.full(shape, _UNKNOWN, dtype=np.int64)
        self.degrees = np.zeros((*shape, top), dtype=np.int64)
        self.num_degrees = np.zeros(shape, dtype=np.int64)
        self._block_masks: dict[int, np.ndarray] = {}
        self.first = np.zeros(top + 1, dtype=np.int64)
        self.count = np.zeros(top + 1, dtype=np.int64)
        self.masks = np.zeros((0, self.words), dtype=np.uint64)

    def tables(self) -> tuple:
        return (self.by_blocks, self.state, self.degrees, self.num_degrees, self.masks, self.first, self.count)

    def learn(self, g: int, a: int) -> None:
        """Fill in (g, a)'s deciding degrees, and the blocks of any degree not seen before."""
        if self.state[g, a] != _UNKNOWN:
            return
        deciding = self.model.deciding(g, a)
        if deciding is None:
            self.state[g, a] = _UNDECIDED
            return
        topo = self.model.topology
        for n in deciding:
            if n not in self._block_masks:
                rows = [_words(bmask, self.words) for bmask, _servers in topo.blocks(n)]
                self._block_masks[n] = np.array(rows, dtype=np.uint64).reshape(len(rows), self.words)
                self._pack()
        radix = 1
        for n in deciding:
            radix *= int(self.count[n]) + 1
        if radix >= 1 << 62:  # the code would overflow: these keep to the mask-keyed memo
            self.state[g, a] = _UNDECIDED
            return
        self.degrees[g, a, : len(deciding)] = deciding
        self.num_degrees[g, a] = len(deciding)
        self.state[g, a] = _DECIDED

    def _pack(self) -> None:
        first = 0
        for n in sorted(self._block_masks):
            self.first[n], self.count[n] = first, len(self._block_masks[n])
            first += len(self._block_masks[n])
        self.masks = np.concatenate([self._block_masks[n] for n in sorted(self._block_masks)])


def _plan(model: ClusterModel) -> _Plan:
    if model.cache.plan_memo is None:
        model.cache.plan_memo = _Plan(model)
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
    plan = _plan(model)
    nw = plan.words
    w = model.cfg.workload
    deps = state.departures
    nd = len(deps)
    dep_t = np.fromiter((x[0] for x in deps), np.float64, nd)
    dep_seq = np.fromiter((x[1] for x in deps), np.int64, nd)
    dep_mask = np.array([_words(x[2], nw) for x in deps], dtype=np.uint64).reshape(nd, nw)
    times = np.ascontiguousarray(times_s, dtype=np.float64)
    nk = times.shape[0]
    use_steps = steps is not None
    ksteps = np.ascontiguousarray(future_steps if use_steps else np.zeros((nk, 0)), dtype=np.int64)
    tables = np.array([b.degree_by_free for b in bases], dtype=np.int64)
    out = np.empty((len(bases), len(degrees), nk), dtype=np.int64)
    cluster = (_words(state.free_mask, nw), dep_t, dep_seq, dep_mask, state.next_seq, float(state.time_s))
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
    # every pair runs; those that meet a placement the memos lack wait while Python places
    # them all, then run again from their start (a few kernel calls a decision, not one a miss)
    pairs = np.arange(out.size, dtype=np.int64)
    missed = np.empty((out.size, 3), dtype=np.int64)
    missed_free = np.empty((out.size, nw), dtype=np.uint64)
    while True:
        m = _batch(plan.memo, plan.tables(), out, pairs, missed, missed_free, *args)
        if m == 0:
            return out
        # each distinct (g, a, free words) once, at the first row that asks for it, in asking order
        asked = np.hstack([missed[:m, 1:].astype(np.uint64), missed_free[:m]])
        rows = np.sort(np.unique(asked, axis=0, return_index=True)[1])
        keys, frees = missed[rows, 1:], missed_free[rows]
        masks = np.zeros_like(frees)
        step_times_s = np.zeros(len(rows))
        for i, (g, a) in enumerate(keys.tolist()):
            plan.learn(g, a)
            alloc = model.allocate(g, a, _int(frees[i]))
            if alloc is not None:
                masks[i] = _words(alloc.workers_mask, nw)
                step_times_s[i] = alloc.step.step_time_s
        _store(plan.memo, plan.tables(), _words(0, nw), keys, frees, masks, step_times_s)
        pairs = missed[:m, 0].copy()
