"""The episode loop: jobs arrive, a policy picks each one's degree, jobs run and depart.

Events are ordered by ``(time_s, priority, seq)``: a departure (priority 0) frees its
servers before an arrival (priority 1) at the same instant decides. One decision per
arrival; a job not placed at its arrival is blocked (no queue, as in ddls). The
simulator never knows which policy decides: it hands out a `Decision` and takes a degree.
`Episode.fork` copies an episode exactly and cheaply (graphs, arrivals and caches are
shared, being immutable or memo tables); `Decision.snapshot` hands planners the cluster's
state (free servers and pending departures) without the simulator.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from pacml.graphs.opgraph import OpGraph
from pacml.sim.experiment import ClusterModel
from pacml.sim.lookahead import ClusterState
from pacml.sim.records import JobRecord
from pacml.sim.trace import trace_arrivals
from pacml.sim.workload import Arrivals, episode_pmf, sample_arrivals


@dataclass(frozen=True, eq=False)
class Decision:
    """What a policy sees when a job arrives."""

    job_idx: int
    time_s: float
    graph_index: int
    graph: OpGraph
    beta: float
    sequential_jct_s: float
    """On the simulation clock."""
    max_acceptable_jct_s: float
    mask: np.ndarray
    """(max_degree + 1,) bool: mask[a] says degree a may be chosen; mask[0] is always True."""
    free_workers: int
    num_workers: int
    running_jobs: int
    lookahead: Callable[[int], float | None]
    """lookahead(a) -> the job's exact JCT at degree a on the current cluster, or None if it
    cannot be placed. Pure: it changes nothing (the oracle baseline uses it)."""
    pool: tuple[OpGraph, ...]
    """The job pool the job is drawn from (``graph`` is ``pool[graph_index]``)."""
    pool_sequential_jct_s: np.ndarray
    """Sequential JCT of every pool graph, simulation clock."""
    snapshot: Callable[[], ClusterState]
    """The cluster now (free servers, pending departures), for planning policies."""
    future: Callable[[int], Arrivals]
    """future(h) -> the episode's true next h arrivals. Only the clairvoyant upper bound
    (``rollout_clairvoyant``) reads it; no deployable policy may."""
    num_training_steps: int
    """The steps this job trains for (a trace's, else its graph's own)."""
    interarrival_s: float
    """The episode's mean interarrival (simulation clock): what a planner samples futures at."""
    offered_load: float
    """The episode's offered load: mean sequential JCT of the pool / (interarrival x workers)."""
    horizon_s: float
    """The episode's horizon (simulation clock)."""
    placed_step_times: Callable[[], tuple[tuple[int, float], ...]] | None = None
    """placed_step_times() -> (degree, step time) of every valid degree the placer places now,
    ascending (a placed degree's JCT is its step time x ``num_training_steps``, `lookahead`'s
    number): what per-degree features read in one call."""

    def meets_requirement(self, degree: int) -> bool:
        """Whether the job at ``degree`` places now and its exact JCT meets the requirement:
        every other degree blocks it (what the oracle, the planners and the feasible mask read)."""
        jct = self.lookahead(degree)
        return jct is not None and jct <= self.max_acceptable_jct_s


