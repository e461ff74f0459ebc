"""Profiling any model: today's architectures against their published sizes, the paper's
five unchanged to the byte, inputs, numeric formats, and the errors a user sees."""

from __future__ import annotations

import hashlib
import re
import sys
import textwrap

import numpy as np
import pytest

from pacml.cli import main
from pacml.errors import ProfileError
from pacml.graphs.commands import profile_models
from pacml.graphs.models import InputSpec, parse_input_spec
from pacml.graphs.pipedream import read_pipedream
from pacml.graphs.profiler import profile_layers, profile_model

# Published parameter counts: ViT-B/16 86.6M, ResNet-50 25.6M and MobileNet V2 3.5M as
# torchvision's model documentation lists them (ViT paper, Table 1: 86M); GPT-2 small 124M
# (OpenAI's released 124M model); BERT-base 110M (Devlin et al. 2019, section 3).
PUBLISHED_PARAMETERS = {
    "vit_b_16": 86.6e6,
    "resnet50": 25.6e6,
    "mobilenet_v2": 3.5e6,
    "gpt2": 124e6,
    "bert_base": 110e6,
}
# Multiply-adds per 224x224 image, torchvision's documentation ("GFLOPS", counted as MACs).
PUBLISHED_GMACS = {"vit_b_16": 17.56, "resnet50": 4.09, "mobilenet_v2": 0.30}

# sha256 of `pacml graphs profile paper --format json` before any model beyond the paper's
# could be profiled: the paper's five stay byte-for-byte the same.
PAPER_JSON_SHA256 = {
    "alexnet": "5fb48bf10f3b68c9001d2aff8600fea9408ebb51d2f9942c40407c6964efe1fc",
    "gnmt": "b6396565c87f4360341e3a18668df5abc8beb7fb86498bf91192cbb25d2df932",
    "resnet18": "f14f44b2d26041e234c799a910ce0a222ad551fb70762651c339335490b65322",
    "squeezenet1_0": "dda42736172cbe8b4ac657487c35650d404538fcd4f06d0e4fd4d50aa337c247",
    "vgg16": "5d26aa82b17418b6af5a6e6cd2fe14da15bbd57d278e4babce496fba056c73b7",
}


@pytest.fixture(scope="module")
def modern_layers():
    # batch 1: sizes per sample; the roofline's numbers scale with the batch
    return {name: profile_layers(name, batch=1) for name in PUBLISHED_PARAMETERS}


@pytest.mark.parametrize("name", sorted(PUBLISHED_PARAMETERS))
def test_parameter_counts_are_the_published_ones(modern_layers, name):
    params = sum(layer["parameter_bytes"] for layer in modern_layers[name]) / 4  # fp32
    assert params == pytest.approx(PUBLISHED_PARAMETERS[name], rel=0.01)


@pytest.mark.parametrize("name", sorted(PUBLISHED_GMACS))
def test_image_model_flops_are_torchvisions(modern_layers, name):
    macs = sum(layer["flops"] for layer in modern_layers[name]) / 2
    assert macs / 1e9 == pytest.approx(PUBLISHED_GMACS[name], rel=0.01)


def _transformer_forward_flops(width, layers, tokens, mlp, vocab_head=0):
    """By hand, per sequence: every matmul is 2 x m x n x k FLOPs. Per token and layer the
    q, k, v and output projections (4 d^2 weights) and the MLP (2 d x mlp), attention's
    scores and weighted sum (2 x tokens x d each); the tied head (d x vocab) per token."""
    per_token_layer = 2 * (4 * width * width + 2 * width * mlp) + 4 * tokens * width
    return tokens * (layers * per_token_layer + 2 * width * vocab_head)


def test_gpt2_flops_are_the_closed_form(modern_layers):
    flops = sum(layer["flops"] for layer in modern_layers["gpt2"])
    assert flops == _transformer_forward_flops(768, 12, 1024, 3072, vocab_head=50257)  # 291.6 GFLOPs


def test_bert_flops_are_the_closed_form(modern_layers):
    flops = sum(layer["flops"] for layer in modern_layers["bert_base"])
    pooler = 2 * 768 * 768  # one token per sequence
    assert flops == _transformer_forward_flops(768, 12, 128, 3072) + pooler


