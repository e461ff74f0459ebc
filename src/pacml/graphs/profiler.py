"""Built-in, deterministic profiles of the paper's five models (imports torch).

Each model is traced with ``torch.fx`` into a DAG of layers and run once on the ``meta``
device (shapes only, no weights, no downloads, no arithmetic). Per layer it records the
output activation bytes and parameter bytes (fp32), the forward FLOPs
(``torch.utils.flop_counter``, plus closed forms for LSTMs, which it does not count) and
the bytes the layer moves (inputs + outputs + parameters). Times come from a roofline
model of an A100 (`A100`): ``t = max(flops / (peak x eff), bytes / (bandwidth x eff))``;
a layer's backward pass costs ``backward_factor`` times its forward when it has parameters
(gradients for inputs and weights) and one times otherwise. Pure-view layers (view,
size, flatten, getitem) and concatenation cost nothing, as in PipeDream's profiles. The input layer costs its bytes at the data
loading rate.

Batch sizes are PipeDream's, read off each profile's input layer: 256 images of
3x224x224 (128 for vgg16, whose profile's input is 77070336 B); GNMT batch 32, source length 48
and target length 47, read off the profile's activation sizes (embedding output
6291456 B = 32 x 48 x 1024 x 4; attention scores 288768 B = 32 x 47 x 48 x 4).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from pacml.errors import UnknownNameError
from pacml.graphs.opgraph import OpGraph, training_graph

BUILTIN_MODELS = ("alexnet", "gnmt", "resnet18", "squeezenet1_0", "vgg16")
IMAGE_BATCH = {"vgg16": 128}
"""Image batch sizes that differ from 256 in PipeDream's profiles."""


@dataclass(frozen=True)
class DeviceModel:
    """Roofline parameters of the device the profiles are for."""

    peak_flops_per_s: float = 19.5e12
    """A100 dense FP32 peak (NVIDIA A100 datasheet)."""
    memory_bytes_per_s: float = 2.039e12
    """A100 80 GB SXM HBM2e bandwidth; NVIDIA A100 datasheet."""
    efficiency: float = 0.5
    """Fraction of both peaks a real kernel reaches (assumption; one factor for both)."""
    backward_factor: float = 2.0
    """Backward / forward cost of a layer with parameters (input and weight gradients)."""
    input_load_bytes_per_s: float = 154140672 / 0.635902
    """Data loading rate of the input layer: PipeDream's alexnet profile loads a 154 MB
    ImageNet batch in 635.9 ms."""


A100 = DeviceModel()

# layers PipeDream's profiles record as free: views, and concatenation (fused into its
# consumer's read by the profiler's layer hooks)
_ZERO_COST = {
    "view",
    "size",
    "flatten",
    "getitem",
    "reshape",
    "contiguous",
    "Size",
    "View",
    "Flatten",
    "__getitem__",
    "Concat",
}


