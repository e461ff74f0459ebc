"""Forks, look-ahead counting, the planning policies and best_fixed."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from pacml.config import load_config
from pacml.errors import ConfigError
from pacml.evaluation import episode_rngs, run_episode
from pacml.policies.base import PolicyContext, make_policy
from pacml.sim.engine import ClusterModel, Episode
from pacml.sim.lookahead import base_rule, blocked_after

from conftest import TOY_CLUSTER, toy_pool


def toy_model(*overrides: str) -> ClusterModel:
    return ClusterModel(toy_pool(), load_config(overrides=[*TOY_CLUSTER, *overrides]))


def play(episode, policy, rng) -> None:
    while not episode.done:
        episode.step(policy.act(episode.decision, rng))


def blocked_by_the_engine(ep, degree: int, base: str, rng) -> int:
    """The jobs blocked from the current arrival on when a fork of ``ep`` plays ``degree`` and
    then ``base`` to the end: what `blocked_after` must count."""
    first = ep.decision.job_idx
    fork = ep.fork()
    fork.step(degree)
    play(fork, make_policy(base), rng)
    return sum(r.outcome == "blocked" for r in fork.records if r.job_idx >= first)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_fork_continued_with_the_same_choices_equals_the_original(seed):
    m = toy_model()
    env_rng, _ = episode_rngs(seed)
    ep = Episode(m, "beta_a", env_rng)
    pol = make_policy("random")
    rng = np.random.default_rng(seed)
    for _ in range(20):
        ep.step(pol.act(ep.decision, rng))
    fork = ep.fork()
    before = list(ep.records)
    state = dataclasses.asdict(ep.snapshot())
    play(fork, make_policy("para_min"), rng)  # stepping the fork leaves the original alone
    assert ep.records == before and dataclasses.asdict(ep.snapshot()) == state
    again = ep.fork()
    play(ep, make_policy("fixed-4"), rng)
    play(again, make_policy("fixed-4"), rng)
    assert again.records == ep.records and len(ep.records) == 61


@pytest.mark.parametrize("base", ["fixed-2", "fixed-4", "para_max", "para_min", "sequential"])
@pytest.mark.parametrize("seed", [0, 3])
def test_lookahead_count_equals_the_forked_engine(base, seed):
    """blocked_after over the true future equals the engine run to the end by the base policy."""
    m = toy_model()
    ep = Episode(m, "beta_a", episode_rngs(seed)[0])
    rng = np.random.default_rng(seed)
    for _ in range(10):
        ep.step(make_policy("random").act(ep.decision, rng))
    d = ep.decision
    rule = base_rule(base, m)
    for degree in (int(a) for a in np.flatnonzero(d.mask[1:]) + 1):
        truth = blocked_by_the_engine(ep, degree, base, rng)
        f = d.future(10_000)
        got = blocked_after(
            m, d.snapshot(), d.graph_index, d.beta, degree, f.time_s.tolist(), f.graph.tolist(), f.beta.tolist(), rule
        )
        assert got == truth


@pytest.mark.parametrize("base", ["fixed-2", "fixed-4", "para_min"])
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_clairvoyant_rollout_never_blocks_more_than_its_base_policy(base, seed):
    """The rollout property of a deterministic problem: with H covering the rest of the
    episode and ties going to the base policy's degree, rollout is no worse than its base."""
    m = toy_model("planning.horizon=1000", "planning.tie_break=base", f"planning.base_policy={base}")
    ctx = PolicyContext(m, "beta_a")
    _, planned = run_episode(m, make_policy("rollout_clairvoyant", context=ctx), "beta_a", seed)
    _, plain = run_episode(m, make_policy(base), "beta_a", seed)
    assert planned["jobs_blocked"] <= plain["jobs_blocked"]


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_clairvoyant_rollout_with_extra_bases_never_blocks_more_than_any_of_them(seed):
    """Rollout with several base heuristics: each degree costs its fewest blocked jobs over the
    bases, so the planner is no worse than the best of them on every episode."""
    m = toy_model("planning.horizon=1000", "planning.base_policy=fixed-2", "planning.extra_bases=[para_max, fixed-8]")
    _, planned = run_episode(m, make_policy("rollout_clairvoyant", context=PolicyContext(m, "beta_a")), "beta_a", seed)
    plain = [
        run_episode(m, make_policy(b), "beta_a", seed)[1]["jobs_blocked"] for b in ("fixed-2", "para_max", "fixed-8")
    ]
    assert planned["jobs_blocked"] <= min(plain)