def test_gpt2s_tied_output_projection_is_counted_once_but_learns(modern_layers):
    layers = modern_layers["gpt2"]
    embedding = next(la for la in layers if la["description"].startswith("Embedding(50257"))
    head = next(la for la in layers if la["description"].startswith("Linear(in_features=768, out_features=50257"))
    assert embedding["parameter_bytes"] == 50257 * 768 * 4
    assert head["parameter_bytes"] == 0.0 and head["weight_gradients"]
    # so its backward pass computes weight gradients too: twice its forward, like any layer with weights
    g = profile_model("gpt2", batch=1)
    i = layers.index(head)
    assert g.compute_time_s[g.num_forward + i] == 2 * g.compute_time_s[i] > 0


def test_the_paper_models_are_byte_for_byte_unchanged(tmp_path):
    written = profile_models(["paper"], tmp_path, fmt="json")
    assert [p.stem for p in written] == list(PAPER_JSON_SHA256)
    assert {p.stem: hashlib.sha256(p.read_bytes()).hexdigest() for p in written} == PAPER_JSON_SHA256


def test_the_cli_writes_pipedream_files_that_read_back(tmp_path, capsys):
    assert main(["graphs", "profile", "resnet50", "mobilenet_v2", "--batch", "8", "--out", str(tmp_path)]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mobilenet_v2.txt", "resnet50.txt"]
    for name in ("resnet50", "mobilenet_v2"):
        ours = profile_model(name, batch=8)
        back = read_pipedream(tmp_path / f"{name}.txt")
        assert back.name == name and back.num_ops == ours.num_ops
        assert np.array_equal(back.memory_bytes, ours.memory_bytes)
        # milliseconds in the text: exact, or one unit in the last place where no millisecond
        # double maps back (s_to_ms_text)
        np.testing.assert_allclose(back.compute_time_s, ours.compute_time_s, rtol=4e-16, atol=0)


def test_a_users_module_profiles_with_its_input_and_the_workflow_runs_on_it(tmp_path, monkeypatch, capsys):
    package = tmp_path / "mypkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "models.py").write_text(
        textwrap.dedent(
            """
            from torch import nn

            def build():
                return nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU(), nn.Flatten(), nn.Linear(8 * 222 * 222, 10))
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    out = tmp_path / "graphs"
    argv = ["graphs", "profile", "mypkg.models:build", "--input", "1x3x224x224", "--out", str(out)]
    assert main(argv) == 0
    g = read_pipedream(out / "build.txt")
    # input, conv, relu, flatten, linear
    assert g.num_forward == 5
    assert g.parameter_bytes[: g.num_forward].tolist() == [0, (8 * 3 * 9 + 8) * 4, 0, 0, (8 * 222 * 222 * 10 + 10) * 4]
    assert g.activation_bytes[1] == 8 * 222 * 222 * 4
    # the simulator takes it as a job pool of one model
    policy_out = tmp_path / "m.json"
    argv = ["simulate", "--graphs", str(out), "--policy", "para_max", "--dist", "beta_a", "--out", str(policy_out)]
    assert main([*argv, "--set", "graphs.models=[]", "--set", "workload.horizon_s=2e5"]) == 0
    assert '"jobs_arrived"' in policy_out.read_text()


UNTRACEABLE = """
import torch
from torch import nn

class Gate(nn.Module):
    def forward(self, x):
        if x.sum() > 0:  # data-dependent control flow: fx cannot trace it
            return x
        return -x

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Linear(4, 4)
        self.gate = Gate()

    def forward(self, x):
        return self.gate(self.stem(x))

def build():
    return Net()

def not_a_module():
    return 3
"""


@pytest.fixture
def user_models(tmp_path, monkeypatch):
    (tmp_path / "usermodels.py").write_text(UNTRACEABLE)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield
    sys.modules.pop("usermodels", None)


def test_a_model_fx_cannot_trace_names_the_model_and_the_module(user_models):
    with pytest.raises(
        ProfileError,
        match=r"^usermodels:build: torch.fx cannot trace it: in module gate \(Gate\) at .*usermodels.py:7: TraceError",
    ):
        profile_layers("usermodels:build", (InputSpec((2, 4)),))


def test_a_torchvision_model_fx_cannot_trace_is_named(capsys):
    assert main(["graphs", "profile", "raft_small", "--out", "unused"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("pacml: error: raft_small: torch.fx cannot trace it: in module <model> (RAFT)")
    assert "raft.py:" in err and "\n" not in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["nosuchnet"], r"nosuchnet: unknown model; known: alexnet, .* torchvision.models.list_models\(\)"),
        (["usermodels:build"], r"usermodels:build: a module:callable model needs an input spec"),
        (["usermodels:not_a_module", "--input", "2x4"], r"factory returned int, not a torch.nn.Module"),
        (["nosuchpkg.mod:build", "--input", "2x4"], r"cannot import module 'nosuchpkg.mod'"),
        (["resnet50", "--input", "1x3x224"], r"resnet50: layer conv1 \(Conv2d\(3, 64.*fails on inputs 1x3x224"),
        (["resnet50", "--input", "1x3x224x224", "--input", "2x4"], r"forward takes 1 input\(s\) \(x\)"),
        (["resnet50", "--input", "1x3x224x224:float8"], r"--input: '1x3x224x224:float8': unknown dtype"),
        (["resnet50", "--input", "1x0x3"], r"--input: '1x0x3' is not SHAPE\[:DTYPE\]"),
    ],
)
def test_profile_errors_exit_2_naming_the_cause(user_models, tmp_path, capsys, argv, message):
    assert main(["graphs", "profile", *argv, "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert re.search(message, err), err


def test_nothing_is_downloaded(monkeypatch, tmp_path):
    """Segmentation models default to a pretrained backbone; the profiler turns it off."""
    import torch.hub
    from torchvision.models import _api

    def refuse(*args, **kwargs):
        raise AssertionError("the profiler tried to download weights")

    monkeypatch.setattr(torch.hub, "load_state_dict_from_url", refuse)
    monkeypatch.setattr(_api.WeightsEnum, "get_state_dict", refuse)
    layers = profile_layers("fcn_resnet50", batch=1)
    # torchvision's 35,322,218 less the auxiliary head it builds only with aux_loss (off without
    # weights): 1024x256x3x3 + 2x256 (batch norm) + 256x21 + 21
    assert sum(la["parameter_bytes"] for la in layers) / 4 == 35_322_218 - (1024 * 256 * 9 + 512 + 256 * 21 + 21)


def test_bf16_halves_the_bytes_and_uses_the_tensor_core_peak():
    fp32 = profile_layers("resnet18", batch=2)
    bf16 = profile_layers("resnet18", batch=2, precision="bf16")
    assert [la["activation_bytes"] for la in bf16] == [la["activation_bytes"] / 2 for la in fp32]
    assert [la["parameter_bytes"] for la in bf16] == [la["parameter_bytes"] / 2 for la in fp32]
    assert [la["flops"] for la in bf16] == [la["flops"] for la in fp32]
    g32, g16 = profile_model("resnet18", batch=2), profile_model("resnet18", batch=2, precision="bf16")
    assert g16.sequential_jct_s < g32.sequential_jct_s
    tf32 = profile_model("resnet18", batch=2, precision="tf32")
    assert np.array_equal(tf32.memory_bytes, g32.memory_bytes) and tf32.sequential_jct_s < g32.sequential_jct_s


def test_input_specs_parse_and_print():
    assert parse_input_spec("8x1024:int64") == InputSpec((8, 1024), "int64")
    assert parse_input_spec(" 1x3x224x224 ") == InputSpec((1, 3, 224, 224))
    assert InputSpec((8, 1024), "int64").text() == "8x1024:int64"
    with pytest.raises(ProfileError, match="--input"):
        parse_input_spec("8 x 1024")


def test_profiles_of_modern_models_are_deterministic():
    assert profile_model("bert_base", batch=2).equals(profile_model("bert_base", batch=2))
