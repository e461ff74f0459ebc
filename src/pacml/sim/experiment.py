"""The static part of an experiment: the job pool, the cluster, its config and the warm caches.

`ClusterModel` answers where a job would go at a degree on an occupancy and how long its
step takes (`allocate`), memoised in an explicit `JctCache` (never module state).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pacml.cluster.placement import PLACERS, canonical_key, deciding_degrees, first_free_block
from pacml.cluster.topology import RampTopology
from pacml.config import Config
from pacml.config.checks import MAX_ARRIVALS
from pacml.errors import ConfigError, InfeasibleClusterError
from pacml.graphs.opgraph import OpGraph
from pacml.graphs.partition import PartitionedGraph, partition
from pacml.sim.jct import StepResult, simulate_step
from pacml.sim.trace import Trace, TraceWorkload, trace_workload

_UNKNOWN = object()
"""A memo's answer for a key it lacks (None is an answer: the job does not place)."""


@dataclass(frozen=True)
class Allocation:
    """A job placed at a degree on some occupancy: its servers and simulated step."""

    workers_mask: int
    step: StepResult


@dataclass(eq=False)
class JctCache:
    """Memoises partitions, placements and step simulations across episodes.

    Keys: partitions by (graph, action); step results by (graph, action, canonical
    placement); placement outcomes by (graph, action, free-server mask), and by (graph,
    action, the first free blocks that decide the placement: `deciding_degrees`), which
    many masks share; first free blocks by (degree, free-server mask). An explicit object,
    never module state: share one between episodes to keep it warm.

    The memos keyed by free-server masks are bounded: past ``max_placements`` entries they
    start over (`remember_placement`). A 32-worker training stays far below the bound (a
    default built-in β_A training ended with about 143,000 entries); at 64 workers, where
    masks rarely repeat, they grew by about 330,000 entries (100-140 MB) an episode, to 4.5 GB
    in one training; bounded, that training peaked at 1.7 GB for 27 % more CPU (docs/agent.md).
    """

    partitions: dict[tuple[int, int], PartitionedGraph] = field(default_factory=dict)
    steps: dict[tuple[int, int, bytes], StepResult] = field(default_factory=dict)
    placements: dict[tuple[int, int, int], Allocation | None] = field(default_factory=dict)
    by_blocks: dict[tuple[int, int, tuple[int, ...]], Allocation | None] = field(default_factory=dict)
    first_blocks: dict[tuple[int, int], int] = field(default_factory=dict)
    degree_steps: dict[tuple[int, int], tuple[tuple[int, float], ...]] = field(default_factory=dict)
    """(graph, free mask) -> (degree, step time) of every degree the placer places there
    (`ClusterModel.placed_step_times`): a decision's per-degree features in one lookup."""
    step_simulations: int = 0
    plan_memo: Any = None
    """The compiled look-ahead's copy of ``placements`` and ``by_blocks`` (numba typed dicts, with
    the tables that code a mask's deciding blocks; `pacml.sim.lookahead_jit`)."""
    max_placements: int = 2_000_000
    """Entries of ``placements`` kept before the mask-keyed memos start over (a memory bound;
    the answers are the same either way)."""
    placements_forgotten: int = 0
    """How many times they started over."""

    def forget_placements(self) -> None:
        """Empty the memos keyed by free-server masks (``placements``, ``first_blocks``,
        ``degree_steps`` and the compiled look-ahead's ``plan_memo``); the partitions, steps and block-keyed outcomes,
        which a mask does not key, stay."""
        self.placements.clear()  # cleared in place: the look-ahead holds its ``get``
        self.first_blocks.clear()
        self.degree_steps.clear()
        self.plan_memo = None
        self.placements_forgotten += 1

    def remember_placement(self, key: tuple[int, int, int], alloc: Allocation | None) -> Allocation | None:
        """Store ``alloc`` under ``key`` in ``placements``, starting the mask-keyed memos over
        first when they hold ``max_placements`` entries; returns ``alloc``."""
        if len(self.placements) >= self.max_placements:
            self.forget_placements()
        self.placements[key] = alloc
        return alloc


