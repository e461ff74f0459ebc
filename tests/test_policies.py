import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from pacml.policies.base import make_policy
from pacml.sim.engine import Decision

from conftest import two_layer_graph


def decision(mask, beta=0.3, jct=lambda a: 100.0 / a):
    mask = np.asarray(mask, dtype=bool)
    return Decision(
        job_idx=0,
        time_s=0.0,
        graph_index=0,
        graph=two_layer_graph(),
        beta=beta,
        sequential_jct_s=100.0,
        max_acceptable_jct_s=beta * 100.0,
        mask=mask,
        free_workers=int(mask.sum()),
        num_workers=32,
        running_jobs=0,
        lookahead=jct,
        pool=(),
        pool_sequential_jct_s=np.zeros(0),
        snapshot=None,
        future=None,
        num_training_steps=50,
        interarrival_s=1000.0,
        offered_load=0.94,
        horizon_s=1e6,
    )


PAPER_MASK = [a in (0, 1, 2, 4, 6, 8, 16) for a in range(17)]


def test_para_max_and_sequential():
    rng = np.random.default_rng(0)
    assert make_policy("para_max").act(decision(PAPER_MASK), rng) == 16
    assert make_policy("sequential").act(decision(PAPER_MASK), rng) == 1
    assert make_policy("para_max").act(decision([True] + [False] * 16), rng) == 0


def test_para_min_uses_ceil_of_inverse_beta():
    rng = np.random.default_rng(0)
    # beta 0.3 -> ceil(3.33) = 4
    assert make_policy("para_min").act(decision(PAPER_MASK, beta=0.3), rng) == 4
    # beta 0.14 -> ceil(7.1) = 8; beta 0.05 -> 20: none valid >= 20 -> the largest, 16
    assert make_policy("para_min").act(decision(PAPER_MASK, beta=0.14), rng) == 8
    assert make_policy("para_min").act(decision(PAPER_MASK, beta=0.05), rng) == 16


def test_oracle_takes_the_smallest_degree_meeting_the_requirement():
    rng = np.random.default_rng(0)
    # exact JCT 100/a + 1: beta 0.3 needs 100/a + 1 <= 30 -> a >= 3.45 -> 4
    assert make_policy("oracle").act(decision(PAPER_MASK, 0.3, lambda a: 100 / a + 1), rng) == 4
    # beta 0.25: 100/4 + 1 = 26 > 25, so 6 (para_min would pick 4 and be blocked)
    assert make_policy("oracle").act(decision(PAPER_MASK, 0.25, lambda a: 100 / a + 1), rng) == 6
    assert make_policy("oracle").act(decision(PAPER_MASK, 0.01, lambda a: 100 / a + 1), rng) == 0
    assert make_policy("oracle").act(decision(PAPER_MASK, 0.3, lambda a: None), rng) == 0


def test_fixed_k_blocks_when_k_is_invalid():
    rng = np.random.default_rng(0)
    assert make_policy("fixed-4").act(decision(PAPER_MASK), rng) == 4
    assert make_policy("fixed-10").act(decision(PAPER_MASK), rng) == 0


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.booleans(), min_size=16, max_size=16),
    st.floats(0.1, 1.0),
    st.sampled_from(["para_max", "para_min", "random", "sequential", "oracle", "fixed-2", "fixed-6"]),
    st.integers(0, 1000),
)
def test_no_policy_ever_picks_a_masked_degree(bits, beta, name, seed):
    mask = [True] + bits
    a = make_policy(name).act(decision(mask, beta), np.random.default_rng(seed))
    assert 0 <= a <= 16 and mask[a]
    if name == "para_min" and a:
        assert a >= min(math.ceil(1 / beta), max(i for i, b in enumerate(mask) if b)) or not any(bits)


class _NoDraws:
    """A policy generator that fails the moment a policy draws from it."""

    def __getattr__(self, name):
        raise AssertionError(f"the policy drew from its generator ({name})")


def test_seedless_policies_never_draw_and_random_does():
    """The experiments run a seedless policy once for all its replicates (is_seedless): it
    must play whole episodes without touching its generator, and `random` must not be one."""
    from pacml.config import load_config
    from pacml.policies.base import SEEDLESS, PolicyContext, Selection, is_seedless
    from pacml.sim.engine import ClusterModel, Episode

    from conftest import TOY_CLUSTER, toy_pool

    cfg = load_config(overrides=TOY_CLUSTER)
    model = ClusterModel(toy_pool(), cfg)
    context = PolicyContext(model, "beta_a", Selection(fixed_degree=2, rollout_base="fixed-2"))
    assert is_seedless("fixed-4") and not is_seedless("random") and not is_seedless("rollout")
    for name in [*sorted(SEEDLESS), "fixed-4"]:
        policy = make_policy(name, max_degree=cfg.cluster.max_degree, context=context)
        episode = Episode(model, "beta_a", np.random.default_rng(3))
        degrees = []
        while not episode.done:
            degrees.append(policy.act(episode.decision, _NoDraws()))
            episode.step(degrees[-1])
        assert len(degrees) > 20 and any(degrees), name
    episode = Episode(model, "beta_a", np.random.default_rng(3))
    random = make_policy("random")
    try:
        while not episode.done:
            episode.step(random.act(episode.decision, _NoDraws()))
    except AssertionError as exc:
        assert "drew from its generator" in str(exc)
    else:
        raise AssertionError("random never drew from its generator")
