"""Run a policy on seeded episodes and write what it did: the one evaluation path.

`pacml simulate`, `pacml evaluate`, the workflow's evaluate, select and load-sweep rules
all come here. One seeding convention everywhere: episode ``seed`` draws the environment
from ``SeedSequence(seed)`` and a stochastic policy from ``SeedSequence((replicate, seed))``
(`pacml.evaluation.episode_rngs`), so `simulate` of one seed equals that seed's row of
`evaluate` with the same replicate (default 0).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from pacml.config import Config, load_config
from pacml.evaluation import run_episode
from pacml.graphs.io import load_graph_dir
from pacml.policies.base import PolicyContext, Selection, make_policy
from pacml.sim.engine import ClusterModel
from pacml.sim.workload import get_distribution
from pacml.tracking import RunStore, job_run, log_config


def build_model(graphs_dir: str | Path, cfg: Config) -> ClusterModel:
    """The cluster model over the config's models (``graphs.models``) found in ``graphs_dir``."""
    graphs = load_graph_dir(
        graphs_dir, names=cfg.graphs.models or None, num_training_steps=cfg.workload.num_training_steps
    )
    trace = None
    if cfg.trace.path is not None:
        from pacml.trace_csv import read_trace

        trace = read_trace(cfg.trace)
    return ClusterModel(graphs, cfg, trace=trace)


