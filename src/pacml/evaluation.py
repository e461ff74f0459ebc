"""Run a policy over one seeded episode: its job records and metrics."""

from __future__ import annotations

import numpy as np

from pacml.policies.base import Policy
from pacml.sim.engine import ClusterModel, Episode
from pacml.sim.metrics import episode_metrics
from pacml.sim.records import JobRecord


def episode_rngs(seed: int, policy_seed=None) -> tuple[np.random.Generator, np.random.Generator]:
    """Independent generators for the environment and the policy of episode ``seed`` (the
    policy's from ``policy_seed`` instead, if given: replicates of a stochastic policy)."""
    env_ss, policy_ss = np.random.SeedSequence(seed).spawn(2)
    if policy_seed is not None:
        policy_ss = np.random.SeedSequence(policy_seed)
    return np.random.default_rng(env_ss), np.random.default_rng(policy_ss)


def run_episode(
    model: ClusterModel, policy: Policy, dist: str, seed: int, policy_seed=None
) -> tuple[list[JobRecord], dict[str, float]]:
    """One full episode of ``policy`` on distribution ``dist``; same seed, same numbers."""
    env_rng, policy_rng = episode_rngs(seed, policy_seed)
    episode = Episode(model, dist, env_rng)
    while not episode.done:
        episode.step(policy.act(episode.decision, policy_rng))
    w = model.cfg.workload
    metrics = episode_metrics(episode.records, model.topology.num_workers, w.horizon_s, w.num_training_steps)
    return episode.records, metrics
