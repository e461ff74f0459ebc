"""The PAC-ML graph network in DGL and torch (paper.md 5, ddls.md 7.1).

One mean-pool message-passing round, for node v with in-neighbours u::

    m_uv   = [ node_mod(h_u) || edge_mod(e_uv) ]          node_mod, edge_mod: LN -> Linear -> act
    s_v    = [ node_mod(h_v) || 0 ]                       v's message to itself
    h'_v   = mean( reduce_mod(s_v), reduce_mod(m_uv) for all u )   reduce_mod: LN -> Linear -> act

Messages flow along the DAG. Unlike ddls (B23), a source op keeps its self message
instead of a zero embedding. A graph's embedding is the mean of its node embeddings; the
global vector goes through LN -> Linear (graph_dim); their concatenation feeds an MLP
that gives one logit per degree, and, separately, the value.

The sums over in-edges and over a graph's nodes are torch's ``index_add_`` in edge and node
order: DGL's copy_e_sum and segment_reduce to the last bit (a test compares them), without
their dispatch. Node and edge features are static per graph, so a batch needs message
passing over its distinct graphs only (five in the paper's setting), computed once and
gathered: `ActorCritic.forward` does exactly that, and equals the per-sample computation.
"""

from __future__ import annotations

import math
import os

os.environ.setdefault("DGLBACKEND", "pytorch")

import dgl  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402
from torch import nn  # noqa: E402

from pacml.config import AgentConfig  # noqa: E402
from pacml.env.features import EDGE_FEATURES, NODE_FEATURES, GraphFeatures  # noqa: E402

_ACTIVATIONS = {"relu": nn.ReLU, "tanh": nn.Tanh, "elu": nn.ELU, "leaky_relu": nn.LeakyReLU}

MASKED_LOGIT = -1e8
"""Logit of a masked degree: large, finite (-inf gives NaN entropies; sb3-contrib's choice)."""


def make_dgl_graph(f: GraphFeatures) -> dgl.DGLGraph:
    g = dgl.graph((torch.from_numpy(f.src), torch.from_numpy(f.dst)), num_nodes=len(f.node))
    g.ndata["x"] = torch.from_numpy(f.node)
    g.edata["e"] = torch.from_numpy(f.edge)
    g.ndata["deg"] = g.in_degrees().float().unsqueeze(1)
    g.ndata["graph"] = torch.zeros(len(f.node), dtype=torch.long)  # each node's graph in a batch
    return g


def batch_graphs(features: list[GraphFeatures] | tuple[GraphFeatures, ...]) -> dgl.DGLGraph:
    g = dgl.batch([make_dgl_graph(f) for f in features])
    g.ndata["graph"] = torch.repeat_interleave(torch.arange(g.batch_size), g.batch_num_nodes())
    return g


class MeanPoolLayer(nn.Module):
    """One message-passing round (see the module doc)."""

    def __init__(self, in_dim: int, msg_dim: int, out_dim: int, act: type[nn.Module], edge_layernorm: bool):
        super().__init__()
        half = msg_dim // 2
        self.half = half
        self.node_mod = nn.Sequential(nn.LayerNorm(in_dim), nn.Linear(in_dim, half), act())
        edge_in = [nn.LayerNorm(EDGE_FEATURES)] if edge_layernorm else []
        self.edge_mod = nn.Sequential(*edge_in, nn.Linear(EDGE_FEATURES, half), act())
        self.reduce_mod = nn.Sequential(nn.LayerNorm(msg_dim), nn.Linear(msg_dim, out_dim), act())

    def forward(self, g: dgl.DGLGraph, h: torch.Tensor, src: torch.Tensor, dst: torch.Tensor) -> torch.Tensor:
        """``src``, ``dst``: each edge's ends (``g.edges()``, passed in: asked once per pass)."""
        hn = self.node_mod(h)
        msg = torch.cat([hn[src], self.edge_mod(g.edata["e"])], dim=1)
        reduced = self.reduce_mod(msg)
        # the sum of each node's in-messages, in edge order: dgl.ops.copy_e_sum's numbers to the
        # last bit, without its dispatch (with segment_reduce's, a sixth of an imitation step)
        incoming = reduced.new_zeros(len(h), reduced.shape[1]).index_add_(0, dst, reduced)
        own = self.reduce_mod(torch.cat([hn, torch.zeros_like(hn)], dim=1))
        return (own + incoming) / (1.0 + g.ndata["deg"])


