"""Episode outcomes computed on paper: every block cause on purpose, every metric of a small
episode, and the engine's caches against an uncached computation."""

from __future__ import annotations

import numpy as np
import pytest

from pacml.config import load_config
from pacml.evaluation import run_episode
from pacml.policies.base import make_policy
from pacml.sim.engine import ClusterModel, Episode
from pacml.sim.experiment import JctCache

from conftest import TOY_CLUSTER, toy_pool, two_layer_graph

LAX = ["distributions.lax.kind=uniform", "distributions.lax.min=1.0", "distributions.lax.max=1.0"]


def toy_model(C: int, R: int, S: int, *overrides: str) -> ClusterModel:
    cfg = load_config(
        overrides=[
            f"cluster.communication_groups={C}",
            f"cluster.racks_per_group={R}",
            f"cluster.servers_per_rack={S}",
            "workload.offered_load=null",
            *LAX,
            *overrides,
        ]
    )
    return ClusterModel([two_layer_graph()], cfg)


def test_every_metric_of_a_one_worker_episode_by_hand():
    """One worker; the toy job runs alone in 50 x (1 + 2 + 3 + 4) ms x 1000 = 500 s and brings
    2.4e9 B of op memory (A, B, B', A': 4, 8, 8, 4 x 1e8) + 2.0e9 B of dependencies (A->B 4e8,
    B->B' 8e8, B'->A' 8e8) = 4.4e9 B. Arrivals every 600 s until the 1500 s horizon: jobs at 0
    and 600 complete, the one at 1200 is still running at the horizon (a horizon block under
    the paper's accounting, 300 of its 500 s done)."""
    m = toy_model(1, 1, 1, "workload.interarrival_s=600", "workload.horizon_s=1500")
    records, met = run_episode(m, make_policy("sequential"), "lax", 0)
    assert [(r.arrival_s, r.outcome, r.cause) for r in records] == [
        (0.0, "completed", None),
        (600.0, "completed", None),
        (1200.0, "blocked", "horizon"),
    ]
    job_bytes = 4.4e9
    assert m.job_bytes[0] == job_bytes and m.sequential_jct_s[0] == 500.0
    expected = {
        "jobs_arrived": 3,
        "jobs_accepted": 3,
        "jobs_completed": 2,
        "jobs_blocked": 1,
        "blocked_rejected": 0,
        "blocked_invalid": 0,
        "blocked_placement": 0,
        "blocked_jct": 0,
        "blocked_horizon": 1,
        "jobs_running_at_horizon": 0,
        "blocking_rate": 1 / 3,
        "acceptance_rate": 2 / 3,
        "mean_jct": 500.0,
        "mean_jct_speedup": 1.0,
        "mean_requested_speedup": 1.0,
        "mean_degree": 1.0,
        "mean_workers_per_job": 1.0,
        "mean_beta_completed": 1.0,
        "demand_throughput": (2 * job_bytes + job_bytes * 300 / 500) / 1500,
        "cluster_throughput": (2 * job_bytes + job_bytes * 300 / 500) / 1500,
        "worker_utilisation": (500 + 500 + 300) / 1500,  # it computes all the time it holds
        "worker_utilisation_ddls": (500 + 500 + 300) / 1500 / 50,
        "worker_occupancy": (500 + 500 + 300) / 1500,
        "mean_load_rate": job_bytes / 600,
        "episode_return": 3,  # three accepted at their decisions; the horizon block is no decision
    }
    assert set(met) == set(expected)
    for key, value in expected.items():
        assert met[key] == pytest.approx(value, rel=1e-12), key


def test_a_degree_the_mask_forbids_is_an_invalid_block():
    """Two workers: degree 2 takes both, so at the next arrival (1 s later) no degree is free."""
    m = toy_model(1, 1, 2, "workload.interarrival_s=1", "workload.horizon_s=3")
    ep = Episode(m, "lax", np.random.default_rng(0))
    assert ep.step(2).outcome == "running"
    assert ep.decision.free_workers == 0 and not ep.decision.mask[1]
    rec = ep.step(1)
    assert (rec.outcome, rec.cause, rec.jct_s) == ("blocked", "invalid", None)
    assert ep.step(0).cause == "rejected"


def test_a_placeable_degree_with_no_room_of_its_shape_is_a_placement_block():
    """2 groups x 2 racks x 1 server: degree 2 needs two servers in one of its block shapes
    ((2, 1, 1), (1, 2, 1), the diagonal). Two degree-1 jobs take the first-fit servers, and
    the two servers left free form none of those shapes, although two are free."""
    m = toy_model(2, 2, 1, "workload.interarrival_s=1", "workload.horizon_s=5")
    assert m.topology.blocks(2) and m.placeable == (1, 2, 4)
    ep = Episode(m, "lax", np.random.default_rng(0))
    assert ep.step(1).outcome == "running" and ep.step(1).outcome == "running"
    d = ep.decision
    assert d.free_workers == 2 and d.mask[2]  # the mask allows it: enough servers are free
    rec = ep.step(2)
    assert (rec.outcome, rec.cause) == ("blocked", "placement")
    assert d.lookahead(2) is None


class Forgetful(dict):
    """A memo table that never remembers: every lookup is computed afresh."""

    def __setitem__(self, key, value) -> None:
        pass


@pytest.mark.parametrize("groups", [2, 4])
def test_the_caches_equal_an_uncached_computation_over_whole_episodes(groups):
    """One warm cache shared by several policies and seeds (as in the workflow) gives the
    records of a computation that caches nothing."""
    over = [*TOY_CLUSTER, f"cluster.communication_groups={groups}", "workload.interarrival=exponential"]
    cfg = load_config(overrides=over)
    cached = ClusterModel(toy_pool(), cfg)
    uncached = ClusterModel(toy_pool(), cfg, JctCache(Forgetful(), Forgetful(), Forgetful()))
    for seed in (0, 1, 2):
        for policy in ("random", "para_max", "oracle", "para_min"):
            warm, _ = run_episode(cached, make_policy(policy), "beta_a", seed)
            cold, _ = run_episode(uncached, make_policy(policy), "beta_a", seed)
            assert warm == cold, (policy, seed)
    assert uncached.cache.steps == {}
    assert cached.cache.step_simulations > len(toy_pool()) * len(cached.placeable)  # placements differ


def test_one_rack_and_two_groups_are_different_steps_in_the_cache():
    """2 groups x 2 racks x 2 servers, the toy job at degree 2 (no parameters: only the
    split-meets-split transfers): on servers 0 and 1 (one rack) its step is exactly 5.0 s
    (half of 10 ms x 1000); on servers 0 and 4 (first fit on an empty cluster: shape (2, 1, 1)
    across both groups) the cross-group transfers add 4.002 ms. The cache keys its step by
    placement, so asking for one never returns the other."""
    m = ClusterModel([two_layer_graph()], load_config(overrides=TOY_CLUSTER))
    across = m.allocate(0, 2, m.topology.all_mask)
    rack = m.allocate(0, 2, 0b11)
    assert (across.workers_mask, rack.workers_mask) == (0b10001, 0b11)
    assert rack.step.step_time_s == 5.0 and across.step.step_time_s == pytest.approx(5.004002, abs=1e-12)
    assert m.allocate(0, 2, 0b11).step == rack.step and m.cache.step_simulations == 2
