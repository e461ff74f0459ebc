"""The compiled look-ahead (`pacml.sim.lookahead_jit`) counts exactly what `blocked_after` counts."""

from __future__ import annotations

import numpy as np
import pytest

from pacml.config import load_config
from pacml.evaluation import episode_rngs, run_episode
from pacml.policies.base import make_policy
from pacml.policies.planning import Rollout
from pacml.sim import lookahead_jit
from pacml.sim.engine import ClusterModel, Episode
from pacml.sim.lookahead import base_rule, blocked_after

from conftest import TOY_CLUSTER, toy_pool

BASES = ["fixed-2", "fixed-4", "para_max", "sequential"]


def model(*overrides: str) -> ClusterModel:
    return ClusterModel(toy_pool(), load_config(overrides=[*TOY_CLUSTER, *overrides]))


def state_after(m: ClusterModel, seed: int, steps: int):
    """A decision reached by random degrees: a cluster with jobs running."""
    ep = Episode(m, "beta_a", episode_rngs(seed)[0])
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        ep.step(make_policy("random").act(ep.decision, rng))
    return ep.decision


def random_futures(m: ClusterModel, d, rng: np.random.Generator, k: int, h: int):
    """K futures with Poisson arrivals, some past the episode's horizon; in the first, the
    running jobs' finish times are arrival times too (a departure frees its servers before
    the arrival at that instant decides), and some betas are exactly 1 (a sequential job
    meets its requirement with equality)."""
    times = d.time_s + np.cumsum(rng.exponential(m.interarrival_s, size=(k, h)), axis=1)
    finishes = [t for t, _, _ in d.snapshot().departures]
    times[0] = np.sort(np.concatenate([finishes, times[0]]))[:h]
    betas = np.where(rng.random((k, h)) < 0.2, 1.0, rng.uniform(0.05, 1.0, size=(k, h)))
    return times, rng.integers(0, len(m.graphs), size=(k, h)), betas


def assert_counts_match(m, d, futures, bases, steps=None, future_steps=None):
    times, graphs, betas = futures
    degrees = [0, *(int(a) for a in np.flatnonzero(d.mask[1:]) + 1)]
    rules = tuple(base_rule(b, m) for b in bases)
    got = lookahead_jit.count_blocked(
        m, d.snapshot(), d.graph_index, d.beta, degrees, *futures, rules, steps, future_steps
    )
    want = [
        [
            [
                blocked_after(
                    m,
                    d.snapshot(),
                    d.graph_index,
                    d.beta,
                    a,
                    times[f].tolist(),
                    graphs[f].tolist(),
                    betas[f].tolist(),
                    rule,
                    steps,
                    None if future_steps is None else future_steps[f].tolist(),
                )
                for f in range(len(times))
            ]
            for a in degrees
        ]
        for rule in rules
    ]
    assert got.tolist() == want
    return got


@pytest.mark.parametrize("accounting", ["paper", "fixed"])
@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
def test_compiled_counts_equal_the_python_loop(seed, accounting):
    m = model(f"workload.horizon_accounting={accounting}", "workload.horizon_s=30000")
    rng = np.random.default_rng(seed)
    d = state_after(m, seed, int(rng.integers(5, 40)))
    got = assert_counts_match(m, d, random_futures(m, d, rng, 4, 120), BASES)
    assert got.min() < got.max()  # the degrees and bases are told apart


def big_model(servers_per_rack: int, *overrides: str, pool=None) -> ClusterModel:
    """4 x 4 racks of ``servers_per_rack`` servers, every degree allowed, busy."""
    return ClusterModel(
        pool or toy_pool(),
        load_config(
            overrides=[
                "cluster.communication_groups=4",
                "cluster.racks_per_group=4",
                f"cluster.servers_per_rack={servers_per_rack}",
                f"cluster.max_degree={16 * servers_per_rack}",
                "workload.offered_load=2.0",
                *overrides,
            ]
        ),
    )


