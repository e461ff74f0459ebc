"""Observation features: fixed (pool-independent) scales by hand, the same job read the same
in any pool, and a checkpoint acting on a pool it never saw."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from pacml.config import config_hash, load_config
from pacml.env.features import FeatureSpace, LogScales, ShapeInputs
from pacml.errors import ConfigError
from pacml.sim.engine import ClusterModel

from conftest import TOY_CLUSTER, chain_graph, toy_pool, two_layer_graph

FIXED = LogScales(seconds=(0.0, 6.0), bytes=(6.0, 12.0), counts=(0.0, 4.0))
SHAPE = ShapeInputs(communication_groups=2, racks_per_group=2, servers_per_rack=2)


def _space(pool, seq, scales):
    return FeatureSpace(pool, np.asarray(seq, dtype=float), 8, 9, shape=SHAPE, scales=scales)


def _vector(space, graph_index, beta=0.5):
    """The job, cluster and mask part (the shape part is `shape_vector`'s, below)."""
    vec = space.global_vector(graph_index, beta, free_workers=6, running_jobs=1, mask=np.ones(9, dtype=bool))
    return vec[: 17 + 9]


def test_fixed_scales_by_hand():
    mid = chain_graph("mid", 4, 4e-3, 4e8)  # 4 forward + 4 backward ops, 3 + 3 + 1 deps
    space = _space([mid], [1000.0], FIXED)
    v = _vector(space, 0, beta=0.1)
    assert mid.num_ops == 8 and mid.num_deps == 7
    assert v[0] == pytest.approx(np.log10(8) / 4)  # ops, over log10 1 .. 4
    assert v[1] == pytest.approx(np.log10(7) / 4)
    assert v[2] == pytest.approx(0.5)  # 1000 s on log10 0 .. 6
    assert v[3] == pytest.approx(2 / 6)  # acceptable: 0.1 x 1000 = 100 s
    assert v[4] == v[5] == pytest.approx(0.1)
    assert v[8] == pytest.approx(np.log10(50) / 4)  # 50 training steps
    # memory: (log10 bytes - 6) / 6
    assert v[6] == pytest.approx((np.log10(mid.memory_bytes.sum()) - 6) / 6)
    # a pool of one under min-max reads 1 for each of these (ddls' constant case): fixed scales do not
    pool = _vector(_space([mid], [1000.0], None), 0, beta=0.1)
    assert pool[[0, 1, 2, 6, 7, 8]].tolist() == [1.0] * 6


def test_a_job_reads_the_same_in_any_pool_under_fixed_scales():
    small, mid, big = toy_pool()
    huge = chain_graph("huge", 12, 5e-2, 4e9, steps=400)
    one = _space([small, mid], [300.0, 900.0], FIXED)
    other = _space([huge, two_layer_graph(), mid, big], [5e4, 2.0, 900.0, 2000.0], FIXED)
    assert np.array_equal(_vector(one, 1), _vector(other, 2))
    for a, b in zip(
        (one.graph_features[1].node, one.graph_features[1].edge),
        (other.graph_features[2].node, other.graph_features[2].edge),
    ):
        assert np.array_equal(a, b)
    # the paper's pool scales read the same job differently in these two pools
    assert not np.array_equal(
        _vector(_space([small, mid], [300.0, 900.0], None), 1),
        _vector(_space([huge, two_layer_graph(), mid, big], [5e4, 2.0, 900.0, 2000.0], None), 2),
    )


def _decision(graph_index, departures, time_s=100.0):
    state = SimpleNamespace(free_mask=0b00111111, departures=departures)
    return SimpleNamespace(
        graph_index=graph_index,
        mask=np.array([False, True, True, True, True, False, False, False, True]),
        lookahead=lambda d: None,
        placed_step_times=lambda: (),  # no degree places
        num_training_steps=1,
        max_acceptable_jct_s=450.0,
        snapshot=lambda: state,
        time_s=time_s,
        horizon_s=1e4,
    )


def test_pending_releases_are_in_the_jobs_own_sequential_jct_under_fixed_scales():
    small, mid, big = toy_pool()
    # two workers free at t + 100 s: 2/8 within 1/8 of mid's 900 s (112.5 s), not within 1/16
    departures = [(200.0, 0, 0b11000000)]
    one = _space([small, mid], [300.0, 900.0], FIXED)
    other = _space([big, mid], [4000.0, 900.0], FIXED)
    a, b = one.shape_vector(_decision(1, departures)), other.shape_vector(_decision(1, departures))
    assert np.array_equal(a, b)
    releases = a[9 + 2 + 4 : 9 + 2 + 4 + 6]
    assert releases.tolist() == [0.0, 0.0, 0.25, 0.25, 0.25, 0.25]
    # pool scales: the windows are in the pool's mean sequential JCT (600 s against 2450 s)
    pooled = _space([big, mid], [4000.0, 900.0], None).shape_vector(_decision(1, departures))
    assert pooled[9 + 2 + 4 : 9 + 2 + 4 + 6].tolist() == [0.0, 0.25, 0.25, 0.25, 0.25, 0.25]


def _toy_config(*extra):
    return load_config(None, [*TOY_CLUSTER, "agent.shape_features=true", "agent.feature_scales=fixed", *extra])


def test_a_checkpoint_acts_on_a_pool_with_other_scales(tmp_path):
    import torch

    from pacml.agent.network import ActorCritic
    from pacml.agent.policy import AgentPolicy
    from pacml.evaluation import run_episode
    from pacml.sim.engine import Episode
    from pacml.train.checkpoint import save_checkpoint

    cfg = _toy_config()
    trained_on = ClusterModel(toy_pool(), cfg)
    torch.manual_seed(3)
    actions = cfg.cluster.max_degree + 1
    net = ActorCritic(cfg.agent, FeatureSpace.agent_global_dim(cfg, actions), actions)
    save_checkpoint(tmp_path / "a.pt", net, torch.optim.Adam(net.parameters()), torch.Generator(), cfg, {"update": 0})
    assert trained_on.graphs[0].name == "small"

    # another pool: longer chains, 3-10x the bytes, twice the training steps, and a two-op job
    new_pool = [chain_graph("wide", 10, 1e-3, 2e9, steps=100), two_layer_graph(steps=100)]
    model = ClusterModel(new_pool, cfg)
    policy = AgentPolicy(tmp_path / "a.pt")
    episode = Episode(model, "beta_a", np.random.default_rng(0))
    for _ in range(5):
        decision = episode.decision
        features, emb = policy._bind(decision)
        vec = features.decision_vector(decision)
        assert np.isfinite(vec).all()
        mask = torch.from_numpy(decision.mask)[None]
        with torch.no_grad():
            logits, value = policy.net.heads(
                emb, torch.tensor([decision.graph_index]), torch.from_numpy(vec)[None], mask
            )
        assert torch.isfinite(logits[mask]).all() and torch.isfinite(value).all()
        assert (logits[~mask] <= -1e7).all()
        degree = policy.act(decision, np.random.default_rng(0))
        assert decision.mask[degree]
        episode.step(degree)
    _, metrics = run_episode(model, policy, "beta_a", 1)
    assert metrics["jobs_arrived"] > 0 and all(np.isfinite(v) for v in metrics.values())


def test_feature_scale_keys_change_the_hash_only_when_read():
    pool = load_config()
    assert config_hash(load_config(None, ["agent.log10_seconds=[1, 5]"])) == config_hash(pool)
    fixed = load_config(None, ["agent.feature_scales=fixed"])
    assert config_hash(fixed) != config_hash(pool)
    moved = load_config(None, ["agent.feature_scales=fixed", "agent.log10_seconds=[1, 5]"])
    assert config_hash(moved) != config_hash(fixed)


@pytest.mark.parametrize("key", ["log10_seconds", "log10_bytes", "log10_counts"])
@pytest.mark.parametrize("value", ["[6, 6]", "[3]", "[5, 1, 2]"])
def test_a_bad_log_range_names_its_key(key, value):
    with pytest.raises(ConfigError, match=f"agent.{key}"):
        load_config(None, [f"agent.{key}={value}"])


def test_shape_features_by_hand():
    # free: workers 0, 1, 2 and 5 (of 8: groups of 4, racks of 2, numbered group-major)
    state = SimpleNamespace(
        free_mask=0b00100111, departures=((150.0, 0, 0b1000), (212.5, 1, 0b10000000), (400.0, 2, 0b01010000))
    )
    jct = {1: 900.0, 2: 450.0, 4: 225.0, 8: None}
    decision = SimpleNamespace(
        graph_index=1,
        mask=np.array([True, True, True, False, True, False, False, False, True]),
        lookahead=jct.get,
        # the engine's step times of the placed degrees (one training step: the JCTs above)
        placed_step_times=lambda: tuple((a, t) for a, t in jct.items() if t is not None),
        num_training_steps=1,
        max_acceptable_jct_s=450.0,
        snapshot=lambda: state,
        time_s=100.0,
        horizon_s=1e4,
        free_workers=4,
        running_jobs=2,
        beta=0.5,
    )
    space = _space(list(toy_pool()[:2]), [300.0, 900.0], FIXED)
    out = space.shape_vector(decision)
    # per degree: JCT over the requirement clipped at 2, halved; masked or unplaceable: 1
    assert out[:9].tolist() == [1.0, 1.0, 0.5, 1.0, 0.25, 1.0, 1.0, 1.0, 1.0]
    assert out[9:11].tolist() == [0.75, 0.25]  # groups: 3 of 4, 1 of 4
    assert out[11:15].tolist() == [1.0, 0.5, 0.5, 0.0]  # racks (0,0), (0,1), (1,0), (1,1)
    # releases within 1/32 .. 1 of 900 s after t = 100 s: one worker at 150 s (the 28.1 s window:
    # no; 56.25 s: yes), one at 212.5 s (exactly the 112.5 s window: counted), two at 400 s
    assert out[15:21].tolist() == [0.0, 0.125, 0.25, 0.25, 0.5, 0.5]
    assert out[21] == pytest.approx(1.0 - 100.0 / 1e4)
    assert len(out) == space.global_dim - (17 + 9)


def test_the_load_feature_is_the_episodes_log2_load_last():
    from pacml.sim.engine import Episode

    def cfg_with(*extra):
        return load_config(overrides=[*TOY_CLUSTER, "workload.offered_load_range=[0.25, 4.0]", *extra])

    plain_cfg, load_cfg = (
        cfg_with("agent.shape_features=true"),
        cfg_with("agent.shape_features=true", "agent.load_feature=true"),
    )
    m = ClusterModel(toy_pool(), plain_cfg)
    args = (m.graphs, m.sequential_jct_s, m.topology.num_workers, m.max_degree + 1)
    plain, loaded = FeatureSpace.for_agent(plain_cfg, *args), FeatureSpace.for_agent(load_cfg, *args)
    assert loaded.global_dim == plain.global_dim + 1 == FeatureSpace.agent_global_dim(load_cfg, 9)
    assert FeatureSpace.dim(9, False, None, load=True) == 17 + 9 + 1
    for seed in range(3):
        d = Episode(m, "beta_a", np.random.default_rng(seed)).decision
        vec, base = loaded.decision_vector(d), plain.decision_vector(d)
        assert vec[-1] == np.float32(np.log2(d.offered_load)) and 0.25 <= d.offered_load <= 4.0
        assert np.array_equal(vec[:-1], base)  # the shape part stays where it was


def test_a_jobs_own_steps_are_scaled_like_its_graphs_by_hand():
    pool = [chain_graph("a", 3, 2e-3, 2e8, steps=40), chain_graph("b", 4, 4e-3, 4e8, steps=60)]
    seq = [100.0, 300.0]
    space = FeatureSpace(pool, np.asarray(seq), 8, 9)
    mask = np.ones(9, dtype=bool)
    by_graph = space.global_vector(1, 0.5, free_workers=6, running_jobs=1, mask=mask)
    own = space.global_vector(1, 0.5, free_workers=6, running_jobs=1, mask=mask, job=(200.0, 45))
    assert by_graph[8] == 1.0 and own[8] == np.float32((45 - 40) / (60 - 40))
    assert by_graph[2] == 1.0 and own[2] == np.float32((200.0 - 100.0) / (300.0 - 100.0))
    assert by_graph[3] == np.float32(0.5 * 300 / 300) and own[3] == np.float32(0.5 * 200 / 300)
    fixed = FeatureSpace(pool, np.asarray(seq), 8, 9, scales=FIXED).global_vector(1, 0.5, 6, 1, mask, job=(200.0, 100))
    assert fixed[8] == np.float32(2.0 / 4.0) and fixed[2] == np.float32(np.log10(200.0) / 6.0)


def test_an_agent_reads_the_cluster_and_the_episode_it_acts_in():
    """An agent trained on 8 workers and an 18000 s horizon, acting on 4 workers (1 server per
    rack) with a 9000 s horizon, reads the racks and the time left of where it acts, as an
    agent configured there would (the cluster_size and physical_time experiments)."""
    from pacml.evaluation import episode_rngs
    from pacml.sim.engine import Episode

    trained = load_config(overrides=[*TOY_CLUSTER, "agent.shape_features=true"])
    acting = load_config(overrides=[*TOY_CLUSTER, "agent.shape_features=true", "cluster.servers_per_rack=1",
                                    "workload.horizon_s=9000"])  # fmt: skip
    m = ClusterModel(toy_pool(), acting)
    args = (m.graphs, m.sequential_jct_s, m.topology.num_workers, m.max_degree + 1)
    theirs, ours = FeatureSpace.for_agent(trained, *args), FeatureSpace.for_agent(acting, *args)
    ep = Episode(m, "beta_a", episode_rngs(1)[0])
    partly_free = 0
    for _ in range(25):
        d = ep.decision
        vec = theirs.decision_vector(d)
        assert np.array_equal(vec, ours.decision_vector(d))
        assert vec[-1] == np.float32(max(0.0, 1.0 - d.time_s / 9000.0))  # the acting episode's time left
        partly_free += 0 < d.free_workers < 4
        ep.step(2 if d.mask[2] else 0)
    assert partly_free > 5  # racks and groups told apart (the trained 2 servers a rack would not)
    lopsided = load_config(overrides=[*TOY_CLUSTER, "cluster.communication_groups=3", "cluster.racks_per_group=1"])
    with pytest.raises(ConfigError, match=r"cluster\.communication_groups.*cannot act on a cluster of 6 workers"):
        FeatureSpace.for_agent(trained, m.graphs, m.sequential_jct_s, 6, 9)
    assert lopsided.cluster.num_workers == 6
