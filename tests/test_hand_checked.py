"""Episode outcomes computed on paper: every block cause on purpose, every metric of a small
episode, and the engine's caches against an uncached computation."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from pacml.cluster.placement import deciding_degrees, first_free_block
from pacml.config import load_config
from pacml.errors import ConfigError
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


@pytest.mark.parametrize(
    "groups, placement, memory",
    [(2, "ddls", 8e10), (4, "ddls", 8e10), (4, "compact", 8e10), (4, "ddls", 2e9), (4, "compact", 2e9)],
)
def test_the_caches_equal_an_uncached_computation_over_whole_episodes(groups, placement, memory):
    """One warm cache shared by several policies and seeds (as in the workflow) gives the
    records of a computation that caches nothing, with each placer, also where memory binds
    (2 GB workers: the big job's ops do not all fit one server, so ddls tests memory op by op
    and its placement is no longer decided by first free blocks alone)."""
    over = [
        *TOY_CLUSTER,
        f"cluster.communication_groups={groups}",
        f"cluster.placement={placement}",
        f"cluster.worker_memory_bytes={memory}",
        "workload.interarrival=exponential",
        "partition.min_op_time_s=3e-4",
    ]
    cfg = load_config(overrides=over)
    pool = [*toy_pool(), two_layer_graph()]  # its ops split 4 and 8 ways at degree 8
    cached = ClusterModel(pool, cfg)
    uncached = ClusterModel(pool, cfg, JctCache(*(Forgetful() for _ in range(5))))
    for seed in (0, 1, 2):
        for policy in ("random", "para_max", "oracle", "para_min"):
            warm, _ = run_episode(cached, make_policy(policy), "beta_a", seed)
            cold, _ = run_episode(uncached, make_policy(policy), "beta_a", seed)
            assert warm == cold, (policy, seed)
    assert uncached.cache.steps == {} and uncached.cache.by_blocks == {}
    assert cached.cache.step_simulations > len(pool)  # placements differ
    # many occupancies share their deciding blocks: the block memo answers most placement misses
    assert len(cached.cache.by_blocks) < len(cached.cache.placements) / 2


def test_deciding_degrees_are_the_blocks_that_place_a_job():
    """The two-layer job at action 8 with 0.3 ms sub-ops: A (1 ms) splits 4 ways, B (2 ms) 8.
    ddls: both degrees decide (every op sits on the first free block of its degree) while
    memory cannot bind; compact: the largest. With 2 GB workers the mid chain at degree 1
    needs 4 x 1 GB on one server (its forward and backward twins), so memory may bind: None;
    the small chain needs 1.5 GB: (1,)."""
    cfg = load_config(overrides=[*TOY_CLUSTER, "partition.min_op_time_s=3e-4"])
    m = ClusterModel([two_layer_graph()], cfg)
    pg = m.partitioned(0, 8)
    assert pg.degree.tolist() == [4, 8, 4, 8]
    assert deciding_degrees(pg, m.topology, "ddls") == (4, 8)
    assert deciding_degrees(pg, m.topology, "compact") == (8,)
    tight = ClusterModel(toy_pool(), load_config(overrides=[*TOY_CLUSTER, "cluster.worker_memory_bytes=2e9"]))
    assert deciding_degrees(tight.partitioned(1, 1), tight.topology, "ddls") is None
    assert deciding_degrees(tight.partitioned(0, 1), tight.topology, "ddls") == (1,)
    # pairs are tried across the two groups first: (0, 4), (1, 5), (2, 6), ...; with servers
    # 0 and 1 taken the first free one is (2, 6), the third
    assert first_free_block(m.topology, 2, m.topology.all_mask & ~0b11) == 2
    assert m.topology.blocks(2)[2][1] == (2, 6)
    assert first_free_block(m.topology, 8, m.topology.all_mask & ~0b1) == -1


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


def test_a_job_finishing_exactly_at_the_horizon_completes_in_the_engine_and_the_lookahead():
    """The toy job (500 s) arriving at 600 s finishes at the 1100 s horizon: completed (a
    departure at the horizon is in time), and the look-ahead counts no block for it."""
    from pacml.sim.lookahead import base_rule, blocked_after

    m = toy_model(1, 1, 1, "workload.interarrival_s=600", "workload.horizon_s=1100")
    ep = Episode(m, "lax", np.random.default_rng(0))
    ep.step(1)
    assert ep.decision.time_s == 600.0
    seq = base_rule("sequential", m)
    assert blocked_after(m, ep.snapshot(), ep.decision.graph_index, 1.0, 1, [], [], [], seq) == 0
    ep.step(1)
    assert [(r.arrival_s, r.finish_s, r.outcome) for r in ep.records[:2]] == [
        (0.0, 500.0, "completed"),
        (600.0, 1100.0, "completed"),
    ]


def test_the_snapshot_after_the_last_decision_is_at_the_horizon():
    m = toy_model(1, 1, 1, "workload.interarrival_s=600", "workload.horizon_s=1100")
    ep = Episode(m, "lax", np.random.default_rng(0))
    while not ep.done:
        ep.step(1)
    assert ep.snapshot().time_s == 1100.0 and ep.snapshot().departures == ()
    assert len(ep.future(10).time_s) == 0  # every arrival is accounted for: none lies ahead


def test_the_true_future_is_the_next_h_arrivals():
    m = toy_model(1, 1, 1, "workload.interarrival_s=600", "workload.horizon_s=3000")
    ep = Episode(m, "lax", np.random.default_rng(0))
    ep.step(1)  # now at the arrival at 600 s
    fut = ep.future(2)
    assert list(fut.time_s) == [1200.0, 1800.0] and list(fut.interarrival_s) == [600.0, 600.0]
    assert list(fut.graph) == [0, 0] and list(fut.beta) == [1.0, 1.0]
    assert len(ep.future(0).time_s) == len(ep.future(-3).time_s) == 0
    assert list(ep.future(100).time_s) == [1200.0, 1800.0, 2400.0, 3000.0]  # up to the horizon arrival


def test_metrics_of_hand_written_records():
    """Three records on 8 workers over a 10 s horizon (5 training steps per job):
    a completed job (4 workers, 2.5 s, half of it computing, beta 0.3 -> requested speed-up 4),
    one still running at the horizon (2 workers, 2 of its 4 s done, a quarter computing), and
    one blocked by its JCT requirement."""
    from pacml.sim.metrics import episode_metrics
    from pacml.sim.records import JobRecord

    def record(idx, arrival_s, beta, sequential_jct_s, job_bytes, outcome, **decided):
        max_jct_s = beta * sequential_jct_s
        return JobRecord(idx, "toy", arrival_s, 10.0, beta, sequential_jct_s, max_jct_s, job_bytes, outcome, **decided)

    done = {
        "action": 4,
        "jct_s": 2.5,
        "finish_s": 2.5,
        "num_workers": 4,
        "utilisation": 0.5,
        "partitioned_bytes": 200.0,
    }
    running = {
        "action": 2,
        "jct_s": 4.0,
        "finish_s": 12.0,
        "num_workers": 2,
        "utilisation": 0.25,
        "partitioned_bytes": 80.0,
    }
    records = [
        record(0, 0.0, 0.3, 10.0, 100.0, "completed", **done),
        record(1, 8.0, 0.5, 4.0, 50.0, "running", **running),
        record(2, 9.0, 0.2, 5.0, 30.0, "blocked", action=8, cause="jct"),
    ]
    # their gaps to the next arrival: half a second, none (a trace's simultaneous submissions), 10 s
    records = [dataclasses.replace(r, interarrival_s=gap) for r, gap in zip(records, (0.5, 0.0, 10.0))]
    met = episode_metrics(records, num_workers=8, horizon_s=10.0, num_training_steps=5)
    expected = {
        "jobs_arrived": 3,
        "jobs_accepted": 2,
        "jobs_completed": 1,
        "jobs_blocked": 1,
        "blocked_jct": 1,
        "jobs_running_at_horizon": 1,
        "blocking_rate": 1 / 3,
        "acceptance_rate": 1 / 3,
        "mean_jct": 2.5,
        "mean_jct_speedup": 4.0,  # 10 / 2.5
        "mean_requested_speedup": 4.0,  # ceil(1 / 0.3)
        "mean_degree": 3.0,
        "mean_workers_per_job": 3.0,
        "mean_beta_completed": 0.3,
        "demand_throughput": (100.0 + 50.0 * 2 / 4) / 10,
        "cluster_throughput": (200.0 + 80.0 * 2 / 4) / 10,
        "worker_utilisation": (4 * 2.5 * 0.5 + 2 * 2 * 0.25) / 80,
        "worker_utilisation_ddls": (4 * 2.5 * 0.5 + 2 * 2 * 0.25) / 80 / 5,
        "worker_occupancy": (4 * 2.5 + 2 * 2) / 80,
        "mean_load_rate": (100.0 / 0.5 + 30.0 / 10) / 2,  # the job with no gap left out
        "episode_return": 1,  # two accepted, one blocked at its decision
    }
    for key, value in expected.items():
        assert met[key] == pytest.approx(value, rel=1e-12), key


def test_metrics_of_an_episode_without_arrivals():
    from pacml.sim.metrics import METRICS, episode_metrics

    met = episode_metrics([], num_workers=8, horizon_s=10.0, num_training_steps=5)
    assert set(met) == set(METRICS)
    assert met["blocking_rate"] == met["acceptance_rate"] == 0.0 and met["jobs_arrived"] == 0
    assert np.isnan(met["mean_jct"]) and np.isnan(met["mean_degree"]) and met["worker_occupancy"] == 0.0


def test_the_model_refuses_an_empty_pool_and_an_op_over_a_workers_memory():
    from pacml.errors import InfeasibleClusterError

    cfg = load_config(overrides=["workload.offered_load=null"])
    with pytest.raises(InfeasibleClusterError, match="^no job graphs given$"):
        ClusterModel([], cfg)
    g = two_layer_graph()  # its largest op holds 8e8 B
    ClusterModel([g], load_config(overrides=["cluster.worker_memory_bytes=8e8"]))  # exactly fits
    with pytest.raises(InfeasibleClusterError, match=r"graph 'toy': op .* needs 8e\+08 B.*worker_memory_bytes"):
        ClusterModel([g], load_config(overrides=["cluster.worker_memory_bytes=7.9e8"]))


def test_the_interarrival_from_the_offered_load_and_the_arrivals_bound():
    """The toy job's 500 s on 32 workers at offered load 0.5: one arrival every 500 / 16 =
    31.25 s. At load 15.625 the interarrival is 1 s, so a 999,999 s horizon holds exactly
    1,000,000 arrivals (the bound) and one more second is refused."""
    g = two_layer_graph()
    assert ClusterModel([g], load_config(overrides=["workload.offered_load=0.5"])).interarrival_s == 31.25
    fast = ["workload.offered_load=15.625"]
    assert ClusterModel([g], load_config(overrides=[*fast, "workload.horizon_s=999999"])).interarrival_s == 1.0
    with pytest.raises(ConfigError, match=r"'workload\.horizon_s' = 1000000\.0.*1e\+06 arrivals"):
        ClusterModel([g], load_config(overrides=[*fast, "workload.horizon_s=1000000"]))


def test_a_job_shorter_than_a_second_is_a_valid_job():
    g = two_layer_graph(steps=50)
    m = ClusterModel(
        [g],
        load_config(overrides=["workload.compute_time_scale=1", "workload.offered_load=0.5", "workload.horizon_s=10"]),
    )
    assert m.sequential_jct_s[0] == pytest.approx(0.5, rel=1e-12)


def test_a_pool_with_a_job_of_no_time_names_that_job_alone():
    import dataclasses

    from pacml.errors import InfeasibleClusterError

    short = two_layer_graph()  # 0.5 s at compute_time_scale 1: short but valid
    zero = dataclasses.replace(short, name="zero", compute_time_s=short.compute_time_s * 0)
    cfg = load_config(overrides=["workload.compute_time_scale=1", "workload.offered_load=null"])
    with pytest.raises(InfeasibleClusterError, match=r"^graphs \['zero'\]: a job's sequential run time"):
        ClusterModel([short, zero], cfg)