def _gnmt_module(vocab: int = 32320, hidden: int = 1024):
    import torch
    from torch import nn

    class BahdanauAttention(nn.Module):
        def __init__(self, h: int):
            super().__init__()
            self.linear_q = nn.Linear(h, h, bias=False)
            self.linear_k = nn.Linear(h, h, bias=False)
            self.linear_att = nn.Linear(h, 1, bias=False)

        def forward(self, query, keys):
            q = self.linear_q(query).unsqueeze(2)  # b, tq, 1, h
            k = self.linear_k(keys).unsqueeze(1)  # b, 1, tk, h
            scores = self.linear_att(torch.tanh(q + k)).squeeze(3)  # b, tq, tk
            weights = torch.softmax(scores, dim=-1)
            return torch.bmm(weights, keys), scores

    class RecurrentAttention(nn.Module):
        def __init__(self, h: int):
            super().__init__()
            self.rnn = nn.LSTM(h, h, batch_first=True)
            self.attn = BahdanauAttention(h)

        def forward(self, x, context):
            out, _ = self.rnn(x)
            attn, scores = self.attn(out, context)
            return out, attn, scores

    class GNMT(nn.Module):
        """GNMT-8-style encoder-decoder with attention, shaped like PipeDream's profile."""

        def __init__(self):
            super().__init__()
            self.enc_embedding = nn.Embedding(vocab, hidden, padding_idx=0)
            self.enc_bidir = nn.LSTM(hidden, hidden, batch_first=True, bidirectional=True)
            self.enc_dropout0 = nn.Dropout(0.2)
            self.enc_lstm1 = nn.LSTM(2 * hidden, hidden, batch_first=True)
            self.enc_dropout1 = nn.Dropout(0.2)
            self.enc_lstm2 = nn.LSTM(hidden, hidden, batch_first=True)
            self.enc_dropout2 = nn.Dropout(0.2)
            self.enc_lstm3 = nn.LSTM(hidden, hidden, batch_first=True)
            self.dec_embedding = nn.Embedding(vocab, hidden, padding_idx=0)
            self.dec_attention = RecurrentAttention(hidden)
            self.dec_dropout0 = nn.Dropout(0.2)
            self.dec_lstm1 = nn.LSTM(2 * hidden, hidden, batch_first=True)
            self.dec_dropout1 = nn.Dropout(0.2)
            self.dec_lstm2 = nn.LSTM(2 * hidden, hidden, batch_first=True)
            self.dec_dropout2 = nn.Dropout(0.2)
            self.dec_lstm3 = nn.LSTM(2 * hidden, hidden, batch_first=True)
            self.classifier = nn.Linear(hidden, vocab)

        def forward(self, src, tgt):
            x = self.enc_embedding(src)
            x = self.enc_dropout0(self.enc_bidir(x)[0])
            x = self.enc_dropout1(self.enc_lstm1(x)[0])
            x = x + self.enc_dropout2(self.enc_lstm2(x)[0])
            context = x + self.enc_lstm3(x)[0]
            y = self.dec_embedding(tgt)
            y, attn, _scores = self.dec_attention(y, context)
            y = self.dec_dropout0(y)
            y = self.dec_dropout1(self.dec_lstm1(torch.cat([y, attn], dim=2))[0])
            y = y + self.dec_dropout2(self.dec_lstm2(torch.cat([y, attn], dim=2))[0])
            y = y + self.dec_lstm3(torch.cat([y, attn], dim=2))[0]
            return self.classifier(y)

    return GNMT()


def build_model(name: str):
    """The (randomly initialised, never downloaded) torch module and its meta inputs."""
    import torch
    import torchvision

    if name == "gnmt":
        batch, src_len, tgt_len = 32, 48, 47
        return _gnmt_module(), (
            torch.empty(batch, src_len, dtype=torch.long, device="meta"),
            torch.empty(batch, tgt_len, dtype=torch.long, device="meta"),
        )
    if name not in BUILTIN_MODELS:
        raise UnknownNameError(f"unknown built-in model {name!r}; known: {', '.join(BUILTIN_MODELS)}")
    model = getattr(torchvision.models, name)(weights=None)
    batch = IMAGE_BATCH.get(name, 256)
    return model, (torch.empty(batch, 3, 224, 224, device="meta"),)


def _lstm_flops(mod, in_shape) -> float:
    """2 x 4 gates x (input x hidden + hidden x hidden) multiply-adds per step and direction."""
    batch, steps = in_shape[0], in_shape[1]
    dirs = 2 if mod.bidirectional else 1
    total = 0.0
    in_size = mod.input_size
    for _layer in range(mod.num_layers):
        total += dirs * batch * steps * 2 * 4 * (in_size * mod.hidden_size + mod.hidden_size * mod.hidden_size)
        in_size = mod.hidden_size * dirs
    return total


def _nbytes(x) -> float:
    import torch

    if isinstance(x, torch.Tensor):
        return float(x.numel() * x.element_size())
    if isinstance(x, (tuple, list)):
        return float(sum(_nbytes(v) for v in x))
    return 0.0


def _describe(node, gm) -> str:
    if node.op == "call_module":
        return " ".join(repr(gm.get_submodule(node.target)).split())
    if node.op == "placeholder":
        return f"Input{node.target}"
    name = getattr(node.target, "__name__", str(node.target))
    return {"add": "Add", "cat": "Concat", "flatten": "Flatten", "getitem": "__getitem__"}.get(name, name)


