"""PPO's pieces checked by hand: GAE, the clipped objective, masked entropy."""

from __future__ import annotations

import pytest
import torch

from pacml.agent.network import MaskedCategorical
from pacml.train.ppo import clipped_policy_loss, compute_gae


def test_gae_on_three_hand_written_steps_with_an_episode_end():
    # step 1 is an episode's last (done[2] = 1: step 2 starts a new one); gamma 0.9, lambda 0.8
    reward = torch.tensor([[1.0], [-1.0], [1.0]])
    value = torch.tensor([[0.5], [0.2], [-0.1]])
    done = torch.tensor([[0.0], [0.0], [1.0]])
    adv, ret = compute_gae(reward, value, done, torch.tensor([0.3]), torch.tensor([0.0]), 0.9, 0.8)
    # t=2: 1 + 0.9 x 0.3 + 0.1 = 1.37; t=1: -1 - 0.2 = -1.2 (no bootstrap across the end);
    # t=0: (1 + 0.9 x 0.2 - 0.5) + 0.9 x 0.8 x (-1.2) = 0.68 - 0.864 = -0.184
    assert adv.squeeze(1).tolist() == pytest.approx([-0.184, -1.2, 1.37])
    assert ret.squeeze(1).tolist() == pytest.approx([0.316, -1.0, 1.27])


def test_masked_entropy_equals_the_entropy_over_the_valid_logits():
    logits = torch.tensor([[0.3, -1e8, 1.2, -1e8, -0.4]])
    mask = torch.tensor([[True, False, True, False, True]])
    p = torch.softmax(torch.tensor([0.3, 1.2, -0.4]), dim=0)
    assert MaskedCategorical(logits, mask).entropy().item() == pytest.approx(float(-(p * p.log()).sum()))


def test_a_clipped_ratio_gives_no_policy_gradient():
    # advantage > 0 and ratio above 1 + clip: the clipped term is the max of the two losses
    # and does not depend on the parameters, so the gradient is exactly zero
    logit = torch.tensor([2.0, 0.0], requires_grad=True)
    old_logprob = torch.log_softmax(torch.tensor([0.0, 0.0]), 0)[0]
    ratio = (torch.log_softmax(logit, 0)[0] - old_logprob).exp()
    assert ratio.item() > 1.2
    clipped_policy_loss(torch.tensor([1.0]), ratio[None], 0.2).backward()
    assert logit.grad.abs().max().item() == 0.0
    # inside the clip range the gradient is the plain surrogate's
    logit.grad = None
    ratio = (torch.log_softmax(logit, 0)[0] - old_logprob).exp()
    clipped_policy_loss(torch.tensor([1.0]), ratio[None], 10.0).backward()
    assert logit.grad[0].item() < 0.0


class TwoDegreeNet(torch.nn.Module):
    """A stand-in for the actor-critic: two logits and a value, shared by every decision."""

    def __init__(self):
        super().__init__()
        self.logit = torch.nn.Parameter(torch.zeros(2))
        self.v = torch.nn.Parameter(torch.zeros(()))

    def forward(self, graphs, graph_index, glob, mask):
        n = graph_index.shape[0]
        return self.logit.expand(n, 2), self.v.expand(n)


def two_decisions():
    """Degree 0 then degree 1, each of probability 1/2 now; the rollout gave them 1/4 and 1
    (ratios 2 and 1/2), advantages +1 and -1, returns +1 and -1, old values 1 and 1/2."""
    from pacml.train.rollouts import Batch

    return Batch(
        graph_index=torch.zeros(2, dtype=torch.long),
        glob=torch.zeros(2, 1),
        mask=torch.ones(2, 2, dtype=torch.bool),
        action=torch.tensor([0, 1]),
        logprob=torch.log(torch.tensor([0.25, 1.0])),
        advantage=torch.tensor([1.0, -1.0]),
        ret=torch.tensor([1.0, -1.0]),
        value=torch.tensor([1.0, 0.5]),
    )


