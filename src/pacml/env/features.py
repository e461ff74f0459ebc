"""Observation features of PAC-ML (paper.md 5, ddls.md 6). numpy only.

Node and edge features depend on the job graph alone, so they are computed once per graph
(`graph_features`) and an episode reuses them for every arrival. The global vector mixes
static job features (also per graph), the arriving job's beta, the cluster state and the
action mask:

- 5 node features: compute / job max, is-max-compute, memory / job max, is-max-memory,
  depth / max depth (ddls B20, an always-0 is-max-compute, is fixed);
- 2 edge features: size / job max, is-max-size;
- 15 job features: #ops, #deps, sequential JCT, max acceptable JCT, beta, total op
  memory, total dependency size, training steps, raw beta, and the mean and median of the
  normalised op compute, op memory and dependency size. The sizes are scaled one of two ways
  (``agent.feature_scales``): ``pool``, the paper's min-max over the job pool (a min-max over
  a constant is 1, as in ddls), so a job reads differently in another pool; or ``fixed``
  (`LogScales`), log10 of its seconds, bytes and counts mapped from constant ranges, so a
  job's features are the same in every pool;
- 2 cluster features: fraction of workers occupied, running jobs / workers;
- the action mask (max_degree + 1 entries);
- optionally (``lookahead``, an extension) two flags per degree: the placer can place the
  job now, and its exact JCT then meets the requirement;
- optionally (``shape``, the per-job agent's inputs, docs/agent.md) what a planner reads off
  the cluster: per degree its JCT over the requirement (clipped at 2, 2 when unplaceable);
  the free fraction of every communication group and every rack; the fraction of workers
  that pending departures free within 1/32, 1/16, 1/8, 1/4, 1/2 and 1 mean sequential JCT
  of the pool (``fixed`` scales: 1 sequential JCT of the arriving job); and the fraction of
  the episode left;
- optionally (``load``, an extension) the episode's offered load, as log2 of it, last.

With ``job_lengths`` (an extension for trace arrivals, whose jobs train for their own steps)
the sequential JCT, acceptable JCT and training-steps features, and the ``fixed`` release
windows, are the arriving job's own rather than its graph's; without a trace the two agree.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from pacml.graphs.opgraph import OpGraph

NODE_FEATURES = 5
EDGE_FEATURES = 2
JOB_FEATURES = 15
CLUSTER_FEATURES = 2


@dataclass(frozen=True, eq=False)
class GraphFeatures:
    """Static features of one job graph."""

    node: np.ndarray  # (num_ops, 5) float32
    edge: np.ndarray  # (num_deps, 2) float32
    src: np.ndarray  # (num_deps,) int64
    dst: np.ndarray


def _safe_ratio(x: np.ndarray) -> np.ndarray:
    top = x.max() if len(x) else 0.0
    return (x / top) if top > 0 else np.zeros_like(x)


def _is_first_max(x: np.ndarray) -> np.ndarray:
    out = np.zeros(len(x))
    if len(x):
        out[int(np.argmax(x))] = 1.0
    return out


def graph_features(graph: OpGraph) -> GraphFeatures:
    t, mem, size = graph.compute_time_s, graph.memory_bytes, graph.size_bytes
    depth = graph.op_depth.astype(np.float64)
    node = np.column_stack(
        [_safe_ratio(t), _is_first_max(t), _safe_ratio(mem), _is_first_max(mem), _safe_ratio(depth)]
    ).astype(np.float32)
    edge = np.column_stack([_safe_ratio(size), _is_first_max(size)]).astype(np.float32)
    return GraphFeatures(node, edge.reshape(-1, EDGE_FEATURES), graph.src.copy(), graph.dst.copy())


def _minmax(x: float, lo: float, hi: float) -> float:
    return 1.0 if hi == lo else (x - lo) / (hi - lo)


@dataclass(frozen=True)
class LogScales:
    """``fixed`` feature scales: x -> (log10 x - low) / (high - low) per unit, from
    ``agent.log10_seconds``, ``log10_bytes`` and ``log10_counts`` (the agent's config, so its
    checkpoint carries them)."""

    seconds: tuple[float, float]
    bytes: tuple[float, float]
    counts: tuple[float, float]

    @staticmethod
    def scale(x: float, lo_hi: tuple[float, float]) -> float:
        lo, hi = lo_hi
        return (float(np.log10(max(x, 1e-30))) - lo) / (hi - lo)


RELEASE_FRACTIONS = (1 / 32, 1 / 16, 1 / 8, 1 / 4, 1 / 2, 1.0)
"""Windows (in mean sequential JCTs of the pool) of the pending-release features."""


@dataclass(frozen=True)
class ShapeInputs:
    """What the ``shape`` features need beyond the pool: the acting cluster's C, R and S (the
    episode's horizon comes with each `Decision`)."""

    communication_groups: int
    racks_per_group: int
    servers_per_rack: int

    @property
    def dim_without_degrees(self) -> int:
        c, r = self.communication_groups, self.racks_per_group
        return c + c * r + len(RELEASE_FRACTIONS) + 1

    @cached_property
    def group_masks(self) -> tuple[tuple[int, int], ...]:
        """(worker bitmask, size) of every communication group, then of every rack (workers are
        numbered group-major, then rack, then server: `RampTopology.index`)."""
        c, r, s = self.communication_groups, self.racks_per_group, self.servers_per_rack
        groups = [(((1 << (r * s)) - 1) << (i * r * s), r * s) for i in range(c)]
        racks = [(((1 << s) - 1) << (i * s), s) for i in range(c * r)]
        return tuple(groups + racks)


