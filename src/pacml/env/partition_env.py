"""A gymnasium-style environment over the episode engine (no gymnasium dependency).

``reset(seed=...) -> (obs, info)`` and ``step(a) -> (obs, reward, terminated, truncated,
info)``. One step is one arriving job; the action is its partition degree (0 = do not
place). The observation is a dict: ``graph_index`` (which pool graph the job is; its
static node and edge features are ``features.graph_features[graph_index]``), ``global``
(job, cluster and mask features) and ``mask`` (bool, valid degrees). The reward is +1 if
the job is accepted, -1 if it is blocked at its decision. Each reset is seeded (ddls'
envs could not be).
"""

from __future__ import annotations

import numpy as np

from pacml.env.features import FeatureSpace
from pacml.sim.engine import ClusterModel, Episode
from pacml.sim.metrics import episode_metrics


class PartitionEnv:
    def __init__(self, model: ClusterModel, dist: str, features: FeatureSpace | None = None):
        self.model = model
        self.dist = dist
        self.features = features or FeatureSpace.for_agent(
            model.cfg, model.graphs, model.sequential_jct_s, model.topology.num_workers, model.max_degree + 1
        )
        self.num_actions = model.max_degree + 1
        self.episode: Episode | None = None

    def _obs(self) -> dict:
        d = self.episode.decision
        return {"graph_index": d.graph_index, "global": self.features.decision_vector(d), "mask": d.mask.copy()}

    def reset(self, seed: int | None = None) -> tuple[dict, dict]:
        rng = np.random.default_rng(np.random.SeedSequence(seed).spawn(1)[0])
        self.episode = Episode(self.model, self.dist, rng)
        assert not self.episode.done, "an episode with no decision"
        return self._obs(), {"decision": self.episode.decision}

    def step(self, action: int) -> tuple[dict | None, float, bool, bool, dict]:
        assert self.episode is not None and not self.episode.done, "call reset() first"
        record = self.episode.step(int(action))
        reward = 1.0 if record.accepted else -1.0
        info: dict = {"record": record}
        if self.episode.done:
            w = self.model.cfg.workload
            info["episode_metrics"] = episode_metrics(
                self.episode.records, self.model.topology.num_workers, w.horizon_s, w.num_training_steps
            )
            return None, reward, True, False, info
        info["decision"] = self.episode.decision
        return self._obs(), reward, False, False, info
