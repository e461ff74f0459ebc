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

import functools
import math
from dataclasses import dataclass

import numpy as np

from pacml.errors import ProfileError
from pacml.graphs.models import PAPER_MODELS, InputSpec, build_model, model_name
from pacml.graphs.opgraph import OpGraph, training_graph

BUILTIN_MODELS = PAPER_MODELS


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


def gnmt_module(vocab: int = 32320, hidden: int = 1024):
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


class _PathTracer:
    """``torch.fx`` tracing that remembers which module it was inside when tracing failed."""

    @staticmethod
    def trace(module, name: str):
        import torch.fx as fx

        class Tracer(fx.Tracer):
            def __init__(self):
                super().__init__()
                self.stack: list[str] = []
                self.failed_in: str | None = None

            def call_module(self, m, forward, args, kwargs):
                self.stack.append(f"{self.path_of_module(m) or '<model>'} ({type(m).__name__})")
                try:
                    return super().call_module(m, forward, args, kwargs)
                except Exception:
                    if self.failed_in is None:
                        self.failed_in = self.stack[-1]
                    raise
                finally:
                    self.stack.pop()

        tracer = Tracer()
        try:
            graph = tracer.trace(module)
        except Exception as exc:  # fx raises TraceError, TypeError, AttributeError, ...
            where = tracer.failed_in or f"<model> ({type(module).__name__})"
            raise ProfileError(
                name, f"torch.fx cannot trace it: in module {where}{_source_line(exc)}: {_first_line(exc)}"
            ) from None
        return fx.GraphModule(tracer.root, graph, type(module).__name__)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"


def _source_line(exc: BaseException) -> str:
    """`` at file:line`` of the innermost frame outside torch (the model's own code)."""
    import traceback

    frames = [f for f in traceback.extract_tb(exc.__traceback__) if "/torch/" not in f.filename]
    if not frames:
        return ""
    f = frames[-1]
    return f" at {f.filename.split('site-packages/')[-1]}:{f.lineno}"


PRECISIONS = {"fp32": 19.5e12, "tf32": 156e12, "bf16": 312e12}
"""Dense A100 peaks per numeric format, FLOP/s (NVIDIA A100 Tensor Core GPU datasheet, 2020:
FP32 19.5 TFLOPS; TF32 Tensor Core 156 TFLOPS and BF16 Tensor Core 312 TFLOPS without
sparsity). FP32 is the paper's. TF32 keeps 4-byte tensors; BF16 casts the model and its
floating-point inputs, so activations and parameters are 2 bytes an element."""


def device_for(precision: str) -> DeviceModel:
    if precision not in PRECISIONS:
        raise ProfileError("--precision", f"unknown numeric format {precision!r}; known: {', '.join(PRECISIONS)}")
    return A100 if precision == "fp32" else DeviceModel(peak_flops_per_s=PRECISIONS[precision])


def _mutable(x):
    """fx's immutable argument lists and dicts as plain ones (some wrapped functions mutate them)."""
    if isinstance(x, tuple):
        return tuple(_mutable(v) for v in x)
    if isinstance(x, list):
        return [_mutable(v) for v in x]
    if isinstance(x, dict):
        return {k: _mutable(v) for k, v in x.items()}
    return x


def _meta_inputs(specs: tuple[InputSpec, ...], precision: str) -> list:
    import torch

    out = []
    for spec in specs:
        dtype = getattr(torch, spec.dtype)
        if precision == "bf16" and dtype.is_floating_point:
            dtype = torch.bfloat16
        out.append(torch.empty(spec.shape, dtype=dtype, device="meta"))
    return out


