"""Shared fixtures. The PipeDream profiles live in ../shared (never copied into the project);
only tests whose point is a PipeDream file read them, and they skip with a reason when it is
absent (a user's clone); with PACML_REQUIRE_SHARED=1 (CI) a missing ../shared fails them
instead. Tests that need real-sized graphs use the built-in profiles (`model_graphs`)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import settings

from pacml.graphs.opgraph import training_graph

# CI runs hypothesis derandomised: the same examples every run, so a red CI is reproducible
settings.register_profile("ci", derandomize=True, deadline=None)
if os.environ.get("CI"):
    settings.load_profile("ci")

ROOT = Path(__file__).resolve().parents[1]
# PACML_SHARED names another ../shared (make mutation runs the suite from a copy in mutants/)
SHARED_DIR = Path(os.environ.get("PACML_SHARED", ROOT.parent / "shared"))
PIPEDREAM_DIR = SHARED_DIR / "pipedream_profiles"
PAPER_MODELS = ("alexnet", "gnmt", "resnet18", "squeezenet1_0", "vgg16")


@pytest.fixture(scope="session")
def pipedream_dir() -> Path:
    if not PIPEDREAM_DIR.is_dir():
        if os.environ.get("PACML_REQUIRE_SHARED") == "1":  # CI: a missing ../shared is a failure
            pytest.fail(f"PACML_REQUIRE_SHARED=1 but no PipeDream profiles at {PIPEDREAM_DIR}")
        pytest.skip(f"PipeDream profiles not found at {PIPEDREAM_DIR} (../shared is absent in a user's clone)")
    return PIPEDREAM_DIR


@pytest.fixture(scope="session")
def model_graphs():
    """The paper's five models from pacml's built-in profiler (no file needed): for tests whose
    point is real-sized graphs, not PipeDream's numbers."""
    from pacml.graphs.profiler import profile_model

    return [profile_model(name) for name in PAPER_MODELS]


@pytest.fixture(scope="session")
def paper_graphs(pipedream_dir):
    from pacml.graphs.io import load_graph_dir

    return load_graph_dir(pipedream_dir, names=PAPER_MODELS)


def two_layer_graph(steps: int = 50, act_a: float = 4e8, act_b: float = 8e8):
    """Forward A -> B (1 ms, 2 ms), backward B' -> A' (4 ms, 3 ms), join B -> B'.

    Activations act_a / act_b bytes, no parameters."""
    return training_graph(
        name="toy",
        forward_names=["node1", "node2"],
        descriptions=["A", "B"],
        forward_time_s=np.array([1e-3, 2e-3]),
        backward_time_s=np.array([3e-3, 4e-3]),
        activation_bytes=np.array([act_a, act_b]),
        parameter_bytes=np.array([0.0, 0.0]),
        forward_edges=[(0, 1)],
        last_forward=1,
        num_training_steps=steps,
    )


def chain_graph(name: str, num_ops: int, op_time_s: float, act_bytes: float, steps: int = 50):
    """A chain of ``num_ops`` forward ops of ``op_time_s`` (backward twice as long)."""
    n = num_ops
    return training_graph(
        name=name,
        forward_names=[f"node{i + 1}" for i in range(n)],
        descriptions=[f"op{i}" for i in range(n)],
        forward_time_s=np.full(n, op_time_s),
        backward_time_s=np.full(n, 2 * op_time_s),
        activation_bytes=np.full(n, act_bytes),
        parameter_bytes=np.full(n, act_bytes / 4),
        forward_edges=[(i, i + 1) for i in range(n - 1)],
        last_forward=n - 1,
        num_training_steps=steps,
    )


def toy_pool():
    """Three chain jobs of different sizes: small enough for whole-episode checks by brute force."""
    return [chain_graph("small", 3, 2e-3, 2e8), chain_graph("mid", 4, 4e-3, 4e8), chain_graph("big", 6, 5e-3, 6e8)]


TOY_CLUSTER = [
    "cluster.communication_groups=2",
    "cluster.racks_per_group=2",
    "cluster.servers_per_rack=2",
    "cluster.max_degree=8",
    "workload.offered_load=null",
    "workload.interarrival_s=300",
    "workload.horizon_s=18000",
]
"""8 workers (degrees 1, 2, 4, 8), about 60 arrivals an episode at a load near 1."""