class GraphEncoder(nn.Module):
    """num_rounds mean-pool rounds (5 -> hidden -> ... -> node_dim), then a mean readout."""

    def __init__(self, cfg: AgentConfig):
        super().__init__()
        act = _ACTIVATIONS[cfg.activation]
        dims = [NODE_FEATURES] + [cfg.hidden_dim] * (cfg.num_rounds - 1) + [cfg.node_dim]
        self.layers = nn.ModuleList(
            MeanPoolLayer(dims[i], cfg.message_dim, dims[i + 1], act, cfg.edge_layernorm) for i in range(cfg.num_rounds)
        )

    def forward(self, g: dgl.DGLGraph) -> torch.Tensor:
        h = g.ndata["x"]
        src, dst = g.edges()
        for layer in self.layers:
            h = layer(g, h, src, dst)
        sizes = g.batch_num_nodes()
        total = h.new_zeros(len(sizes), h.shape[1]).index_add_(0, g.ndata["graph"], h)  # segment_reduce's sums
        return total / sizes.unsqueeze(1).float()  # (num_graphs, node_dim)


def _mlp(in_dim: int, hiddens: tuple[int, ...], out_dim: int, act: type[nn.Module], out_gain: float) -> nn.Sequential:
    layers: list[nn.Module] = []
    for h in hiddens:
        lin = nn.Linear(in_dim, h)
        nn.init.orthogonal_(lin.weight, np.sqrt(2))
        nn.init.zeros_(lin.bias)
        layers += [lin, act()]
        in_dim = h
    out = nn.Linear(in_dim, out_dim)
    nn.init.orthogonal_(out.weight, out_gain)  # CleanRL: 0.01 for logits, 1 for the value
    nn.init.zeros_(out.bias)
    layers.append(out)
    return nn.Sequential(*layers)


class Tower(nn.Module):
    """Graph encoder + global module + MLP head."""

    def __init__(self, cfg: AgentConfig, global_dim: int, out_dim: int, out_gain: float):
        super().__init__()
        act = _ACTIVATIONS[cfg.activation]
        self.encoder = GraphEncoder(cfg)
        self.global_mod = nn.Sequential(nn.LayerNorm(global_dim), nn.Linear(global_dim, cfg.graph_dim))
        self.head = _mlp(cfg.node_dim + cfg.graph_dim, cfg.head_hiddens, out_dim, act, out_gain)

    def forward(self, graph_emb: torch.Tensor, glob: torch.Tensor) -> torch.Tensor:
        return self.head(torch.cat([graph_emb, self.global_mod(glob)], dim=1))


