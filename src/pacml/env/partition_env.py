"""The partitioning decision as a `gymnasium.Env` over the episode engine.

One step is one arriving job; the action is its partition degree (``Discrete(max_degree + 1)``;
0 = do not place). The observation is a ``Dict``: ``graph_index`` (which pool graph the job
is; its static node and edge features are ``features.graph_features[graph_index]``),
``global`` (job, cluster and mask features, `FeatureSpace`) and ``mask`` (bool, the valid
degrees). ``action_masks()`` returns the mask too (the convention of sb3-contrib's
MaskablePPO). The reward is +1 if the job is accepted, -1 if it is blocked at its decision.
``info["record"]`` is the job's `JobRecord`; ``env.decision`` the engine's `Decision` (for
planners and teachers). The episode terminates after the last arrival before the horizon;
its final observation is all zeros with only degree 0 valid, and ``info["episode_metrics"]``
holds its metrics.

``reset(seed=s)`` draws the episode from ``SeedSequence(s)`` (ddls' envs could not be
seeded); ``reset()`` without a seed draws the next episode's seed from the env's
``np_random``, so a seeded env replays the same sequence of episodes.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from pacml.env.features import FeatureSpace
from pacml.sim.engine import ClusterModel, Episode
from pacml.sim.metrics import episode_metrics


class PartitionEnv(gym.Env):
    metadata = {"render_modes": []}

    def __init__(self, model: ClusterModel, dist: str, features: FeatureSpace | None = None):
        self.model = model
        self.dist = dist
        self.features = features or FeatureSpace.for_agent(
            model.cfg, model.graphs, model.sequential_jct_s, model.topology.num_workers, model.max_degree + 1
        )
        self.num_actions = model.max_degree + 1
        self.action_space = spaces.Discrete(self.num_actions)
        self.observation_space = spaces.Dict(
            {
                "graph_index": spaces.Discrete(len(model.graphs)),
                "global": spaces.Box(-np.inf, np.inf, (self.features.global_dim,), dtype=np.float32),
                "mask": spaces.Box(0, 1, (self.num_actions,), dtype=np.bool_),
            }
        )
        self.episode: Episode | None = None

    def _obs(self) -> dict:
        d = self.episode.decision
        return {
            "graph_index": d.graph_index,
            "global": self.features.decision_vector(d),
            "mask": self.features.action_mask(d),
        }

    def _final_obs(self) -> dict:
        mask = np.zeros(self.num_actions, dtype=np.bool_)
        mask[0] = True
        return {"graph_index": 0, "global": np.zeros(self.features.global_dim, dtype=np.float32), "mask": mask}

    @property
    def decision(self):
        """The engine's `Decision` for the job now arriving (None once the episode is over): what
        a planner or teacher reads, beside the observation."""
        return None if self.episode is None else self.episode.decision

    def action_masks(self) -> np.ndarray:
        """The degrees valid now (bool, one per action)."""
        if self.episode is None or self.episode.done:
            return self._final_obs()["mask"]
        return self.features.action_mask(self.episode.decision)

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        super().reset(seed=seed)
        if seed is None:
            seed = int(self.np_random.integers(2**63))
        rng = np.random.default_rng(np.random.SeedSequence(seed).spawn(1)[0])
        self.episode = Episode(self.model, self.dist, rng)
        if self.episode.done:
            raise ValueError(f"an episode of {self.dist} with no arrival before the horizon (seed {seed})")
        return self._obs(), {}

    def step(self, action: int) -> tuple[dict, float, bool, bool, dict]:
        if self.episode is None or self.episode.done:
            raise RuntimeError("call reset() first: the episode is over or never started")
        record = self.episode.step(int(action))
        reward = 1.0 if record.accepted else -1.0
        info: dict = {"record": record}
        if self.episode.done:
            w = self.model.cfg.workload
            info["episode_metrics"] = episode_metrics(
                self.episode.records, self.model.topology.num_workers, w.horizon_s, w.num_training_steps
            )
            return self._final_obs(), reward, True, False, info
        return self._obs(), reward, False, False, info
