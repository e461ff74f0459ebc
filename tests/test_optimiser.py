"""FlatAdam takes torch's Adam steps to the bit, and its checkpoints are torch's."""

from __future__ import annotations

import copy

import pytest
import torch

from pacml.agent.network import ActorCritic, MaskedCategorical, batch_graphs
from pacml.config import load_config
from pacml.env.features import FeatureSpace
from pacml.sim.engine import ClusterModel
from pacml.train.optimiser import FlatAdam


@pytest.fixture(scope="module")
def agent(model_graphs):
    cfg = load_config()
    model = ClusterModel(model_graphs, cfg)
    features = FeatureSpace(model.graphs, model.sequential_jct_s, 32, 17)
    torch.manual_seed(0)
    net = ActorCritic(cfg.agent, features.global_dim, features.num_actions)
    gen = torch.Generator().manual_seed(1)
    n = 250  # PPO's minibatch: at 64 samples the packed layout happened to round the same
    mask = torch.rand(n, 17, generator=gen) < 0.7
    mask[:, 0] = True
    batch = (
        torch.randint(0, len(model_graphs), (n,), generator=gen),
        torch.randn(n, features.global_dim, generator=gen),
        mask,
        torch.zeros(n, dtype=torch.long),  # degree 0 is valid everywhere: the action taken
        torch.randn(n, generator=gen),  # returns
    )
    return net, batch_graphs(features.graph_features), batch


def _step(net, graphs, batch, opt, clip):
    gi, glob, mask, action, ret = batch
    logits, value = net(graphs, gi, glob, mask)
    dist = MaskedCategorical(logits, mask)
    loss = -dist.log_prob(action).mean() + ((value - ret) ** 2).mean() - 0.01 * dist.entropy().mean()
    opt.zero_grad()
    loss.backward()
    if clip:
        torch.nn.utils.clip_grad_norm_(net.parameters(), clip)
    opt.step()


def _train(agent, optimiser, steps, clip=1.5, state=None):
    net, graphs, batch = agent
    net = copy.deepcopy(net)
    opt = optimiser(net.parameters(), lr=3e-3, eps=1e-5, foreach=True)
    if state is not None:
        net.load_state_dict(state[0])
        opt.load_state_dict(state[1])
    for _ in range(steps):
        _step(net, graphs, batch, opt, clip)
    return net.state_dict(), opt.state_dict()


def _same(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


@pytest.mark.parametrize("clip", [0.0, 1.5])
def test_flat_adam_takes_torch_adams_steps_to_the_bit(agent, clip):
    """The whole actor-critic (actor and critic towers, PPO's three losses), with and without
    PPO's gradient clipping: every weight and every Adam buffer equal after 12 steps. With its
    slices packed end to end (no 64-byte alignment) the critic's weights differ."""
    torch_weights, torch_state = _train(agent, torch.optim.Adam, 12, clip)
    flat_weights, flat_state = _train(agent, FlatAdam, 12, clip)
    assert _same(torch_weights, flat_weights)
    assert flat_state["param_groups"] == torch_state["param_groups"]
    assert flat_state["state"].keys() == torch_state["state"].keys()
    for i, buffers in torch_state["state"].items():
        assert _same(buffers, flat_state["state"][i])


@pytest.mark.parametrize(("first", "then"), [(FlatAdam, torch.optim.Adam), (torch.optim.Adam, FlatAdam)])
def test_a_checkpoint_of_either_optimiser_resumes_under_the_other(agent, first, then):
    straight = _train(agent, torch.optim.Adam, 8)
    half = _train(agent, first, 4)
    resumed = _train(agent, then, 4, state=half)
    assert _same(straight[0], resumed[0])


def test_flat_adam_refuses_a_foreign_state_and_a_moved_parameter(agent):
    net = copy.deepcopy(agent[0])
    opt = FlatAdam(net.parameters(), lr=1e-3)
    few = torch.optim.Adam(list(net.parameters())[:3], lr=1e-3).state_dict()
    with pytest.raises(ValueError, match="optimiser state of 3 parameters"):
        opt.load_state_dict(few)
    FlatAdam(net.actor.parameters(), lr=1e-3)  # moves the actor's weights into its own buffer
    with pytest.raises(RuntimeError, match="no longer lies in this optimiser's buffer"):
        opt.step()