class ClusterModel:
    """The static part of an experiment: graphs, cluster, config and the warm caches."""

    def __init__(
        self, graphs: Sequence[OpGraph], cfg: Config, cache: JctCache | None = None, trace: Trace | None = None
    ):
        if not graphs:
            raise InfeasibleClusterError("no job graphs given")
        self.graphs = tuple(graphs)
        self.cfg = cfg
        self.topology = RampTopology(cfg.cluster)
        self.place = PLACERS[cfg.cluster.placement]
        self._deciding: dict[tuple[int, int], tuple[int, ...] | None] = {}
        self._partitioned_bytes: dict[tuple[int, int], float] = {}
        self.cache = cache if cache is not None else JctCache()
        cap = cfg.cluster.worker_memory_bytes
        for g in self.graphs:
            worst = int(np.argmax(g.memory_bytes))
            if g.memory_bytes[worst] > cap:
                raise InfeasibleClusterError(
                    f"graph {g.name!r}: op {g.op_names[worst]!r} needs {g.memory_bytes[worst]:.4g} B, more than "
                    f"a worker's memory (cluster.worker_memory_bytes = {cap:.4g})"
                )
        w = cfg.workload
        scale = w.compute_time_scale
        self.sequential_jct_s = np.array([g.num_training_steps * g.step_time_s * scale for g in self.graphs])
        # one sequential training step of each graph: a trace job's sequential JCT is this x its steps
        self.sequential_step_s = tuple(float(g.step_time_s * scale) for g in self.graphs)
        self.num_training_steps = tuple(g.num_training_steps for g in self.graphs)
        self.job_bytes = np.array([g.memory_bytes.sum() + g.size_bytes.sum() for g in self.graphs])
        self.mean_sequential_jct_s = float(self.sequential_jct_s.mean())
        self.trace = trace
        self.trace_workload: TraceWorkload | None = None
        if trace is not None:  # the pool's mean step, times the trace's mean steps
            if cfg.trace.path is None:
                raise ConfigError("trace.path", None, "a trace was given but the config names no trace file")
            mean_step_s = float(np.mean(self.sequential_step_s))
            self.trace_workload = trace_workload(
                trace,
                cfg.trace,
                w.num_training_steps,
                mean_step_s,
                self.topology.num_workers,
                (w.offered_load, w.interarrival_s),
                w.horizon_s,
            )
            self.mean_sequential_jct_s = mean_step_s * self.trace_workload.mean_steps
        elif cfg.trace.path is not None:
            raise ConfigError(
                "trace.path", cfg.trace.path, "the config names a trace but none was read (pacml.trace_csv)"
            )
        self.load_range = w.offered_load_range
        if w.offered_load is not None:
            self.interarrival_s = self.interarrival_for(w.offered_load)
        else:
            self.interarrival_s = w.interarrival_s
        if not (np.isfinite(self.sequential_jct_s).all() and (self.sequential_jct_s > 0).all()):
            bad = [g.name for g, t in zip(self.graphs, self.sequential_jct_s) if not (np.isfinite(t) and t > 0)]
            raise InfeasibleClusterError(f"graphs {bad}: a job's sequential run time must be finite and > 0")
        densest = self.interarrival_s if self.load_range is None else self.interarrival_for(self.load_range[1])
        arrivals = w.horizon_s / densest + 1
        if not arrivals <= MAX_ARRIVALS:
            raise ConfigError(
                "workload.horizon_s",
                w.horizon_s,
                f"with an interarrival of {densest:.4g} s (offered_load {self.offered_load_of(densest):.4g}) an episode "
                f"holds {arrivals:.4g} arrivals, over {MAX_ARRIVALS}",
            )
        self.max_degree = min(cfg.cluster.max_degree, self.topology.num_workers)
        self.placeable = self.topology.placeable_degrees

    @property
    def offered_load(self) -> float:
        """Mean sequential JCT / (interarrival x workers)."""
        return self.offered_load_of(self.interarrival_s)

    def offered_load_of(self, interarrival_s: float) -> float:
        return self.mean_sequential_jct_s / (interarrival_s * self.topology.num_workers)

    def interarrival_for(self, offered_load: float) -> float:
        """The mean interarrival that gives ``offered_load`` on this pool and cluster."""
        return self.mean_sequential_jct_s / (offered_load * self.topology.num_workers)

    def episode_interarrival_s(self, rng: np.random.Generator) -> float:
        """An episode's mean interarrival: the model's, or with ``workload.offered_load_range``
        one drawn log-uniformly in load (the only draw it adds to the episode's stream)."""
        if self.load_range is None:
            return self.interarrival_s
        lo, hi = np.log(self.load_range)
        return self.interarrival_for(float(np.exp(rng.uniform(lo, hi))))

    def partitioned(self, g: int, action: int) -> PartitionedGraph:
        key = (g, action)
        pg = self.cache.partitions.get(key)
        if pg is None:
            p = self.cfg.partition
            pg = partition(
                self.graphs[g],
                action,
                p.min_op_time_s,
                p.paper_edge_sizes,
                self.topology.placeable_degrees if p.round_to_placeable else None,
            )
            self.cache.partitions[key] = pg
        return pg

    def partitioned_bytes(self, g: int, action: int) -> float:
        """Total op memory + dependency size of job graph ``g`` partitioned at ``action``."""
        key = (g, action)
        out = self._partitioned_bytes.get(key)
        if out is None:
            pg = self.partitioned(g, action)
            out = self._partitioned_bytes[key] = float(pg.memory_bytes.sum() + pg.total_dep_size_bytes)
        return out

    def allocate(self, g: int, action: int, free_mask: int) -> Allocation | None:
        """Where job graph ``g`` would go at ``action`` on ``free_mask``, and its step time."""
        key = (g, action, free_mask)
        hit = self.cache.placements.get(key, _UNKNOWN)
        if hit is not _UNKNOWN:
            return hit
        pg = self.partitioned(g, action)
        bkey = self._block_key(g, action, pg, free_mask)
        if bkey is not None and bkey in self.cache.by_blocks:
            return self.cache.remember_placement(key, self.cache.by_blocks[bkey])
        placement = self.place(pg, self.topology, free_mask)
        alloc = None
        if placement is not None:
            skey = (g, action, canonical_key(placement, self.topology))
            step = self.cache.steps.get(skey)
            if step is None:
                step = simulate_step(pg, placement, self.topology, self.cfg.workload.compute_time_scale)
                self.cache.steps[skey] = step
                self.cache.step_simulations += 1
            alloc = Allocation(placement.workers_mask, step)
        if bkey is not None:
            self.cache.by_blocks[bkey] = alloc
        return self.cache.remember_placement(key, alloc)

    def placed_step_times(self, g: int, free_mask: int) -> tuple[tuple[int, float], ...]:
        """(degree, step time) of every placeable degree up to the free count at which the
        placer places job graph ``g`` on ``free_mask``, ascending: `allocate` over the decision
        mask's degrees, memoised by (g, free_mask) (about half of a training's decisions find
        their graph and mask there)."""
        key = (g, free_mask)
        hit = self.cache.degree_steps.get(key)
        if hit is None:
            free = free_mask.bit_count()
            placed = ((a, self.allocate(g, a, free_mask)) for a in self.placeable if a <= free)
            hit = tuple((a, alloc.step.step_time_s) for a, alloc in placed if alloc is not None)
            self.cache.degree_steps[key] = hit
        return hit

    def deciding(self, g: int, action: int, pg: PartitionedGraph | None = None) -> tuple[int, ...] | None:
        """The degrees whose first free blocks decide job graph ``g``'s placement at ``action``
        on every occupancy (`deciding_degrees`), or None; memoised."""
        key = (g, action)
        if key not in self._deciding:
            pg = self.partitioned(g, action) if pg is None else pg
            self._deciding[key] = deciding_degrees(pg, self.topology, self.cfg.cluster.placement)
        return self._deciding[key]

    def _block_key(self, g: int, action: int, pg: PartitionedGraph, free_mask: int) -> tuple | None:
        """(g, action, the first free block of each deciding degree), or None where the
        placer's result depends on more than those blocks (`deciding_degrees`)."""
        degrees = self.deciding(g, action, pg)
        if degrees is None:
            return None
        first = self.cache.first_blocks
        blocks = []
        for n in degrees:
            b = first.get((n, free_mask))
            if b is None:
                b = first[(n, free_mask)] = first_free_block(self.topology, n, free_mask)
            blocks.append(b)
        return (g, action, tuple(blocks))

    @staticmethod
    def jct_s(alloc: Allocation, steps: int) -> float:
        """The JCT of a job placed at ``alloc`` that trains for ``steps`` (the engine's
        `Episode.steps_of`: a trace job's own, else its graph's)."""
        return alloc.step.step_time_s * steps
