"""The PAC-ML agent: masking, invariances, batching, learning, checkpoints, tracking."""

from __future__ import annotations

import dgl  # a hard dependency: its absence must fail, not skip
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from pacml.agent.network import MASKED_LOGIT, ActorCritic, MaskedCategorical, batch_graphs, make_dgl_graph
from pacml.config import load_config
from pacml.env.features import FeatureSpace, GraphFeatures, graph_features
from pacml.sim.engine import ClusterModel, Episode

from conftest import two_layer_graph


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.booleans(), min_size=17, max_size=17).filter(any),
    st.lists(st.floats(-50, 50), min_size=17, max_size=17),
    st.integers(0, 2**31),
)
def test_masking_never_selects_an_invalid_degree(mask, logits, seed):
    m = torch.tensor([mask])
    raw = torch.tensor([logits], dtype=torch.float32)
    logits = torch.where(m, raw, torch.full_like(raw, -1e8))
    dist = MaskedCategorical(logits, m)
    gen = torch.Generator().manual_seed(seed)
    for _ in range(5):
        assert mask[int(dist.sample(gen)[0])]
    assert mask[int(dist.mode()[0])]
    ent = dist.entropy()
    assert torch.isfinite(ent).all() and (ent >= -1e-6).all()


def _paper_like_model(graphs=None):
    cfg = load_config()
    return ClusterModel(graphs or [two_layer_graph()], cfg)


def _net(cfg, features, seed=0):
    torch.manual_seed(seed)
    return ActorCritic(cfg.agent, features.global_dim, features.num_actions)


def test_network_is_permutation_invariant_over_node_order(model_graphs):
    cfg = load_config()
    g = next(x for x in model_graphs if x.name == "resnet18")
    f = graph_features(g)
    perm = np.random.default_rng(0).permutation(len(f.node))
    inv = np.argsort(perm)
    permuted = GraphFeatures(f.node[perm], f.edge, inv[f.src], inv[f.dst])
    features = FeatureSpace([g], np.array([1.0]), 32, 17)
    net = _net(cfg, features)
    with torch.no_grad():
        a = net.actor.encoder(make_dgl_graph(f))
        b = net.actor.encoder(make_dgl_graph(permuted))
    torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)


