"""Episodes: blocking causes, horizon accounting, event order, determinism."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pacml.config import load_config
from pacml.errors import InfeasibleClusterError, UnknownNameError
from pacml.evaluation import run_episode
from pacml.graphs.opgraph import training_graph
from pacml.policies.base import make_policy
from pacml.sim.engine import ClusterModel, Episode
from pacml.sim.records import JobRecord

from conftest import PAPER_MODELS, two_layer_graph

LAX = ["distributions.lax.kind=uniform", "distributions.lax.min=1.0", "distributions.lax.max=1.0"]
HALF = ["distributions.half.kind=uniform", "distributions.half.min=0.5", "distributions.half.max=0.5"]


def tiny(*overrides, C=1, R=1, S=2):
    cfg = load_config(
        overrides=[
            f"cluster.communication_groups={C}",
            f"cluster.racks_per_group={R}",
            f"cluster.servers_per_rack={S}",
            *LAX,
            *HALF,
            *overrides,
        ]
    )
    return ClusterModel([two_layer_graph()], cfg)


def test_full_cluster_blocks_an_arrival_and_horizon_counts():
    # toy job at degree 2 runs ~250 s and takes both servers; arrivals every 1 s until 10 s
    m = tiny("workload.interarrival_s=1", "workload.horizon_s=10")
    records, met = run_episode(m, make_policy("para_max"), "lax", 0)
    assert [r.cause for r in records] == ["horizon"] + ["rejected"] * 9 + [None]
    assert records[-1].outcome == "undecided"
    # the arrival at the horizon: arrived, never decided, with its own requirement
    seq = float(m.sequential_jct_s[0])
    assert dataclasses.astuple(records[-1]) == dataclasses.astuple(
        JobRecord(
            job_idx=10,
            model="toy",
            arrival_s=10.0,
            interarrival_s=1.0,
            beta=1.0,
            sequential_jct_s=seq,
            max_acceptable_jct_s=seq,
            job_bytes=float(m.job_bytes[0]),
            outcome="undecided",
        )
    )
    assert met["jobs_arrived"] == 11 and met["jobs_blocked"] == 10
    assert met["blocked_horizon"] == 1 and met["blocked_rejected"] == 9
    assert met["blocking_rate"] == pytest.approx(10 / 11)
    assert met["episode_return"] == 1 - 9


def test_fixed_horizon_accounting_counts_neither():
    m = tiny("workload.interarrival_s=1", "workload.horizon_s=10", "workload.horizon_accounting=fixed")
    records, met = run_episode(m, make_policy("para_max"), "lax", 0)
    assert met["jobs_arrived"] == 10 and met["jobs_blocked"] == 9
    assert met["jobs_running_at_horizon"] == 1


def test_job_blocked_by_its_requirement():
    # sequential: JCT = 50 x 10 s = 500 s > 0.5 x 500 s
    m = tiny("workload.interarrival_s=1000", "workload.horizon_s=999")
    records, met = run_episode(m, make_policy("sequential"), "half", 0)
    assert records[0].cause == "jct" and met["blocked_jct"] == 1
    # degree 2 meets it: 50 x (5 s + transfers) <= 250 s? no: the transfers make it late
    records, _ = run_episode(m, make_policy("fixed-2"), "half", 0)
    assert records[0].cause == "jct" and records[0].action == 2


def test_departure_frees_servers_before_a_simultaneous_arrival():
    # one worker; the sequential toy job takes exactly 500 s, the next arrives at 500 s
    m = tiny("workload.interarrival_s=500", "workload.horizon_s=1000", C=1, R=1, S=1)
    records, met = run_episode(m, make_policy("sequential"), "lax", 0)
    assert records[0].jct_s == 500.0 and records[0].outcome == "completed"
    assert records[1].outcome == "completed" and records[1].arrival_s == 500.0
    assert met["jobs_completed"] == 2


def test_simultaneous_departures_leave_in_arrival_order_with_full_records():
    # two servers; "toy" runs 500 s sequentially, "short" (half the steps) 250 s. Seed 0 draws
    # toy at 0 s and short at 250 s: both at degree 1 finish at exactly 500 s, the third
    # arrival's instant; ties leave by the departure's sequence number, so toy first
    cfg = load_config(
        overrides=[
            "cluster.communication_groups=1",
            "cluster.racks_per_group=1",
            "cluster.servers_per_rack=2",
            *LAX,
            "workload.interarrival_s=250",
            "workload.horizon_s=600",
            "workload.replication_factor=1",
        ]
    )
    short = dataclasses.replace(two_layer_graph(steps=25), name="short")
    m = ClusterModel([two_layer_graph(), short], cfg)
    ep = Episode(m, "lax", np.random.default_rng(0))
    assert ep.arrivals.graph.tolist() == [0, 1, 0]
    first = ep.step(1)
    assert dataclasses.astuple(first) == dataclasses.astuple(
        JobRecord(
            job_idx=0,
            model="toy",
            arrival_s=0.0,
            interarrival_s=250.0,
            beta=1.0,
            sequential_jct_s=500.0,
            max_acceptable_jct_s=500.0,
            job_bytes=float(m.job_bytes[0]),
            outcome="running",
            action=1,
            jct_s=500.0,
            finish_s=500.0,
            num_workers=1,
            utilisation=first.utilisation,
            partitioned_bytes=float(m.job_bytes[0]),
        )
    )
    second = ep.step(1)
    assert (second.model, second.max_acceptable_jct_s, second.finish_s) == ("short", 250.0, 500.0)
    assert [(r.job_idx, r.outcome) for r in ep.records] == [(0, "completed"), (1, "completed")]
    assert ep.decision.free_workers == 2  # both left before the arrival at 500 s


def test_invalid_degree_is_blocked_not_crashed():
    m = tiny("workload.interarrival_s=1000", "workload.horizon_s=999")
    ep = Episode(m, "lax", np.random.default_rng(0))
    rec = ep.step(2)
    assert rec.outcome == "running"
    fresh = Episode(m, "lax", np.random.default_rng(0))
    assert len(fresh.decision.mask) == 3  # degrees 0, 1, 2 on two servers
    # the look-ahead answers None (no JCT) for rejection and for degrees out of range
    assert [fresh.decision.lookahead(a) for a in (-1, 0, 3)] == [None, None, None]
    assert fresh.decision.lookahead(1) == 500.0
    for action in (99, 3, -1):  # 3: one past the last degree
        with pytest.raises(ValueError, match=rf"^degree {action} is out of range 0\.\.2$"):
            fresh.step(action)
    assert ep.decision is None  # the next arrival (1000 s) is past the horizon
    with pytest.raises(AssertionError, match="^episode is done$"):
        ep.step(1)


def test_round_to_placeable_decides_whether_a_degree_10_op_places():
    # t/q = 10 at action 16: degree 10 has no block shape on 32 workers (ddls B10)
    g = training_graph("ten", ["a"], [""], np.array([1e-4]), np.array([1e-4]), np.ones(1), np.zeros(1), [], 0)
    fixed = ClusterModel([g], load_config())
    assert fixed.partitioned(0, 16).degree.tolist() == [8, 8]
    assert fixed.allocate(0, 16, fixed.topology.all_mask) is not None
    ddls = ClusterModel([g], load_config(overrides=["partition.round_to_placeable=false"]))
    assert ddls.partitioned(0, 16).degree.tolist() == [10, 10]
    assert ddls.allocate(0, 16, ddls.topology.all_mask) is None


def test_partitions_are_memoised_and_translated_blocks_share_one_step_simulation():
    m = ClusterModel([two_layer_graph()], load_config())
    assert m.partitioned(0, 2) is m.partitioned(0, 2)
    first = m.allocate(0, 2, m.topology.all_mask)
    # degree 2 on the empty cluster: servers 0 and 8 (one per communication group); with
    # servers 0 and 1 taken, the same shape moves to 2 and 10: one step simulation for both
    moved = m.allocate(0, 2, m.topology.all_mask & ~0b11)
    assert (first.workers_mask, moved.workers_mask) == (1 << 0 | 1 << 8, 1 << 2 | 1 << 10)
    assert moved.step is first.step and m.cache.step_simulations == 1


def test_op_larger_than_worker_memory_is_rejected():
    cfg = load_config(overrides=["cluster.worker_memory_bytes=1e8"])
    with pytest.raises(InfeasibleClusterError, match="node2.*worker_memory_bytes"):
        ClusterModel([two_layer_graph(act_b=8e8)], cfg)


def test_unknown_policy_and_distribution():
    with pytest.raises(UnknownNameError, match="para_mx"):
        make_policy("para_mx")
    with pytest.raises(UnknownNameError, match="fixed-99"):
        make_policy("fixed-99", max_degree=16)
    m = tiny()
    with pytest.raises(UnknownNameError, match="beta_z"):
        run_episode(m, make_policy("para_max"), "beta_z", 0)


def test_offered_load_sets_the_interarrival():
    m = tiny("workload.offered_load=0.5")
    assert m.offered_load == pytest.approx(0.5)
    assert m.interarrival_s == pytest.approx(500.0 / (0.5 * 2))


@pytest.fixture(scope="module")
def paper_model(model_graphs):
    return ClusterModel(model_graphs, load_config())


@pytest.fixture(scope="module")
def pipedream_model(paper_graphs):
    return ClusterModel(paper_graphs, load_config())


def test_paper_episode_has_1001_arrivals_and_is_deterministic(paper_model):
    r1, m1 = run_episode(paper_model, make_policy("random"), "beta_c", 3)
    r2, m2 = run_episode(paper_model, make_policy("random"), "beta_c", 3)
    assert m1["jobs_arrived"] == 1001
    assert m1 == m2 and r1 == r2
    _, m3 = run_episode(paper_model, make_policy("random"), "beta_c", 4)
    assert m3 != m1


def test_cold_and_warm_caches_agree(model_graphs):
    cold = ClusterModel(model_graphs, load_config())
    _, a = run_episode(cold, make_policy("oracle"), "beta_b", 1)
    _, b = run_episode(cold, make_policy("oracle"), "beta_b", 1)
    assert a == b


@pytest.mark.parametrize("policy", ["para_max", "para_min", "random", "sequential", "oracle", "fixed-4"])
def test_every_policy_and_distribution_runs_a_paper_episode(paper_model, policy):
    for dist in ("beta_a", "beta_b", "beta_c", "beta_d"):
        records, met = run_episode(paper_model, make_policy(policy), dist, 0)
        assert met["jobs_arrived"] == 1001
        assert met["jobs_blocked"] + met["jobs_completed"] + 1 == 1001  # + the undecided horizon arrival
        if policy == "oracle":
            assert met["blocked_jct"] == 0 and met["blocked_placement"] == 0


def test_para_max_always_takes_16_on_paper_models(pipedream_model):
    """PipeDream's numbers: almost every job fits 16 ways under its requirement."""
    records, _ = run_episode(pipedream_model, make_policy("para_max"), "beta_a", 0)
    assert records[0].accepted and records[0].action == 16  # the empty cluster: the largest degree
    assert sum(r.action == 16 for r in records if r.accepted) > 0.9 * sum(r.accepted for r in records)
    para_min, _ = run_episode(pipedream_model, make_policy("para_min"), "beta_a", 0)
    assert sum(r.action == 16 for r in para_min if r.accepted) < 0.1 * sum(r.accepted for r in para_min)


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    policy=st.sampled_from(["para_max", "para_min", "random", "oracle", "fixed-2"]),
    horizon=st.integers(1, 40),
)
def test_every_arrival_is_accounted_for_and_masks_are_feasible(model_graphs, seed, policy, horizon):
    cfg = load_config(overrides=[f"workload.horizon_s={horizon * 1000}"])
    m = ClusterModel(model_graphs, cfg)
    import numpy as np

    ep = Episode(m, "beta_a", np.random.default_rng(seed))
    pol, rng = make_policy(policy), np.random.default_rng(seed)
    while not ep.done:
        d = ep.decision
        before = ep.free_mask
        assert d.free_workers == before.bit_count()
        assert all(a <= d.free_workers for a in np.flatnonzero(d.mask) if a > 0)
        jcts = [(int(a), d.lookahead(int(a))) for a in np.flatnonzero(d.mask[1:]) + 1]
        assert ep.free_mask == before  # lookahead changes nothing
        # the memoised per-degree step times give lookahead's JCTs to the last bit
        placed = [(a, step_s * d.num_training_steps) for a, step_s in d.placed_step_times()]
        assert placed == [(a, jct) for a, jct in jcts if jct is not None]
        a = pol.act(d, rng)
        assert a == 0 or d.mask[a]
        ep.step(a)
    outcomes = [r.outcome for r in ep.records]
    assert len(outcomes) == horizon + 1
    assert outcomes.count("undecided") == 1
    assert set(outcomes) <= {"completed", "blocked", "undecided"}
    assert [r.job_idx for r in ep.records] == list(range(horizon + 1))


