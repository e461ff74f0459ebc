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
    """``num_envs`` synchronous `PartitionEnv`s; a finished episode resets with its next seed.

    `position` is where every environment stands (its episode's index and the degrees chosen
    in it so far): plain data a checkpoint carries. Built from a position, each environment
    replays its episode's degrees on the same seed, so the deterministic simulator stands
    exactly where the killed run stood, mid-episode or not.
    """

    def __init__(
        self,
        model: ClusterModel,
        dist: str,
        features: FeatureSpace,
        num_envs: int,
        seed: int,
        position: dict | None = None,
    ):
        self.envs = [PartitionEnv(model, dist, features) for _ in range(num_envs)]
        self.seed = seed
        self.finished: list[dict] = []
        if position is None:
            position = {"episode": [0] * num_envs, "actions": [[] for _ in range(num_envs)]}
        if len(position["episode"]) != num_envs or len(position["actions"]) != num_envs:
            raise ValueError(f"a position of {len(position['episode'])} environments for {num_envs}")
        self.episode = list(position["episode"])
        self.actions: list[list[int]] = [[] for _ in range(num_envs)]
        self.obs = [self._replay(i, position["actions"][i]) for i in range(num_envs)]

    def _reset(self, i: int) -> dict:
        ss = np.random.SeedSequence((TRAIN_SEED_NAMESPACE, self.seed), spawn_key=(i, self.episode[i]))
        self.actions[i] = []
        return self.envs[i].reset(seed=int(ss.generate_state(1)[0]))[0]

    def _replay(self, i: int, actions: list[int]) -> dict:
        obs = self._reset(i)
        for a in actions:
            obs, _, terminated, truncated, _ = self.envs[i].step(int(a))
            if terminated or truncated:
                raise ValueError(f"environment {i}: its episode ended while replaying {len(actions)} degrees")
        self.actions[i] = [int(a) for a in actions]
        return obs

    def position(self) -> dict:
        """Where every environment stands: its episode's index and the degrees chosen so far."""
        return {"episode": list(self.episode), "actions": [list(a) for a in self.actions]}

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        rewards = np.zeros(len(self.envs), dtype=np.float32)
        dones = np.zeros(len(self.envs), dtype=np.float32)
        for i, env in enumerate(self.envs):
            obs, r, terminated, truncated, info = env.step(int(actions[i]))
            self.actions[i].append(int(actions[i]))
            rewards[i] = r
            if terminated or truncated:
                dones[i] = 1.0
                self.finished.append(info["episode_metrics"])
                self.episode[i] += 1
                obs = self._reset(i)
            self.obs[i] = obs
        return rewards, dones

    def stacked(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        gi = torch.tensor([o["graph_index"] for o in self.obs], dtype=torch.long)
        glob = torch.from_numpy(np.stack([o["global"] for o in self.obs]))
        mask = torch.from_numpy(np.stack([o["mask"] for o in self.obs]))
        return gi, glob, mask