def test_a_degrees_score_is_its_fewest_blocked_over_the_bases():
    from pacml.policies.planning import Rollout

    plan = ["planning.horizon=40", "planning.num_futures=3"]
    m = toy_model(*plan, "planning.extra_bases=[para_max]")
    ep = Episode(m, "beta_a", episode_rngs(3)[0])
    for _ in range(8):  # a state where fixed-4 scores lower on some degrees and para_max on others
        ep.step(int(np.flatnonzero(ep.decision.mask)[-1]))
    d = ep.decision
    both = Rollout(m, "beta_a", m.cfg.planning, "fixed-4").scores(d, np.random.default_rng(7))
    alone = {
        b: Rollout(m, "beta_a", toy_model(*plan).cfg.planning, b).scores(d, np.random.default_rng(7))
        for b in ("fixed-4", "para_max")
    }
    assert both == {a: min(alone["fixed-4"][a], alone["para_max"][a]) for a in both}
    assert both[1] == alone["fixed-4"][1] < alone["para_max"][1]  # each base gives some degree's score
    assert both[2] == alone["para_max"][2] < alone["fixed-4"][2]


def test_rollout_is_deterministic_and_never_reads_the_true_future(monkeypatch):
    m = toy_model("planning.horizon=30", "planning.num_futures=3", "planning.base_policy=fixed-4")
    ctx = PolicyContext(m, "beta_a")
    first = run_episode(m, make_policy("rollout", context=ctx), "beta_a", 5)
    second = run_episode(m, make_policy("rollout", context=ctx), "beta_a", 5)
    assert first == second
    from pacml.sim import engine

    def forbidden(self, h):
        raise AssertionError("a deployable policy read the episode's future")

    monkeypatch.setattr(engine.Episode, "future", forbidden)
    assert run_episode(m, make_policy("rollout", context=ctx), "beta_a", 5) == first
    with pytest.raises(AssertionError, match="future"):
        run_episode(m, make_policy("rollout_clairvoyant", context=ctx), "beta_a", 5)


def test_rollout_scores_are_hand_checkable():
    """On an empty 8-worker cluster with no later arrivals, a degree meeting the requirement
    blocks nothing and one that misses it blocks this job; under paper accounting a job
    that runs past the horizon is blocked too."""
    m = toy_model(
        "planning.horizon=1", "planning.num_futures=1", "workload.horizon_s=1", "workload.horizon_accounting=fixed"
    )
    ctx = PolicyContext(m, "beta_a")
    pol = make_policy("rollout", context=ctx)
    ep = Episode(m, "beta_a", episode_rngs(0)[0])
    d = ep.decision
    scores = pol.scores(d, np.random.default_rng(0))
    assert sorted(scores) == [1, 2, 4, 8]
    for a, s in scores.items():
        meets = d.lookahead(a) <= d.max_acceptable_jct_s
        assert s == (0.0 if meets else 1.0)
    assert pol.choose(d, scores) == min(a for a, s in scores.items() if s == 0.0)
    paper = toy_model("planning.horizon=1", "planning.num_futures=1", "workload.horizon_s=1")
    d = Episode(paper, "beta_a", episode_rngs(0)[0]).decision
    assert set(
        make_policy("rollout", context=PolicyContext(paper, "beta_a")).scores(d, np.random.default_rng(0)).values()
    ) == {1.0}


def test_best_fixed_is_chosen_on_validation_seeds_only(monkeypatch):
    from pacml.policies import planning

    m = toy_model("workflow.validation_seeds=[7, 8]", "workflow.test_seeds=[100]")
    seen = []
    real = run_episode

    def spy(model, policy, dist, seed, policy_seed=None):
        seen.append(seed)
        return real(model, policy, dist, seed, policy_seed)

    monkeypatch.setattr("pacml.evaluation.run_episode", spy)
    degree, table = planning.best_fixed_degree(m, "beta_a", m.cfg.workflow.validation_seeds)
    assert set(seen) == {7, 8} and sorted(table) == [1, 2, 4, 8]
    assert degree == min(table, key=lambda k: (table[k], k))
    pol = make_policy("best_fixed", context=PolicyContext(m, "beta_a"))
    assert pol.k == degree and pol.name == "best_fixed" and 100 not in seen


