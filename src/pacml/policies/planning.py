"""Policies that plan over a copy of the simulator, and the best constant degree.

- ``best_fixed``: the fixed degree with the fewest blocked jobs on the validation seeds
  (``workflow.validation_seeds``; never the test seeds), then applied like ``fixed-K``.
  `select` makes that choice and the planners' base policy (``planning.base_policy``: a name,
  ``best_fixed``, or ``tuned``: of best_fixed's three best degrees, the one whose rollout
  blocks the fewest jobs on the validation seeds).
- ``rollout``: at each arrival, for every valid degree, continue the cluster through the next
  H arrivals of K futures sampled from the workload (its own generator: it never sees the
  episode's future), later jobs by a base policy; the degree with the fewest blocked jobs wins.
  The K futures are common to every degree (common random numbers). With
  ``planning.extra_bases`` a degree's score is its fewest mean blocked jobs over several base
  policies (rollout with several heuristics).
- ``rollout_clairvoyant``: the same on the episode's one true future. An upper bound that no
  deployable policy has: every table and figure labels it so.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pacml.config import PlanningConfig
from pacml.policies.base import Selection
from pacml.sim.engine import ClusterModel, Decision
from pacml.sim.lookahead import base_rule, blocked_after
from pacml.sim.workload import episode_pmf

PLANNER_PMF_SEED = 0x9A7
"""Seed of the planner's own beta PMF (for skew-normal distributions the PMF is sampled)."""


def best_fixed_degree(model: ClusterModel, dist: str, seeds) -> tuple[int, dict[int, float]]:
    """The placeable degree whose fixed policy blocks the fewest jobs on ``seeds`` (mean
    blocking rate; ties: the smaller degree), and every candidate's mean blocking rate."""
    from pacml.evaluation import run_episode
    from pacml.policies.baselines import Fixed

    if not seeds:
        from pacml.errors import ConfigError

        raise ConfigError("workflow.validation_seeds", [], "best_fixed needs at least one validation seed")
    table = {}
    for k in (a for a in model.placeable if a <= model.max_degree):
        rates = [run_episode(model, Fixed(k), dist, int(s))[1]["blocking_rate"] for s in seeds]
        table[k] = float(np.mean(rates))
    best = min(table, key=lambda k: (table[k], k))
    return best, table


def select(model: ClusterModel, dist: str, seeds, tune_base: bool = True) -> tuple[Selection, dict]:
    """best_fixed's degree and the planners' base policy, chosen on ``seeds``; and the
    blocking rates behind both choices. ``tune_base=False``: where nothing reads a tuned base
    (no planner is evaluated, no teacher plans with it), ``tuned`` is left undecided (None)
    instead of costing three rollouts per seed."""
    from pacml.evaluation import run_episode

    degree, table = best_fixed_degree(model, dist, seeds)
    report = {"blocking_rate_by_degree": {str(k): v for k, v in table.items()}}
    base = model.cfg.planning.base_policy
    if base == "best_fixed":
        base = f"fixed-{degree}"
    elif base == "tuned" and not tune_base:
        base = None
    elif base == "tuned":
        by_base = {}
        for k in sorted(table, key=lambda k: (table[k], k))[:3]:
            name = f"fixed-{k}"
            rates = []
            for s in seeds:
                pol = Rollout(model, dist, model.cfg.planning, name)
                rates.append(run_episode(model, pol, dist, int(s), policy_seed=(0, int(s)))[1]["blocking_rate"])
            by_base[name] = float(np.mean(rates))
        base = min(by_base, key=lambda b: (by_base[b], table[int(b.split("-")[1])]))
        report["rollout_blocking_rate_by_base"] = by_base
    return Selection(degree, base), report


@dataclass(frozen=True)
class Futures:
    """K sampled (or one true) continuations: times, graph indices and betas, (K, H) arrays."""

    times_s: np.ndarray
    graphs: np.ndarray
    betas: np.ndarray
    steps: np.ndarray | None = None
    """Each job's training steps (trace arrivals); None: each graph's own."""