def write_json(path: str | Path, data) -> None:
    """Write atomically (a killed job leaves no half file)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=1, default=float) + "\n")
    tmp.replace(path)


def resolve_config(config, overrides=(), checkpoint: str | Path | None = None) -> Config:
    """The run's config. Without a config file, an agent is run in the experiment it was
    trained in (its checkpoint's config), overrides applied on top."""
    if isinstance(config, Config):
        return config
    if config is None and checkpoint is not None:
        from pacml.train.checkpoint import checkpoint_config_data

        return load_config(None, overrides, base=checkpoint_config_data(checkpoint), base_source=str(checkpoint))
    return load_config(config, overrides)


def read_selection(path: str | Path | None) -> Selection | None:
    """The choices the select rule made (its JSON), or None."""
    if path is None:
        return None
    data = json.loads(Path(path).read_text())
    base = data["rollout_base"]
    return Selection(int(data["fixed_degree"]), None if base is None else str(base))


def evaluate(
    graphs_dir,
    policy: str,
    dist: str,
    seeds,
    config=None,
    overrides=(),
    out=None,
    checkpoint: str | None = None,
    replicate: int = 0,
    records_csv=None,
    store: RunStore | None = None,
    selection: Selection | None = None,
) -> list[dict]:
    """Run ``policy`` on each test seed; write the rows as JSON and every job's record as CSV
    if asked; with a ``store``, track it as one child run (metrics: test-seed means)."""
    cfg = resolve_config(config, overrides, checkpoint)
    get_distribution(cfg.distributions, dist)
    model = build_model(graphs_dir, cfg)
    pol = make_policy(policy, checkpoint, cfg.cluster.max_degree, PolicyContext(model, dist, selection))
    rows, records = play(model, pol, dist, seeds, replicate)
    write_evaluation(rows, records, out, records_csv)
    _track(store, cfg, policy, dist, replicate, seeds, rows, checkpoint, (out, records_csv))
    return rows


def play(model, pol, dist: str, seeds, replicate: int) -> tuple[list[dict], list[dict]]:
    """``pol`` on each test seed (its generator seeded by ``(replicate, seed)``): the metric rows
    and every job's record, both labelled with the replicate."""
    rows, records = [], []
    for seed in seeds:
        recs, metrics = run_episode(model, pol, dist, int(seed), policy_seed=(replicate, int(seed)))
        rows.append(
            {
                "dist": dist,
                "policy": pol.name,
                "replicate": replicate,
                "seed": int(seed),
                "offered_load": model.offered_load,
                "interarrival_s": model.interarrival_s,
                **metrics,
            }
        )
        records += [
            {"dist": dist, "policy": pol.name, "replicate": replicate, "test_seed": int(seed), **dataclasses.asdict(r)}
            for r in recs
        ]
    return rows, records


def write_evaluation(rows: list[dict], records: list[dict], out=None, records_csv=None) -> None:
    """The rows as JSON and the records as CSV, each where asked."""
    if out is not None:
        write_json(out, rows)
    if records_csv is not None:
        import pandas as pd

        Path(records_csv).parent.mkdir(parents=True, exist_ok=True)
        pd.DataFrame(records).to_csv(records_csv, index=False)


def _track(store, cfg: Config, policy: str, dist: str, replicate: int, seeds, rows, checkpoint, files) -> None:
    if store is None:
        return
    import numpy as np

    from pacml.config import config_hash
    from pacml.sim.metrics import METRICS

    tags = {
        "dist": dist,
        "policy": policy,
        "seed": str(replicate),
        "kind": "evaluate",
        "config_hash": config_hash(cfg),
        "scale": cfg.workflow.scale,
        "graph_source": cfg.graphs.source,
    }
    with job_run(store, dist, f"eval {policy} seed={replicate}", tags) as run:
        log_config(run, cfg)
        run.log_params(
            {
                "policy": policy,
                "dist": dist,
                "replicate": replicate,
                "test_seeds": ",".join(str(s) for s in seeds),
                "checkpoint": checkpoint or "",
            }
        )
        run.log_metrics({k: float(np.nanmean([r[k] for r in rows])) for k in METRICS})
        for r in rows:  # each test episode too, its seed as the step: the UI charts them seed by seed
            run.log_metrics({f"test_episode/{k}": float(r[k]) for k in METRICS}, step=int(r["seed"]))
        for path in files:
            if path is not None:
                run.log_artifact(path)


def simulate(
    graphs_dir,
    policy: str,
    dist: str,
    seed: int,
    config=None,
    overrides=(),
    out=None,
    checkpoint: str | None = None,
    records_csv=None,
) -> dict:
    """One episode of ``policy`` on ``dist``: `evaluate` on one seed, its row written as a mapping."""
    (row,) = evaluate(graphs_dir, policy, dist, [seed], config, overrides, None, checkpoint, 0, records_csv)
    if out is not None:
        write_json(out, row)
    return row


def select_on_validation(graphs_dir, cfg: Config, dist: str, out_json: str | Path, tune_base: bool = True) -> dict:
    """The ``select`` rule: best_fixed's degree and the planners' base policy for ``dist``,
    chosen on ``workflow.validation_seeds`` (never test seeds), with the rates behind them
    (``tune_base``: see `pacml.policies.planning.select`)."""
    from pacml.policies.planning import select

    seeds = list(cfg.workflow.validation_seeds)
    chosen, report = select(build_model(graphs_dir, cfg), dist, seeds, tune_base)
    result = {
        "dist": dist,
        "fixed_degree": chosen.fixed_degree,
        "rollout_base": chosen.rollout_base,
        "validation_seeds": seeds,
        **report,
    }
    write_json(out_json, result)
    return result


def load_sweep(
    graphs_dir,
    cfg: Config,
    dist: str,
    offered_loads: list[float],
    policies: list[str],
    seeds,
    checkpoint: str | Path | None,
    out_csv: str | Path,
) -> list[dict]:
    """Blocking, throughput and JCT as the offered load (hence the interarrival time) sweeps."""
    import pandas as pd

    rows = []
    for load in offered_loads:
        c = dataclasses.replace(cfg, workload=dataclasses.replace(cfg.workload, offered_load=float(load)))
        for name in policies:
            ckpt = str(checkpoint) if name == "pacml" else None
            for r in evaluate(graphs_dir, name, dist, seeds, c, checkpoint=ckpt):
                rows.append({**r, "offered_load": float(load)})
    Path(out_csv).parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).drop(columns=["replicate"]).to_csv(out_csv, index=False)
    return rows