@pytest.mark.parametrize(("servers_per_rack", "seed"), [(4, 0), (4, 1), (8, 0), (16, 0), (16, 1)])
def test_compiled_counts_equal_the_python_loop_on_64_to_256_workers(servers_per_rack, seed):
    """Free masks that use the last bit of the kernel's words: one uint64 at 64 workers, four
    at 128 (the last two always empty) and 256."""
    m = big_model(servers_per_rack)
    top = m.topology.num_workers - 1
    rng = np.random.default_rng(seed)
    d = state_after(m, seed, 30 * servers_per_rack // 4)
    assert d.snapshot().free_mask >> top or any(mask >> top for _, _, mask in d.snapshot().departures)
    assert_counts_match(m, d, random_futures(m, d, rng, 3, 60), ["fixed-4", "para_max"])


@pytest.mark.parametrize("servers_per_rack", [4, 16])
def test_the_kernels_block_code_keys_placements_as_the_model_does(servers_per_rack):
    """Two free masks get the same code for (g, a) exactly when the model's block key says the
    placer places the job the same way on both: the code may stand for the mask in the memo."""
    from pacml.graphs.opgraph import training_graph

    times = np.array([1e-5, 2e-5, 4e-5, 3e-3])  # split 1, 2, 4 (backward 2, 4, 8) and a ways
    mixed = training_graph(
        name="mixed",
        forward_names=[f"node{i + 1}" for i in range(4)],
        descriptions=[f"op{i}" for i in range(4)],
        forward_time_s=times,
        backward_time_s=2 * times,
        activation_bytes=np.full(4, 1e6),
        parameter_bytes=np.full(4, 1e5),
        forward_edges=[(0, 1), (1, 2), (2, 3)],
        last_forward=3,
        num_training_steps=50,
    )
    m = big_model(servers_per_rack, pool=[*toy_pool(), mixed])
    plan = lookahead_jit._plan(m)
    rng = np.random.default_rng(servers_per_rack)
    n = m.topology.num_workers
    decided = 0
    for g in range(len(m.graphs)):
        for a in m.topology.placeable_degrees[:6]:
            plan.learn(g, a)
            if plan.state[g, a] != lookahead_jit._DECIDED:
                continue
            decided += 1
            code_of, key_of = {}, {}
            for i in range(400):  # masks from nearly empty to nearly full
                free = sum(1 << int(j) for j in np.flatnonzero(rng.random(n) < rng.random()))
                if i % 2:  # only the top servers free: the first free blocks are the last ones, or none
                    free &= -1 << int(rng.integers(n - 2 * a, n + 1))
                words = lookahead_jit._words(free, plan.words)
                code = int(lookahead_jit._block_code(plan.tables(), g, a, words))
                key = m._block_key(g, a, m.partitioned(g, a), free)
                assert code_of.setdefault(key, code) == code and key_of.setdefault(code, key) == key
            assert len(code_of) > 3  # the masks were told apart
    assert decided >= 6
    assert plan.num_degrees.max() >= 3  # codes of several blocks: the radix matters


def test_compiled_counts_with_trace_steps_equal_the_python_loop():
    from test_trace import bursty_trace, trace_model

    m = trace_model(bursty_trace(3_000), "workload.offered_load=1.2", "workload.horizon_s=200000")
    d = state_after(m, 1, 15)
    f = d.future(100_000)
    futures = (f.time_s[None], f.graph[None], f.beta[None])
    assert_counts_match(m, d, futures, ["fixed-2", "para_max"], d.num_training_steps, f.steps[None])


@pytest.mark.parametrize("name", ["rollout", "rollout_clairvoyant"])
@pytest.mark.parametrize("extra", [[], ["para_max"]])
def test_a_compiled_planner_plays_the_same_episode(name, extra):
    cfg = [
        "planning.horizon=40",
        "planning.num_futures=3",
        f"planning.extra_bases=[{', '.join(extra)}]",
        "workload.interarrival=exponential",
    ]
    m_py, m_jit = model(*cfg), model(*cfg)  # separate caches: nothing read from the other's memo
    clairvoyant = name == "rollout_clairvoyant"
    runs = []
    for m, compiled in ((m_py, False), (m_jit, True)):
        pol = Rollout(m, "beta_a", m.cfg.planning, "fixed-4", clairvoyant=clairvoyant, compiled=compiled)
        assert pol.compiled is compiled
        runs.append(run_episode(m, pol, "beta_a", 3, policy_seed=(0, 3)))
    assert runs[0] == runs[1]
    assert m_jit.cache.plan_memo is not None and m_py.cache.plan_memo is None


@pytest.mark.parametrize("compiled", [False, True])
def test_bounded_placement_memos_give_the_same_episodes(compiled):
    """The mask-keyed memos start over when full (a memory bound at 64 workers and more): a
    planner's and a baseline's episodes are the same with a bound of 40 entries as without."""

    class Watched(dict):  # the largest size the memo ever had
        largest = 0

        def __setitem__(self, key, value):
            super().__setitem__(key, value)
            Watched.largest = max(Watched.largest, len(self))

    cfg = ["planning.horizon=40", "planning.num_futures=3"]
    runs, models = [], []
    for bound in (None, 40):
        m = model(*cfg)
        if bound is not None:
            m.cache.max_placements = bound
            m.cache.placements = Watched()
        pol = Rollout(m, "beta_a", m.cfg.planning, "fixed-4", compiled=compiled)
        runs.append(
            (run_episode(m, pol, "beta_a", 5, policy_seed=(0, 5)), run_episode(m, make_policy("para_min"), "beta_a", 6))
        )
        models.append(m)
    assert runs[0] == runs[1]
    unbounded, bounded = (m.cache for m in models)
    assert unbounded.placements_forgotten == 0 and len(unbounded.placements) > 40
    assert bounded.placements_forgotten > 0 and Watched.largest == 40


def test_unsupported_settings_run_the_python_loop():
    m = model("planning.base_policy=para_min")
    assert not lookahead_jit.supported(m, (base_rule("para_min", m),))
    assert Rollout(m, "beta_a", m.cfg.planning, "para_min").compiled is False
    assert Rollout(m, "beta_a", m.cfg.planning, "fixed-4").compiled is True
    with pytest.raises(ValueError, match="count-based bases"):
        Rollout(m, "beta_a", m.cfg.planning, "para_min", compiled=True)
    assert lookahead_jit.supported(big_model(16), (base_rule("fixed-4", m),))
    too_big = big_model(32)  # 512 workers
    assert not lookahead_jit.supported(too_big, (base_rule("fixed-4", too_big),))
    with pytest.raises(ValueError, match="256 workers"):
        Rollout(too_big, "beta_a", too_big.cfg.planning, "fixed-4", compiled=True)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_compiled_counts_at_the_horizon_equal_the_python_loop(seed):
    """A job that finishes exactly at the horizon is not blocked by it; an arrival exactly at
    the horizon is not counted."""
    import dataclasses

    m = model("workload.horizon_s=30000")
    rng = np.random.default_rng(seed)
    steps, meeting = 10, []
    while not meeting:  # a job that can be placed and meet its requirement
        d = state_after(m, seed, steps)
        meeting = [int(a) for a in np.flatnonzero(d.mask[1:]) + 1 if d.meets_requirement(int(a))]
        steps += 1
    a = meeting[-1]
    alloc = m.allocate(d.graph_index, a, d.snapshot().free_mask)
    horizon_s = d.time_s + alloc.step.step_time_s * m.num_training_steps[d.graph_index]
    w = dataclasses.replace(m.cfg.workload, horizon_s=horizon_s)
    at_horizon = ClusterModel(m.graphs, dataclasses.replace(m.cfg, workload=w), m.cache)
    times, graphs, betas = random_futures(at_horizon, d, rng, 2, 80)
    times[1] = np.sort(np.concatenate([[horizon_s], times[1]]))[:80]
    assert (times[1] == horizon_s).any()
    assert_counts_match(at_horizon, d, (times, graphs, betas), ["fixed-2", "sequential"])
