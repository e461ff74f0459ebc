"""A trained agent as an MLflow model (pyfunc): ``mlflow.pyfunc.load_model(uri).predict(obs)``
returns the greedy degree for observations of `pacml.env.PartitionEnv`.

The model folder holds the checkpoint (``best.pt``, with the config it was trained in) and the
job pool's graph files, so the static graph features are rebuilt when it loads. Its input is the
env's observation, batched: ``graph_index`` (int64, (B,)), ``global`` (float32, (B, D)) and
``mask`` (bool, (B, A)); its output the degree per row (int64; 0 = do not place), the one
`pacml.agent.policy.AgentPolicy` picks. The signature and an input example (the first decision
of a seeded episode) are recorded with it. Load it in this project's environment (pacml,
torch, dgl installed); the requirements it lists are pinned to that environment.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import mlflow.pyfunc
import numpy as np

INPUT_EXAMPLE_SEED = 0
"""The episode whose first decision is the model's input example."""


class AgentModel(mlflow.pyfunc.PythonModel):
    """The greedy PAC-ML agent over one job pool."""

    def load_context(self, context) -> None:
        import torch

        from pacml.agent.network import batch_graphs
        from pacml.agent.policy import AgentPolicy
        from pacml.env.features import FeatureSpace
        from pacml.runs import build_model

        policy = AgentPolicy(context.artifacts["checkpoint"])
        model = build_model(context.artifacts["graphs"], policy.cfg)
        num_actions = model.max_degree + 1
        self.net = policy._load(num_actions)
        features = FeatureSpace.for_agent(
            policy.cfg, model.graphs, model.sequential_jct_s, model.topology.num_workers, num_actions
        )
        with torch.no_grad():
            self.emb = self.net.embeddings(batch_graphs(features.graph_features))

    def predict(self, context, model_input, params=None) -> np.ndarray:
        import torch

        from pacml.agent.network import MaskedCategorical

        index = torch.as_tensor(np.asarray(model_input["graph_index"], dtype=np.int64).reshape(-1))
        glob = torch.as_tensor(np.asarray(model_input["global"], dtype=np.float32).reshape(len(index), -1))
        mask = torch.as_tensor(np.asarray(model_input["mask"], dtype=bool).reshape(len(index), -1))
        with torch.no_grad():
            logits = self.net.logits(self.emb[0], index, glob, mask)
        return MaskedCategorical(logits, mask).mode().numpy().astype(np.int64)


def first_observation(checkpoint: str | Path, graphs_dir: str | Path, dist: str) -> dict:
    """The first decision of episode `INPUT_EXAMPLE_SEED` on ``dist``, batched (B = 1)."""
    from pacml.env.partition_env import PartitionEnv
    from pacml.runs import build_model
    from pacml.train.checkpoint import checkpoint_config

    env = PartitionEnv(build_model(graphs_dir, checkpoint_config(checkpoint)), dist)
    obs, _ = env.reset(seed=INPUT_EXAMPLE_SEED)
    return {
        "graph_index": np.array([obs["graph_index"]], dtype=np.int64),
        "global": obs["global"][None].astype(np.float32),
        "mask": obs["mask"][None].astype(bool),
    }


def save_agent_model(path: str | Path, checkpoint: str | Path, graphs_dir: str | Path, dist: str) -> Path:
    """Write the agent of ``checkpoint`` over the pool in ``graphs_dir`` as an MLflow pyfunc
    model folder at ``path`` (replaced if present), with its signature and input example."""
    import os
    from importlib.metadata import version

    from mlflow.models import infer_signature

    os.environ.setdefault("MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR", "false")
    path = Path(path)
    if path.exists():
        shutil.rmtree(path)
    example = first_observation(checkpoint, graphs_dir, dist)
    artifacts = {"checkpoint": str(checkpoint), "graphs": str(graphs_dir)}

    class _Context:  # predict's output for the signature, without a round trip through disk
        pass

    _Context.artifacts = artifacts
    probe = AgentModel()
    probe.load_context(_Context)
    signature = infer_signature(example, probe.predict(None, example))
    mlflow.pyfunc.save_model(
        path,
        python_model=AgentModel(),
        artifacts=artifacts,
        signature=signature,
        input_example=example,
        pip_requirements=[f"{p}=={version(p)}" for p in ("torch", "dgl", "numpy", "mlflow", "gymnasium")],
    )
    return path
