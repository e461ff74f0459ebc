"""Which models the profiler can build, and the inputs it traces them with (imports torch
only inside functions).

A model is named one of three ways (`build_model`):

- a built-in: the paper's five (`PAPER_MODELS`: PipeDream's batch sizes, `pacml.graphs.
  profiler`) or `gpt2` and `bert_base` (`pacml.graphs.transformers`);
- any torchvision model (``torchvision.models.list_models()``: ``vit_b_16``, ``resnet50``,
  ``mobilenet_v2``, video and segmentation models, ...), built with ``weights=None`` and,
  where the builder takes one, ``weights_backbone=None``: random weights, never a download;
- ``module:callable``, a function importable from the Python path that returns a
  ``torch.nn.Module`` (e.g. ``mypkg.models:build``); it needs an input spec.

An input spec is ``SHAPE[:DTYPE]``, e.g. ``1x3x224x224`` or ``8x1024:int64`` (the dtype
defaults to float32; one spec per positional input of ``forward``); ``batch`` replaces the
first dimension of every input. The defaults (`default_inputs`) are the paper's batches
for its models, 256 images of 3x224x224 for torchvision classifiers (PipeDream's ImageNet
batch; 299x299 for inception_v3), 32 clips of 3x16x112x112 for the video ResNets and
3x16x224x224 for the other video models, 16 images of 3x520x520 for segmentation, 8
sequences of 1024 tokens for gpt2 and 32 of 128 for bert_base (BERT's pre-training phase 1).
"""

from __future__ import annotations

import importlib
import inspect
import re
from dataclasses import dataclass

from pacml.errors import ProfileError

PAPER_MODELS = ("alexnet", "gnmt", "resnet18", "squeezenet1_0", "vgg16")
"""The paper's job pool; their profiles are fixed (tests/test_profiler.py)."""
LANGUAGE_MODELS = ("gpt2", "bert_base")
MODERN_MODELS = ("vit_b_16", "gpt2", "bert_base", "resnet50", "mobilenet_v2")
"""Today's architectures the project names: ``pacml graphs profile modern``."""

_DTYPES = ("float32", "float16", "bfloat16", "int64", "int32")
_SPEC = re.compile(r"^([1-9][0-9]*(?:x[1-9][0-9]*)*)(?::([a-z0-9]+))?$")
_VIDEO_RESNETS = ("r3d_18", "mc3_18", "r2plus1d_18")


@dataclass(frozen=True)
class InputSpec:
    """One positional input of a model's ``forward``."""

    shape: tuple[int, ...]
    dtype: str = "float32"

    def text(self) -> str:
        return "x".join(map(str, self.shape)) + ("" if self.dtype == "float32" else f":{self.dtype}")


def parse_input_spec(text: str) -> InputSpec:
    """``"8x1024:int64"`` -> InputSpec((8, 1024), "int64"); a clear error naming the spec."""
    m = _SPEC.match(text.strip())
    if m is None:
        raise ProfileError("--input", f"{text!r} is not SHAPE[:DTYPE] (e.g. 1x3x224x224 or 8x1024:int64)")
    dtype = m.group(2) or "float32"
    if dtype not in _DTYPES:
        raise ProfileError("--input", f"{text!r}: unknown dtype {dtype!r}; known: {', '.join(_DTYPES)}")
    return InputSpec(tuple(int(d) for d in m.group(1).split("x")), dtype)


def _torchvision_family(name: str) -> str | None:
    """'classification', 'video', 'segmentation', 'detection', 'optical_flow',
    'quantization', or None for a name torchvision does not know."""
    import torchvision.models as tvm

    for family in ("video", "segmentation", "detection", "optical_flow", "quantization"):
        if name in tvm.list_models(module=getattr(tvm, family)):
            return family
    return "classification" if name in tvm.list_models() else None


def is_known_model(name: str) -> bool:
    """A built-in or torchvision name (imports torchvision only for a name of neither list)."""
    return name in PAPER_MODELS + LANGUAGE_MODELS or _torchvision_family(name) is not None


def known_models_text() -> str:
    return ", ".join(PAPER_MODELS + LANGUAGE_MODELS) + " or any name in torchvision.models.list_models()"


def default_inputs(name: str) -> tuple[InputSpec, ...]:
    """The input a named model is profiled with unless the user gives one (module doc)."""
    if name == "gnmt":
        return InputSpec((32, 48), "int64"), InputSpec((32, 47), "int64")
    if name == "gpt2":
        return (InputSpec((8, 1024), "int64"),)
    if name == "bert_base":
        return (InputSpec((32, 128), "int64"),)
    if name == "vgg16":
        return (InputSpec((128, 3, 224, 224)),)
    family = _torchvision_family(name)
    if family == "video":
        side = 112 if name in _VIDEO_RESNETS else 224
        return (InputSpec((32, 3, 16, side, side)),)
    if family == "segmentation":
        return (InputSpec((16, 3, 520, 520)),)
    side = 299 if name in ("inception_v3", "quantized_inception_v3") else 224
    return (InputSpec((256, 3, side, side)),)


def _torchvision_module(name: str):
    import torchvision

    builder = torchvision.models.get_model_builder(name)
    params = inspect.signature(builder).parameters
    # every pretrained-weights argument off: nothing is ever downloaded
    return builder(**{k: None for k in params if k.startswith("weights")})


def _callable_module(target: str):
    module_name, _, attr = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ProfileError(target, f"cannot import module {module_name!r}: {exc}") from None
    factory = getattr(module, attr, None)
    if factory is None or not callable(factory):
        raise ProfileError(target, f"module {module_name!r} has no callable {attr!r}")
    try:
        return factory()
    except Exception as exc:  # the user's code: report it, naming the callable
        raise ProfileError(target, f"calling {attr}() failed: {type(exc).__name__}: {exc}") from None


def model_name(name: str) -> str:
    """The graph's name: the model's, or the callable's for ``module:callable``."""
    return name.rpartition(":")[2] if ":" in name else name


def build_model(name: str, inputs: tuple[InputSpec, ...] | None = None, batch: int | None = None):
    """``(module, input specs)`` of a named model (module doc); raises `ProfileError` naming
    the model when it is unknown or its factory does not return a module."""
    import torch

    from pacml.graphs import profiler, transformers

    if name in PAPER_MODELS and name != "gnmt":
        module = _torchvision_module(name)
    elif name == "gnmt":
        module = profiler.gnmt_module()
    elif name == "gpt2":
        module = transformers.gpt2_module()
    elif name == "bert_base":
        module = transformers.bert_module()
    elif re.fullmatch(r"[A-Za-z_][\w.]*:[A-Za-z_]\w*", name):
        if not inputs:
            raise ProfileError(name, "a module:callable model needs an input spec (--input SHAPE[:DTYPE])")
        module = _callable_module(name)
    elif _torchvision_family(name) is not None:
        module = _torchvision_module(name)
    else:
        raise ProfileError(name, f"unknown model; known: {known_models_text()}, or module:callable")
    if not isinstance(module, torch.nn.Module):
        raise ProfileError(name, f"the factory returned {type(module).__name__}, not a torch.nn.Module")
    specs = tuple(inputs) if inputs else default_inputs(name)
    if batch is not None:
        specs = tuple(InputSpec((batch, *s.shape[1:]), s.dtype) for s in specs)
    return module, specs