def ppo_settings(**kw):
    import dataclasses

    from pacml.config import load_config

    fields = dict(update_epochs=1, num_minibatches=1, clip_coef=0.2, vf_clip_coef=0.3, vf_coef=0.5)
    return dataclasses.replace(load_config().ppo, **{**fields, **kw})


def test_one_ppo_update_on_two_decisions_by_hand():
    """With advantages normalised to +-a (a = 1/sqrt(2)) and clip 0.2 both ratios are clipped:
    the policy loss is mean(-1.2 a, 0.8 a) = -0.2 a and gives no gradient. The values' clip
    (0.3 from the old values: 0.7 and 0.2) keeps decision 0's plain error 1 and decision 1's
    clipped 1.2^2: value loss 0.5 x mean(1, 1.44). Explained variance 1 - var(0, -1.5) / var(1, -1).
    Only the value moves: d(0.5 x value loss)/dv = 0.5 x 0.5 x 0.5 x 2 (v - 1) = -0.25, clipped to
    the gradient norm 0.1, one SGD step of 1."""
    import math

    from pacml.train.ppo import ppo_update

    net = TwoDegreeNet()
    opt = torch.optim.SGD(net.parameters(), lr=1.0)
    stats = ppo_update(
        net, opt, None, two_decisions(), ppo_settings(max_grad_norm=0.1), torch.Generator().manual_seed(0)
    )
    a = 1 / math.sqrt(2)
    assert stats["losses/policy_loss"] == pytest.approx(-0.2 * a, rel=1e-6)
    assert stats["losses/value_loss"] == pytest.approx(0.5 * (1 + 1.44) / 2, rel=1e-6)
    assert stats["losses/entropy"] == pytest.approx(math.log(2), rel=1e-6)
    assert stats["losses/approx_kl"] == pytest.approx(0.25, rel=1e-6)  # mean((r - 1) - log r)
    assert stats["losses/clipfrac"] == 1.0
    assert stats["losses/explained_variance"] == pytest.approx(1 - 0.5625, rel=1e-6)
    assert net.v.item() == pytest.approx(0.1, rel=1e-5) and net.logit.abs().max().item() < 1e-6


def test_ppo_update_options_by_hand():
    from pacml.train.ppo import ppo_update

    def run(**kw):
        net = TwoDegreeNet()
        opt = torch.optim.SGD(net.parameters(), lr=1.0)
        return ppo_update(net, opt, None, two_decisions(), ppo_settings(**kw), torch.Generator().manual_seed(0)), net

    # raw advantages: mean(-1.2, 0.8)
    stats, _ = run(norm_adv=False)
    assert stats["losses/policy_loss"] == pytest.approx(-0.2, rel=1e-6)
    # no value clip: 0.5 x mean(1, 1), and the two errors' gradients cancel: mean(2(v - 1), 2(v + 1)) = 0
    stats, net = run(clip_vloss=False)
    assert stats["losses/value_loss"] == pytest.approx(0.5, rel=1e-6) and abs(net.v.item()) < 1e-6
    # a gradient norm above 0.25 leaves the gradient whole
    _, net = run(max_grad_norm=10.0)
    assert net.v.item() == pytest.approx(0.25, rel=1e-5)
    # a second epoch moves the value again, unless the first epoch's KL (0.25) passed target_kl
    _, twice = run(update_epochs=2, max_grad_norm=10.0)
    _, stopped = run(update_epochs=2, max_grad_norm=10.0, target_kl=0.1)
    # (at v = 1/4 decision 0's error gives 2(v - 1) = -1.5, decision 1 is inside its clip: 2(v + 1) = 2.5)
    assert stopped.v.item() == pytest.approx(0.25, rel=1e-5)
    assert twice.v.item() == pytest.approx(0.25 - 0.25 * (-1.5 + 2.5) / 2, rel=1e-5)
