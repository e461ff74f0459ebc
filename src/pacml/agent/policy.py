"""A PAC-ML network as a `Policy`: greedy, the highest-probability valid degree.

`GreedyAgent` is the one greedy path: evaluation of a checkpoint (`AgentPolicy`) and the
validation episodes of training both run it through `pacml.evaluation.run_episode`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from pacml.agent.network import ActorCritic, MaskedCategorical, batch_graphs
from pacml.config import Config
from pacml.env.features import FeatureSpace
from pacml.evaluation import run_episode
from pacml.sim.engine import ClusterModel


class GreedyAgent:
    """A network of config ``cfg`` acting greedily; its features and graph embeddings are
    built once per job pool (the pool a decision comes from)."""

    name = "pacml"

    def __init__(self, net: ActorCritic, cfg: Config):
        self.net, self.cfg = net, cfg
        self._pool: tuple | None = None

    def _bind(self, decision) -> tuple[FeatureSpace, tuple]:
        pool = decision.pool
        if self._pool is None or self._pool[0] is not pool:
            features = FeatureSpace.for_agent(
                self.cfg, pool, decision.pool_sequential_jct_s, decision.num_workers, len(decision.mask)
            )
            with torch.no_grad():
                emb = self.net.embeddings(batch_graphs(features.graph_features))
            self._pool = (pool, features, emb)
        return self._pool[1], self._pool[2]

    def act(self, decision, rng: np.random.Generator, glob_features: np.ndarray | None = None) -> int:
        """The greedy degree; ``glob_features`` is the decision's global vector if the caller
        has it already (an environment's observation), else it is built here."""
        features, emb = self._bind(decision)
        mask = torch.from_numpy(features.action_mask(decision))[None]
        vec = features.decision_vector(decision) if glob_features is None else glob_features
        glob = torch.from_numpy(vec)[None]
        with torch.no_grad():
            logits = self.net.logits(emb[0], torch.tensor([decision.graph_index]), glob, mask)
        return int(MaskedCategorical(logits, mask).mode()[0])


class AgentPolicy(GreedyAgent):
    """The greedy policy of a checkpoint, in the experiment it is applied to."""

    def __init__(self, checkpoint: str | Path):
        from pacml.train.checkpoint import checkpoint_config

        self.checkpoint = Path(checkpoint)
        super().__init__(None, checkpoint_config(self.checkpoint))

    def _bind(self, decision) -> tuple[FeatureSpace, tuple]:
        if self.net is None:
            self.net = self._load(len(decision.mask))
        return super()._bind(decision)

    def _load(self, num_actions: int) -> ActorCritic:
        from pacml.errors import ConfigError
        from pacml.train.checkpoint import load_checkpoint

        trained_actions = min(self.cfg.cluster.max_degree, self.cfg.cluster.num_workers) + 1
        if num_actions != trained_actions:
            raise ConfigError(
                "cluster.max_degree",
                num_actions - 1,
                f"differs from the checkpoint's ({self.cfg.cluster.max_degree})",
                str(self.checkpoint),
            )
        net = ActorCritic(self.cfg.agent, FeatureSpace.agent_global_dim(self.cfg, num_actions), num_actions)
        load_checkpoint(self.checkpoint, net)
        net.eval()
        return net


def greedy_episode(net: ActorCritic, cfg: Config, model: ClusterModel, dist: str, seed: int) -> dict:
    """One deterministic (argmax) episode on ``seed``: the metrics of `GreedyAgent`, the
    policy that evaluates a checkpoint."""
    return run_episode(model, GreedyAgent(net, cfg), dist, seed)[1]


def validate_on(net: ActorCritic, cfg: Config, model: ClusterModel, dist: str, seeds) -> dict:
    """Mean greedy-episode metrics over ``seeds`` (the imitation phase selects on several)."""
    rows = [greedy_episode(net, cfg, model, dist, int(s)) for s in seeds]
    return {k: float(np.mean([r[k] for r in rows])) for k in rows[0]}