def profile_layers(
    name: str,
    inputs: tuple[InputSpec, ...] | None = None,
    batch: int | None = None,
    precision: str = "fp32",
) -> list[dict]:
    """Trace ``name`` (`pacml.graphs.models.build_model`) and measure every layer (see the
    module doc). One dict per layer, in execution order: name, description, kind, inputs
    (indices), flops, bytes_moved, activation_bytes, parameter_bytes and weight_gradients
    (the layer has trainable weights). A parameter shared by several layers (GPT-2's tied
    output projection) counts its bytes at its first layer only. Raises `ProfileError`
    naming the model and the module or layer where tracing or shape propagation failed."""
    import torch
    import torch.fx as fx
    from torch.utils.flop_counter import FlopCounterMode

    device_for(precision)
    model, specs = build_model(name, inputs, batch)
    # moving to meta unties shared parameters; remember each one's first name first
    owner: dict[int, str] = {}
    first_name = {n: owner.setdefault(id(p), n) for n, p in model.named_parameters(remove_duplicate=False)}
    model = model.to("meta").eval()
    if precision == "bf16":
        model = model.to(torch.bfloat16)
    gm = _PathTracer.trace(model, name)
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    if len(placeholders) != len(specs):
        raise ProfileError(
            name,
            f"forward takes {len(placeholders)} input(s) ({', '.join(n.target for n in placeholders)}) "
            f"but {len(specs)} input spec(s) were given ({', '.join(s.text() for s in specs)})",
        )
    env: dict[str, object] = {}
    layers: list[dict] = []
    index: dict[str, int] = {}
    counted: set[str] = set()
    feed = iter(_meta_inputs(specs, precision))
    for node in gm.graph.nodes:
        if node.op == "output":
            continue
        args = _mutable(fx.node.map_arg(node.args, lambda n: env[n.name]))
        kwargs = _mutable(fx.node.map_arg(node.kwargs, lambda n: env[n.name]))
        params = 0.0
        trainable = False
        extra_flops = 0.0
        try:
            with FlopCounterMode(display=False) as counter:
                if node.op == "placeholder":
                    out = next(feed)
                elif node.op == "get_attr":  # a buffer or a parameter used outside a module
                    out = functools.reduce(getattr, node.target.split("."), gm)
                    if isinstance(out, torch.nn.Parameter):
                        trainable = out.requires_grad
                        if first_name.get(node.target, node.target) not in counted:
                            counted.add(first_name.get(node.target, node.target))
                            params += float(out.numel() * out.element_size())
                elif node.op == "call_module":
                    mod = gm.get_submodule(node.target)
                    for pname, p in mod.named_parameters(prefix=node.target, remove_duplicate=False):
                        trainable = trainable or p.requires_grad
                        if first_name.get(pname, pname) not in counted:
                            counted.add(first_name.get(pname, pname))
                            params += float(p.numel() * p.element_size())
                    out = mod(*args, **kwargs)
                    if isinstance(mod, torch.nn.LSTM):
                        extra_flops = _lstm_flops(mod, args[0].shape)
                elif node.op == "call_method":
                    out = getattr(args[0], node.target)(*args[1:], **kwargs)
                else:
                    out = node.target(*args, **kwargs)
        except Exception as exc:
            raise ProfileError(
                name,
                f"layer {node.name} ({_describe(node, gm)[:80]}) fails on inputs "
                f"{', '.join(s.text() for s in specs)}: {_first_line(exc)}",
            ) from None
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
                "weight_gradients": trainable,
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
    factor = device.backward_factor if layer["weight_gradients"] else 1.0
    return fwd, fwd * factor


def profile_model(
    name: str,
    num_training_steps: int = 50,
    inputs: tuple[InputSpec, ...] | None = None,
    batch: int | None = None,
    precision: str = "fp32",
) -> OpGraph:
    """The training-step graph of model ``name`` (deterministic; `pacml.graphs.models`)."""
    layers = profile_layers(name, inputs, batch, precision)
    device = device_for(precision)
    times = np.array([layer_times_s(layer, device) for layer in layers])
    edges = [(p, i) for i, layer in enumerate(layers) for p in layer["inputs"]]
    has_child = {u for u, _ in edges}
    sinks = [i for i in range(len(layers)) if i not in has_child]
    assert sinks and not math.isnan(times.sum())
    return training_graph(
        name=model_name(name),
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
