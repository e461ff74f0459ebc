"""One function per command: what the CLI and the workflow scripts call."""

from __future__ import annotations

import csv
import dataclasses
import json
from pathlib import Path

from pacml.config import Config, load_config
from pacml.evaluation import evaluate, run_episode
from pacml.graphs.io import load_graph_dir
from pacml.policies.base import make_policy
from pacml.sim.engine import ClusterModel
from pacml.sim.workload import get_distribution


def build_model(graphs_dir: str | Path, cfg: Config) -> ClusterModel:
    """The cluster model over the config's models (``graphs.models``) found in ``graphs_dir``."""
    graphs = load_graph_dir(graphs_dir, names=cfg.graphs.models or None,
                            num_training_steps=cfg.workload.num_training_steps)
    return ClusterModel(graphs, cfg)


def _write_json(path: str | Path, data) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=1, default=float) + "\n")
    tmp.replace(path)


def simulate(graphs_dir, policy: str, dist: str, seed: int, config: str | None = None,
             overrides: list[str] = (), out: str | Path | None = None, checkpoint: str | None = None,
             records_csv: str | Path | None = None) -> dict:
    """Run one episode of ``policy`` on ``dist``; write its metrics (and job records) if asked."""
    cfg = load_config(config, overrides)
    get_distribution(cfg.distributions, dist)
    pol = make_policy(policy, checkpoint, cfg.cluster.max_degree)
    model = build_model(graphs_dir, cfg)
    records, metrics = run_episode(model, pol, dist, seed)
    result = {"dist": dist, "policy": pol.name, "seed": seed, "offered_load": model.offered_load,
              "interarrival_s": model.interarrival_s, **metrics}
    if out is not None:
        _write_json(out, result)
    if records_csv is not None:
        Path(records_csv).parent.mkdir(parents=True, exist_ok=True)
        with open(records_csv, "w", newline="") as fh:
            fields = [f.name for f in dataclasses.fields(records[0])]
            w = csv.DictWriter(fh, fieldnames=fields)
            w.writeheader()
            w.writerows(dataclasses.asdict(r) for r in records)
    return result


def evaluate_policy(graphs_dir, policy: str, dist: str, seeds, config: str | None = None,
                    overrides: list[str] = (), out: str | Path | None = None,
                    checkpoint: str | None = None) -> list[dict]:
    """Evaluate ``policy`` on each test seed; write the tidy rows as JSON if asked."""
    cfg = load_config(config, overrides)
    get_distribution(cfg.distributions, dist)
    pol = make_policy(policy, checkpoint, cfg.cluster.max_degree)
    model = build_model(graphs_dir, cfg)
    rows = evaluate(model, pol, dist, list(seeds))
    if out is not None:
        _write_json(out, rows)
    return rows