def test_validation_seeds_may_not_be_test_seeds():
    with pytest.raises(ConfigError, match="workflow.validation_seeds"):
        load_config(overrides=["workflow.validation_seeds=[100]"])


@pytest.mark.parametrize(
    "key,value",
    [
        ("workflow.baselines", "[fixed-0]"),
        ("workflow.baselines", "[rolout]"),
        ("planning.base_policy", "random"),
        ("planning.horizon", "0"),
    ],
)
def test_bad_planning_names_stop_at_load(key, value):
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        load_config(overrides=[f"{key}={value}"])


def test_lookahead_frees_servers_before_a_simultaneous_arrival():
    """One worker; the sequential toy job takes exactly 500 s and the next arrives at 500 s."""
    from conftest import two_layer_graph

    cfg = load_config(
        overrides=[
            "cluster.communication_groups=1",
            "cluster.racks_per_group=1",
            "cluster.servers_per_rack=1",
            "workload.interarrival_s=500",
            "workload.horizon_s=1000",
            "workload.horizon_accounting=fixed",
            "distributions.lax.kind=uniform",
            "distributions.lax.min=1.0",
            "distributions.lax.max=1.0",
        ]
    )
    m = ClusterModel([two_layer_graph()], cfg)
    d = Episode(m, "lax", episode_rngs(0)[0]).decision
    f = d.future(10)
    assert f.time_s.tolist() == [500.0, 1000.0]
    got = blocked_after(
        m, d.snapshot(), 0, 1.0, 1, f.time_s.tolist(), f.graph.tolist(), f.beta.tolist(), base_rule("sequential", m)
    )
    assert got == 0  # the arrival at the horizon (1000 s) is not counted


def test_select_tunes_the_planners_base_on_validation_seeds():
    from pacml.policies.planning import select

    m = toy_model(
        "planning.base_policy=tuned", "planning.horizon=20", "planning.num_futures=2", "workflow.validation_seeds=[7]"
    )
    chosen, report = select(m, "beta_a", [7])
    by_degree = report["blocking_rate_by_degree"]
    top3 = sorted(by_degree, key=lambda k: (by_degree[k], int(k)))[:3]
    assert sorted(report["rollout_blocking_rate_by_base"]) == sorted(f"fixed-{k}" for k in top3)
    best = min(report["rollout_blocking_rate_by_base"].values())
    assert report["rollout_blocking_rate_by_base"][chosen.rollout_base] == best
    assert by_degree[str(chosen.fixed_degree)] == min(by_degree.values())


def test_an_untuned_selection_keeps_best_fixed_and_no_planner_reads_it(tmp_path):
    """select(tune_base=False) costs no rollouts: best_fixed's degree as tuned, the base left
    None through the JSON; a planner refuses it and a tuned teacher tunes for itself."""
    from pacml.errors import UnknownNameError
    from pacml.policies.planning import select
    from pacml.runs import read_selection, write_json
    from pacml.train.imitation import make_teacher

    m = toy_model(
        "planning.base_policy=tuned", "planning.horizon=20", "planning.num_futures=2", "workflow.validation_seeds=[7]"
    )
    tuned, _ = select(m, "beta_a", [7])
    untuned, report = select(m, "beta_a", [7], tune_base=False)
    assert untuned.fixed_degree == tuned.fixed_degree and untuned.rollout_base is None
    assert "rollout_blocking_rate_by_base" not in report
    write_json(tmp_path / "s.json", {"fixed_degree": untuned.fixed_degree, "rollout_base": None})
    assert read_selection(tmp_path / "s.json") == untuned
    with pytest.raises(UnknownNameError, match="tuned base undecided"):
        make_policy("rollout", context=PolicyContext(m, "beta_a", untuned))
    cfg = load_config(
        overrides=[*TOY_CLUSTER, "planning.base_policy=tuned", "planning.horizon=20", "planning.num_futures=2",
                   "workflow.validation_seeds=[7]", "imitation.teacher_base_policy=tuned"]
    )  # fmt: skip
    assert make_teacher(cfg, m, "beta_a", untuned).base_policy == tuned.rollout_base