class Rollout:
    """Look-ahead over sampled futures (or, clairvoyant, the true one); see the module doc."""

    def __init__(
        self,
        model: ClusterModel,
        dist: str,
        cfg: PlanningConfig,
        base_policy: str,
        clairvoyant: bool = False,
        compiled: bool | None = None,
    ):
        """``compiled``: count blocked jobs with `pacml.sim.lookahead_jit` (identical scores,
        about 5 times faster); None: wherever it supports the cluster and base policies."""
        self.name = "rollout_clairvoyant" if clairvoyant else "rollout"
        self.model, self.cfg, self.clairvoyant = model, cfg, clairvoyant
        self.base_policy = base_policy
        self.base = base_rule(base_policy, model)
        self.bases = (self.base, *(base_rule(b, model) for b in cfg.extra_bases))
        if compiled is None or compiled:
            from pacml.sim import lookahead_jit

            ok = lookahead_jit.supported(model, self.bases)
            if compiled and not ok:
                raise ValueError(
                    f"the compiled look-ahead needs <= {lookahead_jit.MAX_WORKERS} workers and count-based bases"
                )
            compiled = ok
        self.compiled = compiled
        self.pmf = episode_pmf(model.cfg.distributions, dist, np.random.default_rng(PLANNER_PMF_SEED))
        w = model.cfg.workload
        self._exponential = w.interarrival == "exponential"
        self.decisions_planned = 0

    def _futures(self, d: Decision, rng: np.random.Generator) -> Futures:
        h = self.cfg.horizon
        if self.clairvoyant:
            f = d.future(h)
            steps = None if f.steps is None else f.steps[None]
            return Futures(f.time_s[None], f.graph[None], f.beta[None], steps)
        k, ia = self.cfg.num_futures, d.interarrival_s
        trace = self.model.trace_workload
        if self._exponential or trace is not None:  # a trace's future: Poisson at its mean rate
            times = d.time_s + np.cumsum(rng.exponential(ia, size=(k, h)), axis=1)
        else:  # the engine's arrival times are index x interarrival exactly
            times = np.broadcast_to((d.job_idx + np.arange(1, h + 1)) * ia, (k, h))
        graphs = rng.integers(0, len(self.model.graphs), size=(k, h))
        betas = self.pmf.sample(rng, k * h).reshape(k, h)
        if trace is None:
            return Futures(times, graphs, betas)
        steps = rng.choice(trace.steps, size=(k, h))  # the range's step distribution, not its future
        return Futures(times, graphs, betas, steps)

    def scores(self, d: Decision, rng: np.random.Generator) -> dict[int, float]:
        """Mean blocked jobs (this one and the next H) for every valid non-zero degree: over
        the K futures, under the base policy that blocks fewest (`extra_bases`)."""
        candidates = [int(a) for a in np.flatnonzero(d.mask[1:]) + 1]
        if not candidates:
            return {}
        m, g = self.model, d.graph_index
        state = d.snapshot()
        fut = self._futures(d, rng)
        k = len(fut.times_s)
        steps = None if fut.steps is None else d.num_training_steps
        # every degree that blocks this job leaves the same cluster: one continuation, as degree 0
        degrees = [a if d.meets_requirement(a) else 0 for a in candidates]
        distinct = sorted(set(degrees))
        if self.compiled:
            from pacml.sim.lookahead_jit import count_blocked

            counts = count_blocked(
                m, state, g, d.beta, distinct, fut.times_s, fut.graphs, fut.betas, self.bases, steps, fut.steps
            )
            by_degree = {a: min(int(c.sum()) / k for c in counts[:, j]) for j, a in enumerate(distinct)}
        else:
            lists = [x.tolist() for x in (fut.times_s, fut.graphs, fut.betas)]
            future_steps = [None] * k if fut.steps is None else fut.steps.tolist()

            def mean_blocked(a: int) -> float:
                return min(
                    sum(
                        blocked_after(m, state, g, d.beta, a, *(x[i] for x in lists), base, steps, future_steps[i])
                        for i in range(k)
                    )
                    / k
                    for base in self.bases
                )

            by_degree = {a: mean_blocked(a) for a in distinct}
        out = {a: by_degree[x] for a, x in zip(candidates, degrees)}
        self.decisions_planned += 1
        return out

    def choose(self, d: Decision, scores: dict[int, float]) -> int:
        """The degree with the fewest blocked jobs; ties by ``planning.tie_break``."""
        if not scores:
            return 0
        best = min(scores.values())
        tied = [a for a, s in scores.items() if s == best]
        if self.cfg.tie_break == "base":
            a = self.base(d.graph_index, d.beta, d.snapshot().free_mask)
            if a in tied:
                return a
        return min(tied)

    def act(self, decision: Decision, rng: np.random.Generator) -> int:
        return self.choose(decision, self.scores(decision, rng))