class Episode:
    """One episode; drive it with `decision` / `step(action)` until `done`."""

    def __init__(self, model: ClusterModel, dist: str, rng: np.random.Generator):
        self.model = model
        cfg = model.cfg
        self.pmf = episode_pmf(cfg.distributions, dist, rng)
        if model.trace_workload is not None:
            self.interarrival_s = model.interarrival_s
            self.arrivals = trace_arrivals(model.trace_workload, cfg.workload, len(model.graphs), self.pmf, rng)
        else:
            self.interarrival_s = model.episode_interarrival_s(rng)
            self.arrivals = sample_arrivals(cfg.workload, len(model.graphs), self.interarrival_s, self.pmf, rng)
        self.offered_load = model.offered_load_of(self.interarrival_s)
        self.horizon_s = cfg.workload.horizon_s
        self.paper_accounting = cfg.workload.horizon_accounting == "paper"
        self.free_mask = model.topology.all_mask
        self._departures: list[tuple[float, int, int, int]] = []  # (time_s, priority, seq, job)
        self._next_seq = 0
        self._running: dict[int, JobRecord] = {}
        self._job_masks: dict[int, int] = {}
        self.records: list[JobRecord] = []
        self._k = 0
        self.decision: Decision | None = None
        self._advance()

    @property
    def done(self) -> bool:
        return self.decision is None

    def fork(self) -> Episode:
        """An exact, independent copy: stepping it never changes this episode, and stepped
        with the same degrees it yields the same records. Graphs, arrivals, the PMF and the
        model's caches are shared (immutable or memo tables); only the mutable state is copied."""
        new = Episode.__new__(Episode)
        new.__dict__.update(self.__dict__)
        new._departures = list(self._departures)
        new._running = dict(self._running)
        new._job_masks = dict(self._job_masks)
        new.records = list(self.records)
        return new

    def snapshot(self) -> ClusterState:
        """The cluster at the current decision: free servers and pending departures (built
        once per decision: planners, their tie-break and the features all ask for it)."""
        cached = self.__dict__.get("_snapshot")
        if cached is not None and cached[0] == self._k:
            return cached[1]
        deps = tuple(sorted((t, seq, self._job_masks[job]) for t, _, seq, job in self._departures))
        t = self.decision.time_s if self.decision is not None else self.horizon_s
        state = ClusterState(t, self.free_mask, deps, self._next_seq)
        self._snapshot = (self._k, state)
        return state

    def future(self, h: int) -> Arrivals:
        """The next ``h`` arrivals after the current one (the episode's true future)."""
        arr, lo = self.arrivals, self._k + 1
        hi = min(lo + max(int(h), 0), len(arr.time_s))
        steps = None if arr.steps is None else arr.steps[lo:hi]
        return Arrivals(arr.time_s[lo:hi], arr.interarrival_s[lo:hi], arr.graph[lo:hi], arr.beta[lo:hi], steps)

    def steps_of(self, k: int) -> int:
        """Training steps of arrival ``k``: the trace's, else its graph's own."""
        arr = self.arrivals
        return int(arr.steps[k]) if arr.steps is not None else self.model.num_training_steps[int(arr.graph[k])]

    def sequential_jct_of(self, k: int) -> float:
        """Sequential JCT of arrival ``k`` (simulation clock): its graph's, or for a trace's
        job one sequential step times its own steps."""
        g = int(self.arrivals.graph[k])
        if self.arrivals.steps is None:
            return float(self.model.sequential_jct_s[g])
        return self.model.sequential_step_s[g] * int(self.arrivals.steps[k])

    # ---- the loop ------------------------------------------------------------------------
    def _depart_until(self, t: float) -> None:
        while self._departures and self._departures[0][0] <= t:
            _, _, _, job = heapq.heappop(self._departures)
            rec = self._running.pop(job)
            self.free_mask |= self._job_masks.pop(job)
            self.records.append(rec.but(outcome="completed"))

    def _advance(self) -> None:
        arr = self.arrivals
        self.decision = None
        if self._k >= len(arr.time_s):
            self._finish()
            return
        t = float(arr.time_s[self._k])
        self._depart_until(t)
        if t >= self.horizon_s:
            self._finish()
            return
        self.decision = self._make_decision(self._k, t)

    def _make_decision(self, k: int, t: float) -> Decision:
        m = self.model
        g = int(self.arrivals.graph[k])
        beta = float(self.arrivals.beta[k])
        steps = self.steps_of(k)
        seq = self.sequential_jct_of(k)
        free = self.free_mask.bit_count()
        mask = np.zeros(m.max_degree + 1, dtype=bool)
        mask[0] = True
        for a in m.placeable:
            if a <= free:
                mask[a] = True
        free_mask = self.free_mask

        def lookahead(a: int) -> float | None:
            if not (0 < a < len(mask) and mask[a]):
                return None
            alloc = m.allocate(g, a, free_mask)
            return None if alloc is None else m.jct_s(alloc, steps)

        def placed_step_times() -> tuple[tuple[int, float], ...]:
            return m.placed_step_times(g, free_mask)

        return Decision(
            k,
            t,
            g,
            m.graphs[g],
            beta,
            seq,
            beta * seq,
            mask,
            free,
            m.topology.num_workers,
            len(self._running),
            lookahead,
            m.graphs,
            m.sequential_jct_s,
            self.snapshot,
            self.future,
            steps,
            self.interarrival_s,
            self.offered_load,
            self.horizon_s,
            placed_step_times,
        )

    def step(self, action: int) -> JobRecord:
        """Apply the degree ``action`` to the current decision; return the job's record."""
        d = self.decision
        assert d is not None, "episode is done"
        if not 0 <= action < len(d.mask):
            raise ValueError(f"degree {action} is out of range 0..{len(d.mask) - 1}")
        m = self.model
        g = d.graph_index
        cause = None
        alloc = None
        if action == 0:
            cause = "rejected"
        elif not d.mask[action]:
            cause = "invalid"
        else:
            alloc = m.allocate(g, action, self.free_mask)
            if alloc is None:
                cause = "placement"
            elif m.jct_s(alloc, d.num_training_steps) > d.max_acceptable_jct_s:
                cause = "jct"
        job = {
            "job_idx": d.job_idx,
            "model": d.graph.name,
            "arrival_s": d.time_s,
            "interarrival_s": float(self.arrivals.interarrival_s[d.job_idx]),
            "beta": d.beta,
            "sequential_jct_s": d.sequential_jct_s,
            "max_acceptable_jct_s": d.max_acceptable_jct_s,
            "job_bytes": float(m.job_bytes[g]),
            "action": action,
        }
        if cause is not None:
            rec = JobRecord(**job, outcome="blocked", cause=cause)
            self.records.append(rec)
        else:
            jct = m.jct_s(alloc, d.num_training_steps)
            rec = JobRecord(
                **job,
                outcome="running",
                jct_s=jct,
                finish_s=d.time_s + jct,
                num_workers=alloc.step.num_workers,
                utilisation=alloc.step.utilisation,
                partitioned_bytes=m.partitioned_bytes(g, action),
            )
            self.free_mask &= ~alloc.workers_mask
            self._running[d.job_idx] = rec
            self._job_masks[d.job_idx] = alloc.workers_mask
            heapq.heappush(self._departures, (d.time_s + jct, 0, self._next_seq, d.job_idx))
            self._next_seq += 1
        self._k += 1
        self._advance()
        return rec

    def _finish(self) -> None:
        self._depart_until(self.horizon_s)
        for job in sorted(self._running):
            rec = self._running[job]
            if self.paper_accounting:
                self.records.append(rec.but(outcome="blocked", cause="horizon"))
            else:
                self.records.append(rec)  # outcome "running"
        self._running.clear()
        if self.paper_accounting:
            arr = self.arrivals
            for k in range(self._k, len(arr.time_s)):
                g = int(arr.graph[k])
                seq = self.sequential_jct_of(k)
                self.records.append(
                    JobRecord(
                        job_idx=k,
                        model=self.model.graphs[g].name,
                        arrival_s=float(arr.time_s[k]),
                        interarrival_s=float(arr.interarrival_s[k]),
                        beta=float(arr.beta[k]),
                        sequential_jct_s=seq,
                        max_acceptable_jct_s=float(arr.beta[k]) * seq,
                        job_bytes=float(self.model.job_bytes[g]),
                        outcome="undecided",
                    )
                )
            self._k = len(arr.time_s)
        self.records.sort(key=lambda r: r.job_idx)
