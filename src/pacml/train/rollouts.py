"""What PPO collects into: synchronous seeded environments and the preallocated rollout storage."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import torch

from pacml.env.features import FeatureSpace
from pacml.env.partition_env import PartitionEnv
from pacml.sim.engine import ClusterModel

TRAIN_SEED_NAMESPACE = 0x7ACE
"""Training episodes draw from SeedSequence((TRAIN_SEED_NAMESPACE, seed), spawn_key=(env, k)),
a stream apart from evaluation episodes (SeedSequence(test_seed)) and validation."""


class Batch(NamedTuple):
    """A flat minibatch of decisions."""

    graph_index: torch.Tensor
    glob: torch.Tensor
    mask: torch.Tensor
    action: torch.Tensor
    logprob: torch.Tensor
    advantage: torch.Tensor
    ret: torch.Tensor
    value: torch.Tensor


@dataclass
class Storage:
    """Preallocated rollout storage, shape (num_steps, num_envs, ...)."""

    graph_index: torch.Tensor
    glob: torch.Tensor
    mask: torch.Tensor
    action: torch.Tensor
    logprob: torch.Tensor
    reward: torch.Tensor
    done: torch.Tensor
    value: torch.Tensor

    @classmethod
    def empty(cls, steps: int, envs: int, global_dim: int, num_actions: int) -> Storage:
        return cls(
            torch.zeros(steps, envs, dtype=torch.long),
            torch.zeros(steps, envs, global_dim),
            torch.zeros(steps, envs, num_actions, dtype=torch.bool),
            torch.zeros(steps, envs, dtype=torch.long),
            torch.zeros(steps, envs),
            torch.zeros(steps, envs),
            torch.zeros(steps, envs),
            torch.zeros(steps, envs),
        )


class VecEnv:
    """``num_envs`` synchronous `PartitionEnv`s; a finished episode resets with its next seed."""

    def __init__(
        self,
        model: ClusterModel,
        dist: str,
        features: FeatureSpace,
        num_envs: int,
        seed: int,
        episodes_started: list[int] | None = None,
    ):
        self.envs = [PartitionEnv(model, dist, features) for _ in range(num_envs)]
        self.seed = seed
        self.episodes_started = list(episodes_started or [0] * num_envs)
        self.obs = [self._reset(i) for i in range(num_envs)]
        self.finished: list[dict] = []

    def _reset(self, i: int) -> dict:
        k = self.episodes_started[i]
        self.episodes_started[i] += 1
        ss = np.random.SeedSequence((TRAIN_SEED_NAMESPACE, self.seed), spawn_key=(i, k))
        return self.envs[i].reset(seed=int(ss.generate_state(1)[0]))[0]

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        rewards = np.zeros(len(self.envs), dtype=np.float32)
        dones = np.zeros(len(self.envs), dtype=np.float32)
        for i, env in enumerate(self.envs):
            obs, r, terminated, truncated, info = env.step(int(actions[i]))
            rewards[i] = r
            if terminated or truncated:
                dones[i] = 1.0
                self.finished.append(info["episode_metrics"])
                obs = self._reset(i)
            self.obs[i] = obs
        return rewards, dones

    def at_episode_start(self) -> bool:
        """Every environment has just begun an episode (a checkpoint here resumes exactly)."""
        return all(not env.episode.records for env in self.envs)

    def stacked(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        gi = torch.tensor([o["graph_index"] for o in self.obs], dtype=torch.long)
        glob = torch.from_numpy(np.stack([o["global"] for o in self.obs]))
        mask = torch.from_numpy(np.stack([o["mask"] for o in self.obs]))
        return gi, glob, mask