def test_distinct_graph_batching_equals_per_sample_computation(model_graphs):
    cfg = load_config()
    model = ClusterModel(model_graphs, cfg)
    features = FeatureSpace(model.graphs, model.sequential_jct_s, 32, 17)
    net = _net(cfg, features)
    rng = np.random.default_rng(1)
    n = 24
    gi = rng.integers(0, len(model_graphs), n)
    glob = torch.from_numpy(rng.random((n, features.global_dim)).astype(np.float32))
    mask = torch.from_numpy(rng.random((n, 17)) < 0.6)
    mask[:, 0] = True
    with torch.no_grad():
        fast_logits, fast_v = net(batch_graphs(features.graph_features), torch.from_numpy(gi), glob, mask)
        # the slow way: one graph per sample, batched, each sample gathering its own copy
        per_sample = batch_graphs([features.graph_features[i] for i in gi])
        slow_logits, slow_v = net(per_sample, torch.arange(n), glob, mask)
    torch.testing.assert_close(fast_logits, slow_logits, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(fast_v, slow_v, rtol=1e-5, atol=1e-5)
    # acting and imitation skip the critic: the same logits to the bit
    with torch.no_grad():
        graphs = batch_graphs(features.graph_features)
        assert torch.equal(net.actor_logits(graphs, torch.from_numpy(gi), glob, mask), fast_logits)
        emb = net.embeddings(graphs)
        assert torch.equal(net.logits(emb[0], torch.from_numpy(gi), glob, mask), fast_logits)
    assert (fast_logits[~mask] == MASKED_LOGIT).all() and (fast_logits[mask] > MASKED_LOGIT).all()


def _dgl_encoder(encoder, g):
    """The encoder's pass in DGL's own message-passing ops (copy_e_sum, segment_reduce), the
    formulation the agent's index_add_ sums stand in for."""
    h, (src, _) = g.ndata["x"], g.edges()
    for layer in encoder.layers:
        hn = layer.node_mod(h)
        msg = torch.cat([hn[src], layer.edge_mod(g.edata["e"])], dim=1)
        incoming = dgl.ops.copy_e_sum(g, layer.reduce_mod(msg))
        own = layer.reduce_mod(torch.cat([hn, torch.zeros_like(hn)], dim=1))
        h = (own + incoming) / (1.0 + g.ndata["deg"])
    sizes = g.batch_num_nodes()
    return dgl.ops.segment_reduce(sizes, h, "sum") / sizes.unsqueeze(1).float()


def test_message_sums_are_dgls_to_the_bit(model_graphs):
    """Embeddings and every gradient equal DGL's ops exactly, on the five graphs batched
    (nodes with three in-edges among them, where the order of the sum shows)."""
    cfg = load_config()
    features = FeatureSpace(model_graphs, np.ones(len(model_graphs)), 32, 17)
    g = batch_graphs(features.graph_features)
    assert int(g.in_degrees().max()) >= 3
    net = _net(cfg, features)
    weights = torch.linspace(-1.0, 1.0, cfg.agent.node_dim * len(model_graphs)).reshape(len(model_graphs), -1)
    results = []
    for encode in (net.actor.encoder, lambda graphs: _dgl_encoder(net.actor.encoder, graphs)):
        net.zero_grad()
        emb = encode(g)
        (emb * weights).sum().backward()
        results.append((emb.detach(), [p.grad.clone() for p in net.actor.encoder.parameters()]))
    (ours, our_grads), (dgls, dgl_grads) = results
    assert torch.equal(ours, dgls)
    assert all(torch.equal(a, b) for a, b in zip(our_grads, dgl_grads))


TOY = [
    "graphs.models=[]",
    "cluster.communication_groups=2",
    "cluster.racks_per_group=2",
    "cluster.servers_per_rack=1",
    "cluster.max_degree=4",
    "workload.interarrival_s=200",
    "workload.horizon_s=3999",
    "distributions.half.kind=uniform",
    "distributions.half.min=0.5",
    "distributions.half.max=0.5",
    "ppo.num_envs=2",
    "ppo.num_steps=20",
    "ppo.num_minibatches=2",
    "ppo.validation_interval=5",
    "ppo.learning_rate=0.003",
    "ppo.ent_coef=0.0",
    "ppo.gamma=0.9",
    "ppo.reward_scale=1.0",
]


def toy(*extra):
    """4 workers, beta = 0.5, the toy job (500 s at degree 1) every 200 s for 20 decisions:
    degree 1 and 2 always miss the requirement (2 by its transfers), 4 always meets it and
    finishes before the next arrival. The best fixed degree is 4 (return +20)."""
    cfg = load_config(overrides=[*TOY, *extra])
    return cfg, ClusterModel([two_layer_graph()], cfg)


def test_tiny_ppo_learns_the_best_fixed_degree(tmp_path):
    from pacml.evaluation import run_episode
    from pacml.policies.base import make_policy
    from pacml.train.ppo import train

    cfg, model = toy("ppo.total_timesteps=2400")
    _, best = run_episode(model, make_policy("fixed-4"), "half", 0)
    _, rnd = run_episode(model, make_policy("random"), "half", 0)
    assert best["blocking_rate"] == 0.0 and rnd["blocking_rate"] > 0.3
    result = train(cfg, model, "half", 0, tmp_path)
    first, last = result.curve[0]["blocking_rate"], result.curve[-1]["blocking_rate"]
    assert last == 0.0 and last < first or first == 0.0 and last == 0.0
    agent = make_policy("pacml", str(tmp_path / "best.pt"))
    _, met = run_episode(model, agent, "half", 123)
    assert met["blocking_rate"] == 0.0 and met["mean_degree"] == 4.0
    # the CLI path without --config evaluates in the checkpoint's own experiment
    from pacml.graphs.io import write_graph
    from pacml.runs import evaluate

    (tmp_path / "g").mkdir()
    write_graph(two_layer_graph(), tmp_path / "g" / "toy.json")
    rows = evaluate(tmp_path / "g", "pacml", "half", [123], checkpoint=str(tmp_path / "best.pt"))
    assert rows[0]["blocking_rate"] == 0.0 and rows[0]["jobs_arrived"] == 20


def test_training_is_deterministic_and_resumes_exactly(tmp_path):
    from pacml.train.ppo import train

    cfg, _ = toy("ppo.total_timesteps=160")  # 4 updates of 2 envs x one 20-decision episode
    full = train(cfg, toy()[1], "half", 3, tmp_path / "a")
    again = train(cfg, toy()[1], "half", 3, tmp_path / "b")

    class Killed(Exception):
        pass

    def kill_after_two(update, total, info):
        if update == 2:
            raise Killed

    with pytest.raises(Killed):
        train(cfg, toy()[1], "half", 3, tmp_path / "c", progress=kill_after_two)
    (tmp_path / "c" / "best.pt").unlink(missing_ok=True)  # as Snakemake deletes an incomplete job's outputs
    resumed = train(cfg, toy()[1], "half", 3, tmp_path / "c")
    weights = [torch.load(tmp_path / d / "last.pt", weights_only=False)["model"] for d in ("a", "b", "c")]
    assert full.curve == again.curve and resumed.updates == full.updates == 4
    # every update's metrics, the resumed run's too (kept in last.pt across the kill)
    assert [h["step"] for h in full.history] == [h["step"] for h in resumed.history] == [1, 2, 3, 4]
    assert all(h["phase"] == "ppo" and "losses/entropy" in h for h in resumed.history)
    # the learning rate falls linearly to 0 over the 4 updates; validation after the first and the last
    lr = cfg.ppo.learning_rate
    assert [h["charts/learning_rate"] for h in full.history] == pytest.approx([lr, 0.75 * lr, 0.5 * lr, 0.25 * lr])
    assert [(c["update"], c["global_step"]) for c in full.curve] == [(1, 40), (4, 160)]
    assert full.global_step == resumed.global_step == 160 and full.best_update in (1, 4)
    assert full.best_blocking_rate == min(c["blocking_rate"] for c in full.curve)

    def timeless(history):  # the timings differ from run to run; nothing else may
        return [{k: v for k, v in h.items() if not k.startswith("perf/")} for h in history]

    assert timeless(full.history) == timeless(again.history) == timeless(resumed.history)
    for k in weights[0]:
        assert torch.equal(weights[0][k], weights[1][k]), k  # same seed, same weights
        assert torch.equal(weights[0][k], weights[2][k]), k  # killed and resumed: the same too
    best = [torch.load(tmp_path / d / "best.pt", weights_only=False)["model"] for d in ("a", "c")]
    for k in best[0]:
        assert torch.equal(best[0][k], best[1][k]), k  # and its best.pt is rewritten


def test_checkpoint_round_trip(tmp_path):
    from pacml.train.checkpoint import checkpoint_config, load_checkpoint, save_checkpoint

    cfg, model = toy()
    features = FeatureSpace(model.graphs, model.sequential_jct_s, 4, 5)
    net = _net(cfg, features, seed=5)
    opt = torch.optim.Adam(net.parameters())
    gen = torch.Generator().manual_seed(9)
    save_checkpoint(tmp_path / "x.pt", net, opt, gen, cfg, {"update": 7})
    other = _net(cfg, features, seed=6)
    state = load_checkpoint(tmp_path / "x.pt", other, torch.optim.Adam(other.parameters()), torch.Generator())
    assert state == {"update": 7}
    for a, b in zip(net.state_dict().values(), other.state_dict().values()):
        assert torch.equal(a, b)
    assert checkpoint_config(tmp_path / "x.pt") == cfg


def test_mlflow_layout_parent_and_children(tmp_path):
    from pacml.tracking import child_run, init_store, sqlite_uri

    db = tmp_path / "mlflow.db"
    parents = init_store(db, "exp", ["beta_a", "beta_b"], tmp_path / "art", {"git_commit": "abc"})
    assert init_store(db, "exp", ["beta_a", "beta_b"], tmp_path / "art") == parents  # idempotent
    with child_run(
        db,
        "exp",
        parents["beta_a"],
        "train pacml seed=0",
        {"dist": "beta_a", "policy": "pacml", "seed": "0", "kind": "train"},
    ) as run:
        run.log_metrics({"charts/blocking_rate": 0.2}, step=10)
        run.log_params({"ppo.gamma": 0.99})
    import mlflow

    mlflow.set_tracking_uri(sqlite_uri(db))
    runs = mlflow.search_runs(experiment_names=["exp"], output_format="list")
    by_kind = {}
    for r in runs:
        by_kind.setdefault(r.data.tags.get("kind"), []).append(r)
    assert len(by_kind["parent"]) == 2
    (child,) = by_kind["train"]
    assert child.data.tags["mlflow.parentRunId"] == parents["beta_a"]
    assert child.data.tags["policy"] == "pacml" and child.info.status == "FINISHED"
    assert child.data.metrics["charts/blocking_rate"] == 0.2
    assert child.data.params["ppo.gamma"] == "0.99"


def test_init_degree_bias_starts_at_maximum_parallelisation(model_graphs):
    cfg = load_config(overrides=["agent.init_degree_biases=[3.0]"])
    model = ClusterModel(model_graphs, cfg)
    features = FeatureSpace(model.graphs, model.sequential_jct_s, 32, 17)
    net = _net(cfg, features)
    rng = np.random.default_rng(0)
    glob = torch.from_numpy(rng.random((8, features.global_dim)).astype(np.float32))
    mask = torch.zeros(8, 17, dtype=torch.bool)
    for i, valid in enumerate([(0, 1, 2, 4, 6, 8, 16)] * 4 + [(0, 1, 2, 4)] * 4):
        mask[i, list(valid)] = True
    with torch.no_grad():
        logits, _ = net(batch_graphs(features.graph_features), torch.arange(8) % 5, glob, mask)
    assert MaskedCategorical(logits, mask).mode().tolist() == [16] * 4 + [4] * 4


def test_a_checkpoint_of_another_config_is_not_resumed(tmp_path):
    from pacml.train.ppo import train

    cfg, _ = toy("ppo.total_timesteps=80")
    first = train(cfg, toy()[1], "half", 3, tmp_path)
    assert first.updates == 2
    again = train(cfg, toy()[1], "half", 3, tmp_path)  # same config: resumed, nothing to do
    assert again.updates == 2 and again.curve == first.curve
    other, _ = toy("ppo.total_timesteps=80", "ppo.learning_rate=0.001")
    fresh = train(other, toy()[1], "half", 3, tmp_path)  # another config: trains from scratch
    assert fresh.updates == 2 and (tmp_path / "last.pt.stale").exists()
    assert len(fresh.curve) == 2  # validated after update 1 and the last, not appended to the old curve


def test_training_from_several_starts_keeps_the_best_by_validation(tmp_path):
    from pacml.graphs.io import write_graph
    from pacml.train.starts import train_agent as train_job

    (tmp_path / "g").mkdir()
    write_graph(two_layer_graph(), tmp_path / "g" / "toy.json")
    cfg, _ = toy("ppo.total_timesteps=80", "agent.init_degree_biases=[0.0, 3.0]")
    summary = train_job(tmp_path / "g", "half", 3, cfg, out=tmp_path / "out")
    starts = [torch.load(tmp_path / "out" / f"start{k}" / "best.pt", weights_only=False) for k in (0, 1)]
    rates = [s["state"]["best"][0] for s in starts]
    chosen = min(range(2), key=lambda k: (rates[k], k))
    assert summary["best_blocking_rate"] == rates[chosen]
    assert (tmp_path / "out" / "best.pt").read_bytes() == (tmp_path / "out" / f"start{chosen}" / "best.pt").read_bytes()


def test_alternative_teachers_train_a_student_each_and_keep_the_best_by_validation(tmp_path):
    from pacml.graphs.io import write_graph
    from pacml.train.checkpoint import checkpoint_config
    from pacml.train.starts import train_agent as train_job

    (tmp_path / "g").mkdir()
    write_graph(two_layer_graph(), tmp_path / "g" / "toy.json")
    cfg, _ = toy(
        "ppo.total_timesteps=0",
        "imitation.iterations=1",
        "imitation.episodes_per_iteration=1",
        "planning.horizon=4",
        "planning.num_futures=1",
        "workflow.validation_seeds=[5]",
        "imitation.alternative_teachers=[{base_policy: fixed-1, horizon: 3, futures: 2}]",
    )
    summary = train_job(tmp_path / "g", "half", 3, cfg, out=tmp_path / "out")
    teachers = [checkpoint_config(tmp_path / "out" / f"start{k}" / "best.pt").imitation for k in (0, 1)]
    assert [(t.teacher_base_policy, t.teacher_horizon, t.teacher_futures) for t in teachers] == [
        ("best_fixed", None, None),
        ("fixed-1", 3, 2),
    ]
    assert all(t.alternative_teachers == () for t in teachers)
    starts = summary["starts"]
    assert [s["teacher_base_policy"] for s in starts] == ["best_fixed", "fixed-1"]
    rates = [s["best_blocking_rate"] for s in starts]
    kept = 1 if rates[1] + cfg.imitation.alternative_margin < rates[0] else 0
    assert [s["kept"] for s in starts] == [k == kept for k in range(2)]
    assert summary["best_blocking_rate"] == starts[kept]["best_blocking_rate"]
    assert (tmp_path / "out" / "best.pt").read_bytes() == (tmp_path / "out" / f"start{kept}" / "best.pt").read_bytes()


@pytest.mark.parametrize(
    ("rates", "margin", "kept"),
    [((0.30, 0.29), 0.005, 1), ((0.30, 0.297), 0.005, 0), ((0.30, 0.297), 0.0, 1), ((0.29, 0.30), 0.0, 0)],
)
def test_an_alternative_teachers_student_is_kept_only_below_the_margin(tmp_path, monkeypatch, rates, margin, kept):
    from pacml.tracking import NullTracker
    from pacml.train import ppo
    from pacml.train.starts import train_from_starts

    class Tracker(NullTracker):
        def log_params(self, params):
            self.params = params

    def fake_train(cfg, model, dist, seed, out, log=None, progress=None, selection=None):
        k = int(out.name.removeprefix("start"))
        out.mkdir(parents=True)
        for name in ("best.pt", "last.pt"):
            (out / name).write_text(f"start{k}")
        return ppo.TrainResult(rates[k], 0, 0, 0, 1.0, [])

    monkeypatch.setattr(ppo, "train", fake_train)
    cfg, model = toy(
        "imitation.iterations=1",
        "imitation.alternative_teachers=[{horizon: 3}]",
        f"imitation.alternative_margin={margin}",
    )
    tracker = Tracker()
    result = train_from_starts(cfg, model, "half", 0, tmp_path, tracker, None)
    assert (tmp_path / "best.pt").read_text() == f"start{kept}" and result.best_blocking_rate == rates[kept]
    assert [s["kept"] for s in result.starts] == [k == kept for k in range(2)]
    assert tracker.params["selected_start"] == kept


@pytest.mark.parametrize("loss", ["cross_entropy", "score_regression"])
def test_dagger_on_a_toy_cluster_reaches_the_planners_choices(loss):
    """The teacher-student loop: after a few DAgger iterations the student's greedy degree
    is the planner's on most states of an episode it never trained on, whether it learns the
    teacher's best degrees or regresses its scores."""
    import torch

    from pacml.agent.policy import validate_on
    from pacml.evaluation import episode_rngs
    from pacml.train.imitation import imitate, make_teacher
    from pacml.train.ppo import build_agent

    from conftest import TOY_CLUSTER, toy_pool

    cfg = load_config(
        overrides=[
            *TOY_CLUSTER,
            "agent.shape_features=true",
            "agent.graph_dim=32",
            "planning.horizon=20",
            "planning.num_futures=2",
            "planning.base_policy=fixed-4",
            "imitation.iterations=6",
            "imitation.episodes_per_iteration=3",
            "imitation.epochs=20",
            "workflow.validation_seeds=[7]",
            f"imitation.loss={loss}",
        ]
    )
    model = ClusterModel(toy_pool(), cfg)
    torch.manual_seed(0)
    net, features = build_agent(cfg, model)
    graphs = batch_graphs(features.graph_features)
    history = imitate(
        cfg, model, "beta_a", 0, net, graphs, features, lambda n: validate_on(n, cfg, model, "beta_a", (7,))
    )
    assert history[-1]["imitation/accuracy"] > history[0]["imitation/agreement"]
    from pacml.agent.policy import GreedyAgent

    teacher, student = make_teacher(cfg, model, "beta_a"), GreedyAgent(net, cfg)
    env_rng, rng = episode_rngs(12345)
    ep = Episode(model, "beta_a", env_rng)
    agree = total = 0
    while not ep.done:
        d = ep.decision
        a = teacher.act(d, rng)
        agree += int(student.act(d, rng) == a)
        total += 1
        ep.step(a)
    assert agree / total >= 0.8


def test_an_assembled_ensemble_acts_on_its_actors_mean_probabilities():
    cfg = load_config(overrides=["agent.actor_ensemble=3", "imitation.iterations=3", "ppo.total_timesteps=0"])
    single_cfg = load_config()
    model = ClusterModel([two_layer_graph()], single_cfg)
    features = FeatureSpace(model.graphs, model.sequential_jct_s, 32, 17)
    net = _net(cfg, features, seed=3)
    singles = [_net(single_cfg, features, seed=s) for s in (3, 4, 5)]
    # the members are built last: the first actor and the critic are a single network's
    shared = singles[0].state_dict()
    assert all(torch.equal(v, shared[k]) for k, v in net.state_dict().items() if k in shared)
    assert set(net.state_dict()) - set(shared) == {"assembled"} | {
        k for k in net.state_dict() if k.startswith("members.")
    }
    graphs = batch_graphs(features.graph_features)
    rng = np.random.default_rng(2)
    n = 12
    gi = torch.zeros(n, dtype=torch.long)
    glob = torch.from_numpy(rng.random((n, features.global_dim)).astype(np.float32))
    mask = torch.from_numpy(rng.random((n, 17)) < 0.5)
    mask[:, 0] = True
    with torch.no_grad():
        before, _ = net(graphs, gi, glob, mask)
        alone, _ = singles[0](graphs, gi, glob, mask)
        assert not net.ensembled and torch.equal(before, alone)  # members act only once assembled
        net.assemble([s.actor.state_dict() for s in singles])
        assert net.ensembled
        logits, _ = net(graphs, gi, glob, mask)
        probs = [torch.softmax(s(graphs, gi, glob, mask)[0], dim=1) for s in singles]
    mean = (probs[0] + probs[1] + probs[2]) / 3
    torch.testing.assert_close(torch.exp(logits).where(mask, torch.zeros_like(mean)), mean, rtol=1e-5, atol=1e-7)
    assert (logits[~mask] == MASKED_LOGIT).all()
    assert torch.equal(MaskedCategorical(logits, mask).mode(), mean.argmax(dim=1))
    # the flag travels with the weights: a loaded checkpoint acts as the ensemble
    loaded = _net(cfg, features, seed=9)
    loaded.load_state_dict(net.state_dict())
    with torch.no_grad():
        assert loaded.ensembled and torch.equal(loaded(graphs, gi, glob, mask)[0], logits)
    with pytest.raises(ValueError, match="2 actor weights for 3 actors"):
        net.assemble([s.actor.state_dict() for s in singles[:2]])


def test_a_single_actor_network_keeps_its_checkpoint_keys():
    cfg = load_config()
    model = ClusterModel([two_layer_graph()], cfg)
    net = _net(cfg, FeatureSpace(model.graphs, model.sequential_jct_s, 32, 17))
    assert not net.ensembled and not any(k.startswith("members") or k == "assembled" for k in net.state_dict())


def test_imitation_assembles_its_best_iterations_by_validation():
    from pacml.train.imitation import imitate
    from pacml.train.ppo import build_agent

    cfg, model = toy(
        "ppo.total_timesteps=0",
        "imitation.iterations=4",
        "imitation.episodes_per_iteration=1",
        "planning.horizon=4",
        "planning.num_futures=1",
        "planning.base_policy=fixed-4",
        "imitation.teacher_base_policy=planning",
        "agent.actor_ensemble=2",
    )
    torch.manual_seed(0)
    net, features = build_agent(cfg, model)
    rates, seen = [0.3, 0.1, 0.3, 0.2], []

    def validate(n):  # scripted validation: iterations 2 and 4 are the best two
        seen.append({k: v.clone() for k, v in n.actor.state_dict().items()})
        return {"blocking_rate": rates[len(seen) - 1], "mean_degree": 4.0}

    history = imitate(cfg, model, "half", 0, net, batch_graphs(features.graph_features), features, validate)
    assert net.ensembled
    for tower, it in ((net.actor, 2), (net.members[0], 4)):
        assert all(torch.equal(v, seen[it - 1][k]) for k, v in tower.state_dict().items())
    assert not all(torch.equal(v, seen[0][k]) for k, v in net.actor.state_dict().items())  # the iterations differ
    assert (history[-1]["imitation/ensemble_member_0"], history[-1]["imitation/ensemble_member_1"]) == (2, 4)


def test_a_truncated_last_checkpoint_is_set_aside_and_training_starts_again(tmp_path):
    from pacml.train.ppo import train

    cfg, model = toy("ppo.total_timesteps=80")
    clean = train(cfg, model, "half", 0, tmp_path / "clean")
    out = tmp_path / "run"
    train(cfg, model, "half", 0, out)
    data = (out / "last.pt").read_bytes()
    (out / "last.pt").write_bytes(data[: len(data) // 3])  # killed mid-copy, say
    again = train(cfg, model, "half", 0, out)
    assert (out / "last.pt.corrupt").exists()
    assert again.curve == clean.curve and again.updates == clean.updates


def test_imitation_targets_by_hand_and_a_masked_degree_counts_as_blocking():
    from pacml.train.imitation import target_distribution

    # degrees 2 and 4 tie for the fewest blocked jobs; the teacher chose 2
    t = target_distribution({1: 5.0, 2: 3.0, 4: 3.0, 8: 4.0}, 2, 9, 0.0)
    assert t.tolist() == [0.0, 0.0, 0.75, 0.0, 0.25, 0.0, 0.0, 0.0, 0.0]
    # under the feasible mask 1 and 4 (too slow: they block the job, like 0) are not offered;
    # blocking ties the best, so the choice (mapped to 0) and 4's share go to 0
    valid = np.array([True, False, True, False, False, False, False, False, True])
    t = target_distribution({1: 3.0, 2: 4.0, 4: 3.0, 8: 5.0}, 0, 9, 0.0, valid)
    assert t.tolist() == [1.0] + [0.0] * 8
    t = target_distribution({1: 4.0, 2: 3.0, 4: 4.0, 8: 3.0}, 2, 9, 0.0, valid)
    assert t.tolist() == [0.0, 0.0, 0.75, 0.0, 0.0, 0.0, 0.0, 0.0, 0.25]


def test_score_labels_by_hand_and_a_masked_degree_scores_as_rejecting():
    from pacml.train.imitation import score_target

    nan = float("nan")
    t = score_target({1: 5.0, 2: 3.0, 4: 3.5}, 6)
    # nothing blocks the job: rejecting it is one more blocked job than the worst degree
    np.testing.assert_array_equal(t, [6.0, 5.0, 3.0, nan, 3.5, nan])
    # 1 is outside the student's mask (it blocks the job): rejecting scores as 1 does
    valid = np.array([True, False, True, False, True, False])
    np.testing.assert_array_equal(score_target({1: 5.0, 2: 3.0, 4: 3.5}, 6, valid), [5.0, nan, 3.0, nan, 3.5, nan])
    np.testing.assert_array_equal(score_target({}, 3), [0.0, nan, nan])


def test_score_regression_loss_by_hand():
    from pacml.train.imitation import best_degrees, score_regression_loss

    nan = float("nan")
    target = torch.tensor([[4.0, 2.0, nan, 3.0], [1.0, nan, nan, nan]])
    # minus the logits equal the scores plus a per-state constant: nothing left to learn
    exact = torch.tensor([[-14.0, -12.0, MASKED_LOGIT, -13.0], [7.0, MASKED_LOGIT, MASKED_LOGIT, MASKED_LOGIT]])
    assert score_regression_loss(exact, target).item() == 0.0
    # one degree off by 3: centred errors (2, -1, -1) on the three scored degrees of state 0,
    # nothing on the one of state 1; the mean over the four scored entries is 6 / 4
    off = exact.clone()
    off[0, 0] -= 3.0
    assert score_regression_loss(off, target).item() == pytest.approx(1.5)
    logits = off.clone().requires_grad_()
    score_regression_loss(logits, target).backward()
    assert (logits.grad[torch.isnan(target)] == 0).all()  # unscored and masked degrees learn nothing
    assert best_degrees(target, "score_regression").tolist() == [
        [False, True, False, False],
        [True, False, False, False],
    ]


@pytest.mark.parametrize("seed", [0, 1])
def test_a_greedy_agent_under_the_feasible_mask_never_plays_a_degree_that_blocks_the_job(seed):
    from pacml.agent.policy import GreedyAgent
    from pacml.evaluation import run_episode
    from pacml.train.ppo import build_agent

    from conftest import TOY_CLUSTER, toy_pool

    blocked_by_degree = {}
    for feasible in (True, False):
        cfg = load_config(None, [*TOY_CLUSTER, f"agent.feasible_mask={str(feasible).lower()}"])
        model = ClusterModel(toy_pool(), cfg)
        torch.manual_seed(seed)  # the same untrained weights under both masks
        net, _ = build_agent(cfg, model)
        _, met = run_episode(model, GreedyAgent(net, cfg), "beta_a", 7)
        blocked_by_degree[feasible] = met["blocked_jct"] + met["blocked_placement"]
    assert blocked_by_degree[True] == 0
    assert blocked_by_degree[False] > 0  # the same weights under the optimistic mask do