class FeatureSpace:
    """Features of a fixed job pool; ``global_vector`` builds one arrival's global input."""

    def __init__(
        self,
        graphs: list[OpGraph] | tuple[OpGraph, ...],
        sequential_jct_s: np.ndarray,
        num_workers: int,
        num_actions: int,
        lookahead: bool = False,
        shape: ShapeInputs | None = None,
        scales: LogScales | None = None,
        load: bool = False,
        job_lengths: bool = False,
        feasible_mask: bool = False,
    ):
        self.lookahead = lookahead
        self.feasible_mask = feasible_mask
        self.load = load
        self.job_lengths = job_lengths
        self.shape = shape
        self.scales = scales
        self.graphs = tuple(graphs)
        self.graph_features = tuple(graph_features(g) for g in self.graphs)
        self.num_workers = num_workers
        self.num_actions = num_actions
        seq = np.asarray(sequential_jct_s, dtype=np.float64)
        stats = np.array(
            [
                [g.num_ops, g.num_deps, g.memory_bytes.sum(), g.size_bytes.sum(), g.num_training_steps]
                for g in self.graphs
            ],
            dtype=np.float64,
        )
        self._seq = seq
        self._seq_mean = float(seq.mean())  # the pending-release windows' ``pool`` scale
        self._seq_range = (seq.min(), seq.max())
        self._acc_range = (0.0, seq.max())
        self._steps_range = (stats[:, 4].min(), stats[:, 4].max())
        static = []
        for i, f in enumerate(self.graph_features):
            if scales is None:
                cols = [_minmax(stats[i, k], stats[:, k].min(), stats[:, k].max()) for k in range(stats.shape[1])]
            else:
                units = (scales.counts, scales.counts, scales.bytes, scales.bytes, scales.counts)
                cols = [LogScales.scale(stats[i, k], unit) for k, unit in enumerate(units)]
            node, edge = f.node, f.edge
            shape = [
                float(np.mean(node[:, 0])),
                float(np.median(node[:, 0])),
                float(np.mean(node[:, 2])),
                float(np.median(node[:, 2])),
                float(np.mean(edge[:, 0])) if len(edge) else 0.0,
                float(np.median(edge[:, 0])) if len(edge) else 0.0,
            ]
            static.append(cols + shape)
        self._static = np.array(static, dtype=np.float64)  # (G, 11)
        # each graph's global vector with its static entries filled (the rest zero): ops,
        # deps, total op memory, total dependency size, training steps, means and medians
        self._static_vectors = np.zeros((len(self.graphs), self.global_dim), dtype=np.float32)
        self._static_vectors[:, [0, 1, 6, 7, 8]] = self._static[:, :5]
        self._static_vectors[:, 9:15] = self._static[:, 5:11]

    @staticmethod
    def _log_scales(cfg) -> LogScales | None:
        a = cfg.agent
        if a.feature_scales == "pool":
            return None
        return LogScales(tuple(a.log10_seconds), tuple(a.log10_bytes), tuple(a.log10_counts))

    @staticmethod
    def _shape_inputs(cfg, num_workers: int | None = None) -> ShapeInputs | None:
        """The ``shape`` inputs of an agent of config ``cfg`` acting on a cluster of
        ``num_workers``: its communication groups and racks per group are the agent's (they
        set its input count), its servers per rack the acting cluster's, which may be another
        size than the one it learnt on (the cluster_size experiment)."""
        c = cfg.cluster
        if not cfg.agent.shape_features:
            return None
        racks = c.communication_groups * c.racks_per_group
        servers = c.servers_per_rack if num_workers is None else num_workers // racks
        if num_workers is not None and (servers < 1 or servers * racks != num_workers):
            from pacml.errors import ConfigError

            raise ConfigError(
                "cluster.communication_groups",
                (c.communication_groups, c.racks_per_group),
                f"an agent that reads {c.communication_groups} x {c.racks_per_group} racks cannot act on a "
                f"cluster of {num_workers} workers (not a whole number of servers per rack)",
            )
        return ShapeInputs(c.communication_groups, c.racks_per_group, servers)

    @classmethod
    def for_agent(cls, cfg, graphs, sequential_jct_s: np.ndarray, num_workers: int, num_actions: int) -> FeatureSpace:
        """The feature space an agent of config ``cfg`` reads on this pool: the one place
        where training, validation and evaluation build it."""
        return cls(
            graphs,
            sequential_jct_s,
            num_workers,
            num_actions,
            cfg.agent.lookahead_features,
            cls._shape_inputs(cfg, num_workers),
            cls._log_scales(cfg),
            cfg.agent.load_feature,
            cfg.agent.job_length_features,
            cfg.agent.feasible_mask,
        )

    @classmethod
    def agent_global_dim(cls, cfg, num_actions: int) -> int:
        """``global_dim`` of an agent of config ``cfg`` (independent of the pool)."""
        return cls.dim(num_actions, cfg.agent.lookahead_features, cls._shape_inputs(cfg), cfg.agent.load_feature)

    @staticmethod
    def dim(num_actions: int, lookahead: bool, shape: ShapeInputs | None, load: bool = False) -> int:
        base = JOB_FEATURES + CLUSTER_FEATURES + num_actions * (3 if lookahead else 1)
        if shape is not None:
            base += num_actions + shape.dim_without_degrees
        return base + int(load)

    @property
    def global_dim(self) -> int:
        return self.dim(self.num_actions, self.lookahead, self.shape, self.load)

    def global_vector(
        self,
        graph_index: int,
        beta: float,
        free_workers: int,
        running_jobs: int,
        mask: np.ndarray,
        lookahead: np.ndarray | None = None,
        job: tuple[float, int] | None = None,
    ) -> np.ndarray:
        """``job``: the arriving job's own (sequential JCT, training steps), else its graph's."""
        seq = self._seq[graph_index] if job is None else job[0]
        out = self._static_vectors[graph_index].copy()  # ops, deps, memory, dependency size, steps, shape
        if self.scales is None:
            out[2] = _minmax(seq, *self._seq_range)  # sequential JCT
            out[3] = _minmax(beta * seq, *self._acc_range)  # max acceptable JCT
        else:
            out[2] = LogScales.scale(seq, self.scales.seconds)
            out[3] = LogScales.scale(beta * seq, self.scales.seconds)
        out[4] = beta  # beta, min-max over [0, 1]
        out[5] = beta  # raw beta
        if job is not None:  # the job's own training steps (else its graph's, static)
            if self.scales is None:
                out[8] = _minmax(job[1], *self._steps_range)
            else:
                out[8] = LogScales.scale(job[1], self.scales.counts)
        out[15] = 1.0 - free_workers / self.num_workers  # occupied fraction
        out[16] = running_jobs / self.num_workers
        a = self.num_actions
        out[17 : 17 + a] = mask
        if self.lookahead:
            out[17 + a : 17 + 3 * a] = lookahead
        return out

    def action_mask(self, decision) -> np.ndarray:
        """The degrees the agent may choose: the engine's mask, and with ``feasible_mask`` only
        those the placer can place now whose exact JCT meets the requirement (0 always)."""
        mask = decision.mask.copy()
        if self.feasible_mask:  # `Decision.meets_requirement` for each degree, from the features' memo
            mask[1:] = False
            steps, acceptable = decision.num_training_steps, decision.max_acceptable_jct_s
            for d, step_time_s in decision.placed_step_times():
                mask[d] = step_time_s * steps <= acceptable
        return mask

    def decision_vector(self, decision) -> np.ndarray:
        """`global_vector` of an engine `Decision`."""
        flags = None
        if self.lookahead:
            flags = np.zeros(2 * self.num_actions, dtype=np.float32)
            for d in np.flatnonzero(decision.mask[1:]) + 1:
                jct = decision.lookahead(int(d))
                if jct is not None:
                    flags[d] = 1.0
                    flags[self.num_actions + d] = float(jct <= decision.max_acceptable_jct_s)
        job = (decision.sequential_jct_s, decision.num_training_steps) if self.job_lengths else None
        vec = self.global_vector(
            decision.graph_index, decision.beta, decision.free_workers, decision.running_jobs, decision.mask, flags, job
        )
        end = len(vec) - int(self.load)
        if self.shape is not None:
            vec[end - self.num_actions - self.shape.dim_without_degrees : end] = self.shape_vector(decision)
        if self.load:
            vec[end] = np.log2(decision.offered_load)
        return vec

    def shape_vector(self, decision) -> np.ndarray:
        """The ``shape`` features of a `Decision` (see the module doc)."""
        sh, a = self.shape, self.num_actions
        out = np.empty(a + sh.dim_without_degrees, dtype=np.float32)
        out[:a] = 1.0  # degree 0, the invalid and the unplaceable
        steps, acceptable = decision.num_training_steps, decision.max_acceptable_jct_s
        for d, step_time_s in decision.placed_step_times():
            out[d] = min(step_time_s * steps / acceptable, 2.0) / 2.0  # the JCT of `lookahead`
        state = decision.snapshot()
        k = a
        for group_mask, size in sh.group_masks:  # communication groups, then racks
            out[k] = (state.free_mask & group_mask).bit_count() / size
            k += 1
        if self.scales is None:
            scale = self._seq_mean
        else:
            scale = float(decision.sequential_jct_s if self.job_lengths else self._seq[decision.graph_index])
        released = 0  # workers freed by the departures due so far (ascending finish times)
        i, deps = 0, state.departures
        for f in RELEASE_FRACTIONS:
            until = decision.time_s + f * scale
            while i < len(deps) and deps[i][0] <= until:
                released += deps[i][2].bit_count()
                i += 1
            out[k] = released / self.num_workers
            k += 1
        out[k] = max(0.0, 1.0 - decision.time_s / decision.horizon_s)
        return out
