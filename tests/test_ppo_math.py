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