def profile_layers(name: str) -> list[dict]:
    """Trace ``name`` and measure every layer (see the module doc). One dict per layer, in
    execution order: name, description, kind, inputs (indices), flops, bytes_moved,
    activation_bytes, parameter_bytes."""
    import torch
    import torch.fx as fx
    from torch.utils.flop_counter import FlopCounterMode

    model, inputs = build_model(name)
    model = model.to("meta").eval()
    gm = fx.symbolic_trace(model)
    env: dict[str, object] = {}
    layers: list[dict] = []
    index: dict[str, int] = {}
    placeholders = iter(inputs)
    for node in gm.graph.nodes:
        if node.op == "output":
            continue
        args = fx.node.map_arg(node.args, lambda n: env[n.name])
        kwargs = fx.node.map_arg(node.kwargs, lambda n: env[n.name])
        params = 0.0
        extra_flops = 0.0
        with FlopCounterMode(display=False) as counter:
            if node.op == "placeholder":
                out = next(placeholders)
            elif node.op == "get_attr":
                out = getattr(gm, node.target)
            elif node.op == "call_module":
                mod = gm.get_submodule(node.target)
                params = float(sum(p.numel() * p.element_size() for p in mod.parameters()))
                out = mod(*args, **kwargs)
                if isinstance(mod, torch.nn.LSTM):
                    extra_flops = _lstm_flops(mod, args[0].shape)
            elif node.op == "call_method":
                out = getattr(args[0], node.target)(*args[1:], **kwargs)
            else:
                out = node.target(*args, **kwargs)
        env[node.name] = out
        parents = [index[n.name] for n in node.all_input_nodes if n.name in index]
        in_bytes = sum(layers[p]["activation_bytes"] for p in parents)
        kind = node.target if node.op == "call_method" else _describe(node, gm).split("(")[0]
        activation = _nbytes(out) if not isinstance(out, torch.Size) else 4.0
        layers.append(
            {
                "name": f"node{len(layers) + 1}",
                "description": _describe(node, gm),
                "kind": "Input" if node.op == "placeholder" else str(kind),
                "inputs": parents,
                "flops": float(counter.get_total_flops()) + extra_flops,
                "bytes_moved": in_bytes + activation + params,
                "activation_bytes": activation,
                "parameter_bytes": params,
            }
        )
        index[node.name] = len(layers) - 1
    return layers


def layer_times_s(layer: dict, device: DeviceModel = A100) -> tuple[float, float]:
    """(forward, backward) seconds of one profiled layer on ``device``."""
    if layer["kind"] == "Input":
        return layer["activation_bytes"] / device.input_load_bytes_per_s, 0.0
    if layer["kind"] in _ZERO_COST:
        return 0.0, 0.0
    fwd = max(
        layer["flops"] / (device.peak_flops_per_s * device.efficiency),
        layer["bytes_moved"] / (device.memory_bytes_per_s * device.efficiency),
    )
    factor = device.backward_factor if layer["parameter_bytes"] > 0 else 1.0
    return fwd, fwd * factor


def profile_model(name: str, num_training_steps: int = 50, device: DeviceModel = A100) -> OpGraph:
    """The built-in training-step graph of ``name`` (deterministic)."""
    layers = profile_layers(name)
    times = np.array([layer_times_s(layer, device) for layer in layers])
    edges = [(p, i) for i, layer in enumerate(layers) for p in layer["inputs"]]
    has_child = {u for u, _ in edges}
    sinks = [i for i in range(len(layers)) if i not in has_child]
    assert sinks and not math.isnan(times.sum())
    return training_graph(
        name=name,
        forward_names=[layer["name"] for layer in layers],
        descriptions=[layer["description"] for layer in layers],
        forward_time_s=times[:, 0],
        backward_time_s=times[:, 1],
        activation_bytes=np.array([layer["activation_bytes"] for layer in layers]),
        parameter_bytes=np.array([layer["parameter_bytes"] for layer in layers]),
        forward_edges=edges,
        last_forward=max(sinks),
        num_training_steps=num_training_steps,
    )