def test_a_records_copy_with_changes_equals_dataclasses_replace():
    rec = JobRecord(0, "m", 1.0, 2.0, 0.5, 10.0, 5.0, 3.0, "running", action=4, jct_s=4.0, finish_s=5.0)
    done = rec.but(outcome="completed")
    assert done == dataclasses.replace(rec, outcome="completed") and done is not rec
    assert rec.outcome == "running"  # the original is unchanged
    blocked = rec.but(outcome="blocked", cause="horizon")
    assert blocked == dataclasses.replace(rec, outcome="blocked", cause="horizon")


def test_paper_models_constant_is_the_config_default():
    assert load_config().graphs.models == PAPER_MODELS


RANGE = ["workload.offered_load_range=[0.5, 2.0]", "workload.horizon_s=20000"]


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_a_load_range_draws_each_episodes_load_from_its_generator(seed):
    m = tiny(*RANGE)
    ep = Episode(m, "lax", np.random.default_rng(seed))
    # a uniform beta distribution draws nothing for its PMF: the load is the generator's first draw
    load = float(np.exp(np.random.default_rng(seed).uniform(np.log(0.5), np.log(2.0))))
    assert ep.decision.offered_load == pytest.approx(load, rel=1e-12)
    assert ep.interarrival_s == ep.decision.interarrival_s == pytest.approx(m.interarrival_for(load), rel=1e-12)
    count = int(np.floor(20000 / ep.interarrival_s + 1e-9)) + 1
    np.testing.assert_allclose(ep.arrivals.time_s, np.arange(count) * ep.interarrival_s)
    # the same seed, the same episode
    again = Episode(m, "lax", np.random.default_rng(seed))
    assert again.interarrival_s == ep.interarrival_s
    assert np.array_equal(again.arrivals.time_s, ep.arrivals.time_s)


def test_loads_spread_over_the_range_and_without_one_every_episode_has_the_models():
    ranged = tiny(*RANGE)
    loads = [Episode(ranged, "lax", np.random.default_rng(s)).decision.offered_load for s in range(40)]
    assert 0.5 <= min(loads) < 0.6 and 1.7 < max(loads) <= 2.0
    assert 0.25 < np.mean(np.log2(loads)) + 0.5 < 0.75  # log-uniform: log2(load) uniform on [-1, 1]
    plain = tiny("workload.offered_load=0.75", "workload.horizon_s=20000")
    d = Episode(plain, "lax", np.random.default_rng(0)).decision
    assert d.offered_load == pytest.approx(0.75, rel=1e-12)
    assert d.interarrival_s == plain.interarrival_s


def test_a_load_range_whose_top_gives_too_many_arrivals_names_the_horizon():
    from pacml.errors import ConfigError

    with pytest.raises(ConfigError, match=r"workload\.horizon_s.*offered_load 900"):
        tiny("workload.offered_load_range=[0.5, 900]", "workload.horizon_s=1e6")
