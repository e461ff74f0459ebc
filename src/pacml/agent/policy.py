"""A trained PAC-ML network as a `Policy` (greedy: the highest-probability valid degree)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from pacml.agent.network import ActorCritic, MaskedCategorical, batch_graphs
from pacml.env.features import FeatureSpace
from pacml.train.checkpoint import checkpoint_config, load_checkpoint


class AgentPolicy:
    """Greedy PAC-ML policy. Graph embeddings are computed once per job pool and reused."""

    name = "pacml"

    def __init__(self, checkpoint: str | Path):
        self.checkpoint = Path(checkpoint)
        self.cfg = checkpoint_config(self.checkpoint)
        self._net: ActorCritic | None = None
        self._pool: tuple | None = None

    def _bind(self, decision) -> None:
        """Build features and embeddings for the pool this decision's job comes from."""
        pool = decision.pool
        if self._pool is not None and self._pool[0] is pool:
            return
        features = FeatureSpace(pool, decision.pool_sequential_jct_s, decision.num_workers, len(decision.mask),
                                self.cfg.agent.lookahead_features)
        trained_actions = self.cfg.cluster.max_degree + 1
        if features.num_actions != min(trained_actions, self.cfg.cluster.num_workers + 1):
            from pacml.errors import ConfigError

            raise ConfigError("cluster.max_degree", len(decision.mask) - 1,
                              f"differs from the checkpoint's ({self.cfg.cluster.max_degree})", str(self.checkpoint))
        net = ActorCritic(self.cfg.agent, features.global_dim, features.num_actions)
        load_checkpoint(self.checkpoint, net)
        net.eval()
        with torch.no_grad():
            emb = net.embeddings(batch_graphs(features.graph_features))
        self._net = net
        self._pool = (pool, features, emb)

    def act(self, decision, rng: np.random.Generator) -> int:
        self._bind(decision)
        _, features, emb = self._pool
        mask = torch.from_numpy(decision.mask)[None]
        glob = torch.from_numpy(features.decision_vector(decision))[None]
        with torch.no_grad():
            logits, _ = self._net.heads(emb, torch.tensor([decision.graph_index]), glob, mask)
        return int(MaskedCategorical(logits, mask).mode()[0])


def load_agent_policy(checkpoint: str | Path) -> AgentPolicy:
    return AgentPolicy(checkpoint)
