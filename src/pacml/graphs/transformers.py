"""Today's language models, self-contained in plain ``torch.nn`` (imports torch).

Two built-ins of the profiler (`pacml.graphs.models`), shaped after their papers so that
their sizes can be checked against the published figures:

- ``gpt2``: a GPT-2-style decoder in the 124M configuration (Radford et al. 2019; the
  released small model): 12 pre-LayerNorm blocks of width 768 with 12 heads, a 3072-wide
  GELU MLP, learned positions over a 1024-token context, a 50257-token vocabulary, and an
  output projection tied to the token embedding. 124,439,808 parameters.
- ``bert_base``: a BERT-base-style encoder (Devlin et al. 2019: "110M"): 12 post-LayerNorm
  layers of width 768 with 12 heads and a 3072-wide GELU feed-forward, word, position (512)
  and segment (2) embeddings over a 30522-token vocabulary, and the tanh pooler.
  109,482,240 parameters.

Attention is ``torch.nn.MultiheadAttention`` (its packed in-projection holds exactly the
query, key and value weights of both papers), so ``torch.fx`` keeps each attention as one
layer, as PipeDream's profiles keep a module. Dropout layers are kept: they are layers of a
training step. Nothing is downloaded; the modules are built with random weights and the
profiler moves them to the ``meta`` device.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TransformerShape:
    """The hyper-parameters the papers state."""

    vocab_size: int
    context_tokens: int
    width: int
    layers: int
    heads: int
    mlp_width: int


GPT2_SMALL = TransformerShape(vocab_size=50257, context_tokens=1024, width=768, layers=12, heads=12, mlp_width=3072)
BERT_BASE = TransformerShape(vocab_size=30522, context_tokens=512, width=768, layers=12, heads=12, mlp_width=3072)
BERT_SEGMENTS = 2
"""BERT's token-type (segment) vocabulary."""


def gpt2_module(shape: TransformerShape = GPT2_SMALL):
    """A GPT-2-style decoder; ``forward(tokens)`` with ``tokens`` (batch, length <= context) int64."""
    import torch
    from torch import nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1 = nn.LayerNorm(shape.width)
            self.attn = nn.MultiheadAttention(shape.width, shape.heads, dropout=0.1, batch_first=True)
            self.attn_dropout = nn.Dropout(0.1)
            self.ln_2 = nn.LayerNorm(shape.width)
            self.mlp_fc = nn.Linear(shape.width, shape.mlp_width)
            self.mlp_act = nn.GELU(approximate="tanh")
            self.mlp_proj = nn.Linear(shape.mlp_width, shape.width)
            self.mlp_dropout = nn.Dropout(0.1)

        def forward(self, x, causal):
            h = self.ln_1(x)
            x = x + self.attn_dropout(self.attn(h, h, h, attn_mask=causal, need_weights=False)[0])
            return x + self.mlp_dropout(self.mlp_proj(self.mlp_act(self.mlp_fc(self.ln_2(x)))))

    class GPT2(nn.Module):
        def __init__(self):
            super().__init__()
            n = shape.context_tokens
            self.wte = nn.Embedding(shape.vocab_size, shape.width)
            self.wpe = nn.Embedding(n, shape.width)
            self.drop = nn.Dropout(0.1)
            self.blocks = nn.ModuleList(Block() for _ in range(shape.layers))
            self.ln_f = nn.LayerNorm(shape.width)
            self.lm_head = nn.Linear(shape.width, shape.vocab_size, bias=False)
            self.lm_head.weight = self.wte.weight  # tied, as in GPT-2

        def forward(self, tokens):
            length = tokens.size(1)
            positions = torch.ones_like(tokens).cumsum(1) - 1  # 0 .. length-1 (fx cannot trace arange)
            x = self.drop(self.wte(tokens) + self.wpe(positions))
            causal = tokens.new_ones((length, length), dtype=torch.bool).triu(1)
            for block in self.blocks:
                x = block(x, causal)
            return self.lm_head(self.ln_f(x))

    return GPT2()


def bert_module(shape: TransformerShape = BERT_BASE):
    """A BERT-base-style encoder; ``forward(tokens)`` with ``tokens`` (batch, length <= 512) int64
    (one segment); returns the pooled first token."""
    import torch
    from torch import nn

    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            self.attn = nn.MultiheadAttention(shape.width, shape.heads, dropout=0.1, batch_first=True)
            self.attn_dropout = nn.Dropout(0.1)
            self.attn_norm = nn.LayerNorm(shape.width, eps=1e-12)
            self.ffn_in = nn.Linear(shape.width, shape.mlp_width)
            self.ffn_act = nn.GELU()
            self.ffn_out = nn.Linear(shape.mlp_width, shape.width)
            self.ffn_dropout = nn.Dropout(0.1)
            self.ffn_norm = nn.LayerNorm(shape.width, eps=1e-12)

        def forward(self, x):
            x = self.attn_norm(x + self.attn_dropout(self.attn(x, x, x, need_weights=False)[0]))
            return self.ffn_norm(x + self.ffn_dropout(self.ffn_out(self.ffn_act(self.ffn_in(x)))))

    class Bert(nn.Module):
        def __init__(self):
            super().__init__()
            n = shape.context_tokens
            self.word = nn.Embedding(shape.vocab_size, shape.width, padding_idx=0)
            self.position = nn.Embedding(n, shape.width)
            self.segment = nn.Embedding(BERT_SEGMENTS, shape.width)
            self.embed_norm = nn.LayerNorm(shape.width, eps=1e-12)
            self.embed_dropout = nn.Dropout(0.1)
            self.layers = nn.ModuleList(Layer() for _ in range(shape.layers))
            self.pooler = nn.Linear(shape.width, shape.width)
            self.pooler_act = nn.Tanh()

        def forward(self, tokens):
            positions = torch.ones_like(tokens).cumsum(1) - 1  # 0 .. length-1 (fx cannot trace arange)
            segments = torch.zeros_like(tokens)  # one segment
            x = self.word(tokens) + self.position(positions) + self.segment(segments)
            x = self.embed_dropout(self.embed_norm(x))
            for layer in self.layers:
                x = layer(x)
            return self.pooler_act(self.pooler(x[:, 0]))

    return Bert()