class ActorCritic(nn.Module):
    """Actor (one logit per degree 0..max_degree) and critic over a fixed pool of graphs;
    with ``agent.actor_ensemble`` N > 1, N actors whose mean probabilities it acts on once
    assembled (`assemble`; imitation gives them its best iterations' weights)."""

    def __init__(self, cfg: AgentConfig, global_dim: int, num_actions: int):
        super().__init__()
        self.cfg = cfg
        self.actor = Tower(cfg, global_dim, num_actions, 0.01)
        bias = cfg.init_degree_biases[0] if cfg.init_degree_biases else 0.0  # one start: see train/starts.py
        if bias:
            with torch.no_grad():  # start near maximum parallelisation (see AgentConfig)
                self.actor.head[-1].bias.copy_(bias * torch.arange(num_actions) / (num_actions - 1))
        self.critic = Tower(cfg, global_dim, 1, 1.0) if cfg.separate_critic else None
        if self.critic is None:
            self.value_head = _mlp(cfg.node_dim + cfg.graph_dim, cfg.head_hiddens, 1, _ACTIVATIONS[cfg.activation], 1.0)
        self.num_actions = num_actions
        # the other actors of a snapshot ensemble (agent.actor_ensemble), built last so that the
        # first actor and the critic start from a single-actor network's weights; they act once
        # `assemble` has given them their weights (the flag travels in the checkpoint)
        self.members = nn.ModuleList(Tower(cfg, global_dim, num_actions, 0.01) for _ in range(cfg.actor_ensemble - 1))
        if self.members:
            self.register_buffer("assembled", torch.tensor(False))

    @property
    def ensembled(self) -> bool:
        """Whether the agent acts on its actors' mean probabilities (an assembled ensemble)."""
        return bool(self.members) and bool(self.assembled)

    def assemble(self, actor_weights: list[dict]) -> None:
        """Give the actor and the other members these actor state dicts, in order, and act on
        their mean probabilities from now on."""
        if len(actor_weights) != 1 + len(self.members):
            raise ValueError(f"{len(actor_weights)} actor weights for {1 + len(self.members)} actors")
        for tower, weights in zip((self.actor, *self.members), actor_weights):
            tower.load_state_dict(weights)
        self.assembled.fill_(True)

    def embeddings(self, graphs: dgl.DGLGraph) -> tuple[torch.Tensor, torch.Tensor]:
        """Graph embeddings of every graph in the pool, for the actor and the critic."""
        a = self.actor.encoder(graphs)
        c = self.critic.encoder(graphs) if self.critic is not None else a
        if self.ensembled:  # (members, graphs, node_dim): every actor's own
            a = torch.stack([a, *(m.encoder(graphs) for m in self.members)])
        return a, c

    def heads(
        self, emb: tuple[torch.Tensor, torch.Tensor], graph_index: torch.Tensor, glob: torch.Tensor, mask: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Masked logits (B, A) and values (B,) from precomputed embeddings."""
        logits = self.logits(emb[0], graph_index, glob, mask)
        if self.critic is not None:
            value = self.critic(emb[1][graph_index], glob)
        else:
            value = self.value_head(torch.cat([emb[1][graph_index], self.actor.global_mod(glob)], dim=1))
        return logits, value.squeeze(1)

    def forward(
        self, graphs: dgl.DGLGraph, graph_index: torch.Tensor, glob: torch.Tensor, mask: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Message passing over the distinct graphs once, gathered by ``graph_index``."""
        return self.heads(self.embeddings(graphs), graph_index, glob, mask)

    def logits(
        self, actor_emb: torch.Tensor, graph_index: torch.Tensor, glob: torch.Tensor, mask: torch.Tensor
    ) -> torch.Tensor:
        """Masked logits (B, A) from the actor's precomputed graph embeddings (acting needs
        no critic). An assembled ensemble's (embeddings stacked per actor) are the log of its
        actors' mean probabilities."""
        if actor_emb.dim() == 3:
            towers = (self.actor, *self.members)
            logp = torch.stack(
                [
                    normalised_logits(torch.where(mask, t(e[graph_index], glob), torch.tensor(MASKED_LOGIT)))
                    for t, e in zip(towers, actor_emb)
                ]
            )
            logits = torch.logsumexp(logp, dim=0) - math.log(len(towers))
        else:
            logits = self.actor(actor_emb[graph_index], glob)
        return torch.where(mask, logits, torch.full_like(logits, MASKED_LOGIT))

    def actor_logits(
        self, graphs: dgl.DGLGraph, graph_index: torch.Tensor, glob: torch.Tensor, mask: torch.Tensor
    ) -> torch.Tensor:
        """The masked logits of `forward`, without the critic (what imitation trains): the
        first actor's alone, ensemble or not."""
        return self.logits(self.actor.encoder(graphs), graph_index, glob, mask)


def normalised_logits(logits: torch.Tensor) -> torch.Tensor:
    """Log-probabilities of masked logits (the masked ones stay hugely negative, never -inf)."""
    return logits - torch.logsumexp(logits, dim=-1, keepdim=True)


class MaskedCategorical:
    """Categorical over degrees with invalid ones masked (finite logits, entropy corrected)."""

    def __init__(self, logits: torch.Tensor, mask: torch.Tensor):
        self.mask = mask
        self.logits = normalised_logits(logits)
        self.probs = self.logits.exp()  # here, not when asked: the gradients' order of summation is the published one

    def sample(self, generator: torch.Generator | None = None) -> torch.Tensor:
        return torch.multinomial(self.probs, 1, generator=generator).squeeze(-1)

    def mode(self) -> torch.Tensor:
        return self.logits.argmax(dim=-1)

    def log_prob(self, action: torch.Tensor) -> torch.Tensor:
        return self.logits.gather(-1, action.long().unsqueeze(-1)).squeeze(-1)

    def entropy(self) -> torch.Tensor:
        plogp = torch.where(self.mask, self.probs * self.logits, torch.zeros_like(self.probs))
        return -plogp.sum(-1)