def test_a_tuned_teacher_of_its_own_horizon_tunes_its_base_at_that_horizon(monkeypatch):
    """A selection tuned at the evaluated planner's H and K is not the teacher's when the
    teacher plans with others: it tunes its own, at its H and K."""
    from pacml.policies import base as policy_base
    from pacml.policies.planning import select
    from pacml.train.imitation import make_teacher

    common = [
        "planning.base_policy=tuned",
        "planning.horizon=20",
        "planning.num_futures=2",
        "workflow.validation_seeds=[7]",
    ]
    m = toy_model(*common)
    tuned, _ = select(m, "beta_a", [7])
    asked = []
    chosen = policy_base.PolicyContext.chosen

    def recording(self):
        asked.append((self.model.cfg.planning.horizon, self.model.cfg.planning.num_futures))
        return chosen(self)

    monkeypatch.setattr(policy_base.PolicyContext, "chosen", recording)
    same = load_config(overrides=[*TOY_CLUSTER, *common, "imitation.teacher_base_policy=tuned"])
    assert make_teacher(same, m, "beta_a", tuned).base_policy == tuned.rollout_base and asked == []
    own = load_config(
        overrides=[*TOY_CLUSTER, *common, "imitation.teacher_base_policy=tuned", "imitation.teacher_horizon=5",
                   "imitation.teacher_futures=3"]
    )  # fmt: skip
    teacher = make_teacher(own, m, "beta_a", tuned)
    assert asked == [(5, 3)] and (teacher.cfg.horizon, teacher.cfg.num_futures) == (5, 3)


def test_base_rules_by_hand_on_eight_workers():
    """C = R = S = 2: placeable degrees 1, 2, 4, 8. By free servers 0..8, with beta 0.3 (PAC-ML's
    requested speed-up ceil(1 / 0.3) = 4)."""
    from pacml.errors import UnknownNameError

    shape = ["cluster.communication_groups=2", "cluster.racks_per_group=2", "cluster.servers_per_rack=2"]
    m = ClusterModel(toy_pool(), load_config(overrides=shape))
    assert m.placeable == (1, 2, 4, 8)
    by_free = {
        "para_max": [0, 1, 2, 2, 4, 4, 4, 4, 8],
        "para_min": [0, 1, 2, 2, 4, 4, 4, 4, 4],
        "sequential": [0, 1, 1, 1, 1, 1, 1, 1, 1],
        "fixed-4": [0, 0, 0, 0, 4, 4, 4, 4, 4],
        "fixed-3": [0] * 9,  # not a placeable degree
    }
    for name, want in by_free.items():
        rule = base_rule(name, m)
        assert [rule(0, 0.3, (1 << free) - 1) for free in range(9)] == want, name
    for bad in ("nosuch", "fixed-x", "fixed-"):
        with pytest.raises(UnknownNameError, match=f"unknown base policy '{bad}'; known: para_max"):
            base_rule(bad, m)


def test_a_planner_samples_futures_at_the_episodes_own_load():
    from pacml.policies.planning import Rollout

    m = toy_model("workload.offered_load_range=[0.25, 4.0]", "planning.horizon=5", "planning.num_futures=2")
    planner = Rollout(m, "beta_a", m.cfg.planning, "fixed-2")
    for seed in (0, 1):
        ep = Episode(m, "beta_a", np.random.default_rng(seed))
        ep.step(2)
        d = ep.decision
        assert d.interarrival_s != m.interarrival_s  # this episode's load is not the model's
        fut = planner._futures(d, np.random.default_rng(0))
        expected = ((d.job_idx + np.arange(1, 6)) * d.interarrival_s).tolist()
        assert fut.times_s.tolist() == [expected, expected]
        assert np.allclose(expected, d.future(5).time_s)  # the true future's times, as a fixed clock gives them
