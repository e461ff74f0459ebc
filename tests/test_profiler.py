"""The built-in profiler against PipeDream's profiles.

Layers are matched by kind and occurrence: the k-th layer of a kind (the description up to
its first parenthesis, e.g. Conv2d) in the forward Kahn order of one graph is matched with
the k-th of that kind in the other. Inputs, views and other kinds absent from one side stay
unmatched.
"""

from __future__ import annotations

import numpy as np
import pytest
import torchvision  # noqa: F401 - a hard dependency: its absence must fail, not skip

from pacml.graphs.io import graph_from_dict, graph_to_dict
from pacml.graphs.pipedream import format_pipedream, parse_pipedream, read_pipedream
from pacml.graphs.profiler import BUILTIN_MODELS, profile_model

IMAGE_MODELS = ("alexnet", "resnet18", "squeezenet1_0", "vgg16")


def matched(a, b):
    def occurrences(g):
        seen: dict[str, int] = {}
        out = {}
        for i in g.forward_topological_order:
            kind = g.descriptions[i].split("(")[0].strip()
            out[(kind, seen.get(kind, 0))] = i
            seen[kind] = seen.get(kind, 0) + 1
        return out

    oa, ob = occurrences(a), occurrences(b)
    return [(oa[k], ob[k]) for k in oa if k in ob and k[0] != "Input"]


def spearman(x, y) -> float:
    rx = np.argsort(np.argsort(x, kind="stable"), kind="stable").astype(float)
    ry = np.argsort(np.argsort(y, kind="stable"), kind="stable").astype(float)
    # average ranks of ties
    for r, v in ((rx, np.asarray(x)), (ry, np.asarray(y))):
        for val in np.unique(v):
            sel = v == val
            r[sel] = r[sel].mean()
    return float(np.corrcoef(rx, ry)[0, 1])


@pytest.fixture(scope="module")
def builtin():
    return {m: profile_model(m) for m in BUILTIN_MODELS}


@pytest.mark.parametrize("model", IMAGE_MODELS)
def test_parameters_and_activations_equal_pipedream(pipedream_dir, builtin, model):
    ref, ours = read_pipedream(pipedream_dir / f"{model}.txt"), builtin[model]
    pairs = matched(ref, ours)
    assert len(pairs) >= ref.num_forward - 4
    with_params = [(i, j) for i, j in pairs if ref.parameter_bytes[i] > 0]
    assert with_params and all(ref.parameter_bytes[i] == ours.parameter_bytes[j] for i, j in with_params)
    # every layer with parameters on either side is matched
    assert int((ref.parameter_bytes[: ref.num_forward] > 0).sum()) == len(with_params)
    assert int((ours.parameter_bytes[: ours.num_forward] > 0).sum()) == len(with_params)
    assert all(ref.activation_bytes[i] == ours.activation_bytes[j] for i, j in pairs)


@pytest.mark.parametrize("model", IMAGE_MODELS)
def test_forward_times_rank_like_pipedream(pipedream_dir, builtin, model):
    ref, ours = read_pipedream(pipedream_dir / f"{model}.txt"), builtin[model]
    pairs = matched(ref, ours)
    rho = spearman([ref.compute_time_s[i] for i, _ in pairs], [ours.compute_time_s[j] for _, j in pairs])
    assert rho >= 0.6


def test_gnmt_is_shaped_like_pipedreams(builtin):
    g = builtin["gnmt"]
    emb = [i for i in range(g.num_forward) if g.descriptions[i].startswith("Embedding(32320, 1024")]
    assert len(emb) == 2
    assert g.activation_bytes[emb[0]] == 6291456.0  # 32 x 48 x 1024 x 4, as in the profile
    assert g.parameter_bytes[emb[0]] == 132382720.0  # as in the profile
    lstms = [i for i in range(g.num_forward) if g.descriptions[i].startswith("LSTM(")]
    assert len(lstms) == 8  # GNMT-8


def test_profiles_are_deterministic_and_round_trip(builtin):
    again = profile_model("alexnet")
    assert again.equals(builtin["alexnet"])
    for g in builtin.values():
        assert graph_from_dict(graph_to_dict(g)).equals(g)
        assert parse_pipedream(format_pipedream(g), name=g.name).equals(g)
