"""One function per command: what the CLI and the workflow scripts call."""

from __future__ import annotations

import csv
import dataclasses
import json
from pathlib import Path

from pacml.config import Config, load_config
from pacml.evaluation import run_episode
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


def _cfg(config, overrides, checkpoint: str | Path | None = None) -> Config:
    """The run's config. Without a config file, an agent is run in the experiment it was
    trained in (its checkpoint's config), overrides applied on top."""
    if isinstance(config, Config):
        return config
    if config is None and checkpoint is not None:
        from pacml.train.checkpoint import checkpoint_config_data

        return load_config(None, overrides, base=checkpoint_config_data(checkpoint), base_source=str(checkpoint))
    return load_config(config, overrides)


def simulate(graphs_dir, policy: str, dist: str, seed: int, config: str | Config | None = None,
             overrides: list[str] = (), out: str | Path | None = None, checkpoint: str | None = None,
             records_csv: str | Path | None = None) -> dict:
    """Run one episode of ``policy`` on ``dist``; write its metrics (and job records) if asked."""
    cfg = _cfg(config, overrides, checkpoint)
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


def evaluate_policy(graphs_dir, policy: str, dist: str, seeds, config: str | Config | None = None,
                    overrides: list[str] = (), out: str | Path | None = None,
                    checkpoint: str | None = None, replicate: int = 0,
                    records_csv: str | Path | None = None) -> list[dict]:
    """Evaluate ``policy`` on each test seed; write the tidy rows as JSON (and every job's
    record as CSV) if asked. ``replicate`` seeds a stochastic policy's own generator."""
    cfg = _cfg(config, overrides, checkpoint)
    get_distribution(cfg.distributions, dist)
    pol = make_policy(policy, checkpoint, cfg.cluster.max_degree)
    model = build_model(graphs_dir, cfg)
    rows, records = [], []
    for seed in seeds:
        recs, metrics = run_episode(model, pol, dist, int(seed), policy_seed=(replicate, int(seed)))
        rows.append({"dist": dist, "policy": pol.name, "replicate": replicate, "seed": int(seed), **metrics})
        records += [{"dist": dist, "policy": pol.name, "replicate": replicate, "test_seed": int(seed),
                     **dataclasses.asdict(r)} for r in recs]
    if out is not None:
        _write_json(out, rows)
    if records_csv is not None:
        import pandas as pd

        Path(records_csv).parent.mkdir(parents=True, exist_ok=True)
        pd.DataFrame(records).to_csv(records_csv, index=False)
    return rows


def _progress_bar(total_desc: str, log_file=None):
    """A tqdm bar showing the validation blocking rate; returns (callback, close)."""
    from tqdm import tqdm

    bar = None

    def update(i: int, n: int, info: dict) -> None:
        nonlocal bar
        if bar is None:
            bar = tqdm(total=n, initial=i - 1, desc=total_desc, unit="update", file=log_file, mininterval=1.0)
        bar.update(1)
        post = {"sps": f"{info['sps']:.0f}"}
        if info.get("val_blocking") is not None:
            post["best_val_blocking"] = f"{info['val_blocking']:.4f}"
        bar.set_postfix(post)

    def close() -> None:
        if bar is not None:
            bar.close()

    return update, close


def _train_starts(cfg: Config, model, dist: str, seed: int, out: Path, run, progress):
    """One agent, or with ``agent.init_degree_biases`` one per start (in ``out/start<k>/``),
    keeping the best by validation: its best.pt and last.pt are copied to ``out``."""
    import shutil

    from pacml.train.ppo import train as ppo_train

    starts = cfg.agent.init_degree_biases
    if not starts:
        return ppo_train(cfg, model, dist, seed, out, log=run.log_metrics if run is not None else None,
                         progress=progress)
    results = []
    for k, bias in enumerate(starts):
        c = dataclasses.replace(cfg, agent=dataclasses.replace(cfg.agent, init_degree_bias=float(bias),
                                                               init_degree_biases=()))

        def log(metrics, step, k=k):
            if run is not None:
                run.log_metrics({f"start{k}/{name}": v for name, v in metrics.items()}, step)

        results.append(ppo_train(c, model, dist, seed, out / f"start{k}", log=log, progress=progress))
    best = min(range(len(starts)), key=lambda k: (results[k].best_blocking_rate, k))
    for name in ("best.pt", "last.pt"):
        shutil.copyfile(out / f"start{best}" / name, out / name)
    if run is not None:
        run.log_params({"selected_start": best, "selected_init_degree_bias": starts[best]})
        run.log_metrics({f"start{k}/best_validation_blocking_rate": r.best_blocking_rate
                         for k, r in enumerate(results)})
    chosen = results[best]
    chosen.wall_s = sum(r.wall_s for r in results)
    return chosen


def train(graphs_dir, dist: str, seed: int, config: str | Config | None = None, overrides: list[str] = (),
          out: str | Path = "results/train", mlflow_db: str | Path | None = None, experiment: str = "pacml",
          parents_json: str | Path | None = None, threads: int | None = None, log_file=None) -> dict:
    """Train one PAC-ML agent; write ``best.pt``, ``last.pt`` and ``curve.json`` to ``out``.

    With ``mlflow_db`` and ``parents_json`` (from the mlflow_init rule) the run is tracked as a child run
    (policy pacml, this seed) with per-update metrics and the checkpoints as artifacts.
    """
    from contextlib import nullcontext

    from pacml.config import config_hash

    cfg = _cfg(config, overrides)
    get_distribution(cfg.distributions, dist)
    if threads is not None:
        cfg = dataclasses.replace(cfg, ppo=dataclasses.replace(cfg.ppo, torch_threads=threads))
    model = build_model(graphs_dir, cfg)
    out = Path(out)
    tags = {"dist": dist, "policy": "pacml", "seed": str(seed), "kind": "train", "config_hash": config_hash(cfg)}
    tracked = mlflow_db is not None and parents_json is not None
    if tracked:
        from pacml.tracking import child_run, git_commit

        parent_run_id = json.loads(Path(parents_json).read_text())[dist]
        ctx = child_run(mlflow_db, experiment, parent_run_id, f"pacml seed={seed} (train)",
                        {**tags, "git_commit": git_commit()})
    else:
        ctx = nullcontext()
    update_bar, close_bar = _progress_bar(f"train {dist} seed={seed}", log_file)
    with ctx as run:
        if run is not None:
            run.log_params({**{f"ppo.{k}": v for k, v in dataclasses.asdict(cfg.ppo).items()},
                            **{f"agent.{k}": v for k, v in dataclasses.asdict(cfg.agent).items()},
                            "dist": dist, "seed": seed, "graphs": ",".join(g.name for g in model.graphs),
                            "interarrival_s": model.interarrival_s})
        try:
            result = _train_starts(cfg, model, dist, seed, out, run, update_bar)
        finally:
            close_bar()
        summary = {"dist": dist, "seed": seed, "best_blocking_rate": result.best_blocking_rate,
                   "best_update": result.best_update, "updates": result.updates,
                   "global_step": result.global_step, "wall_s": result.wall_s, "curve": result.curve,
                   "config_hash": config_hash(cfg)}
        _write_json(out / "curve.json", summary)
        if run is not None:
            run.log_metrics({"best_validation_blocking_rate": result.best_blocking_rate, "train_wall_s": result.wall_s},
                            result.global_step)
            for name in ("best.pt", "curve.json"):
                run.log_artifact(out / name)
    return summary


def evaluate_tracked(graphs_dir, policy: str, dist: str, seeds, config: str | Config | None = None,
                     overrides: list[str] = (), out: str | Path | None = None, checkpoint: str | None = None,
                     replicate: int = 0, records_csv: str | Path | None = None,
                     mlflow_db: str | Path | None = None, experiment: str = "pacml",
                     parents_json: str | Path | None = None) -> list[dict]:
    """`evaluate_policy`, tracked as one child run (kind evaluate, this policy and replicate)
    under the distribution's parent run when a store is given; metrics are test-seed means."""
    cfg = _cfg(config, overrides)
    rows = evaluate_policy(graphs_dir, policy, dist, seeds, cfg, (), out, checkpoint, replicate, records_csv)
    if mlflow_db is not None and parents_json is not None:
        import numpy as np

        from pacml.config import config_hash
        from pacml.tracking import child_run, git_commit

        parent = json.loads(Path(parents_json).read_text())[dist]
        tags = {"dist": dist, "policy": policy, "seed": str(replicate), "kind": "evaluate",
                "config_hash": config_hash(cfg), "git_commit": git_commit()}
        with child_run(mlflow_db, experiment, parent, f"{policy} seed={replicate} (eval)", tags) as run:
            run.log_params({"policy": policy, "dist": dist, "replicate": replicate,
                            "test_seeds": ",".join(str(s) for s in seeds), "checkpoint": checkpoint or ""})
            keys = [k for k, v in rows[0].items() if isinstance(v, (int, float)) and k not in ("seed", "replicate")]
            run.log_metrics({k: float(np.nanmean([r[k] for r in rows])) for k in keys})
            for path in (out, records_csv):
                if path is not None:
                    run.log_artifact(path)
    return rows


def config_for_workflow(snakemake_config: dict) -> Config:
    """The typed config of a workflow job (profile applied)."""
    from pacml.config import config_from_dict

    return config_from_dict(snakemake_config, "config.yaml")


def build_graphs(cfg: Config, out_paths: list[str]) -> list[Path]:
    """The ``graphs`` rule: built-in profiles or imported PipeDream profiles, one JSON per model."""
    from pacml.graphs.commands import import_pipedream_dir, profile_models

    out_dir = Path(out_paths[0]).parent
    steps = cfg.workload.num_training_steps
    if cfg.graphs.source == "builtin":
        written = profile_models(list(cfg.graphs.models), out_dir, steps)
    else:
        written = import_pipedream_dir(cfg.graphs.pipedream_dir, out_dir, steps, list(cfg.graphs.models) or None)
    missing = [p for p in out_paths if Path(p) not in written]
    assert not missing, f"graphs not written: {missing}"
    return written


def init_tracking(db: str | Path, experiment: str, dists: list[str], out_json: str | Path) -> dict:
    """The ``mlflow_init`` rule: create the store once; record the parent run ids."""
    from pacml.tracking import git_commit, init_store

    parents = init_store(db, experiment, dists, Path(db).parent / "artifacts", {"git_commit": git_commit()})
    _write_json(out_json, parents)
    return parents


def setup_job(snakemake):
    """For workflow scripts: send stdout and stderr to the rule's log; pin torch's threads."""
    import sys

    log = open(snakemake.log[0], "w", buffering=1)
    sys.stdout = sys.stderr = log
    import torch

    torch.set_num_threads(snakemake.threads)
    return log


def load_sweep(graphs_dir, cfg: Config, dist: str, offered_loads: list[float], policies: list[str],
               seeds, checkpoint: str | Path | None, out_csv: str | Path) -> list[dict]:
    """Blocking, throughput and JCT as the offered load (hence the interarrival time) sweeps."""
    import pandas as pd

    rows = []
    for load in offered_loads:
        c = dataclasses.replace(cfg, workload=dataclasses.replace(cfg.workload, offered_load=float(load)))
        model = build_model(graphs_dir, c)
        for name in policies:
            pol = make_policy(name, str(checkpoint) if name == "pacml" else None, c.cluster.max_degree)
            for seed in seeds:
                _, metrics = run_episode(model, pol, dist, int(seed))
                rows.append({"dist": dist, "policy": pol.name, "offered_load": float(load),
                             "interarrival_s": model.interarrival_s, "seed": int(seed), **metrics})
    Path(out_csv).parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_csv(out_csv, index=False)
    return rows


def write_report(snakefile: str, config: dict, targets: list[str], out_html: str | Path) -> None:
    """The Snakemake HTML report of ``targets``, for this run's exact config (overrides kept)."""
    import subprocess
    import sys
    import tempfile

    import yaml

    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as fh:
        yaml.safe_dump(dict(config), fh)
    cmd = [sys.executable, "-m", "snakemake", "--snakefile", str(snakefile), "--directory", ".",
           "--report", str(out_html), "--nolock", "--configfile", fh.name, "--cores", "1", *targets]
    subprocess.run(cmd, check=True)
    Path(fh.name).unlink()


def check_workflow_inputs(cfg: Config) -> None:
    """Checks the workflow makes before any job: inputs named by the config exist."""
    from pacml.errors import ConfigError

    if cfg.graphs.source == "pipedream" and not Path(cfg.graphs.pipedream_dir).is_dir():
        raise ConfigError("graphs.pipedream_dir", cfg.graphs.pipedream_dir, "no such directory", "config.yaml")
    figures = cfg.extra.get("figures", {})
    dist = figures.get("load_sweep_dist")
    if dist is not None and dist not in cfg.workflow.distributions:
        raise ConfigError("figures.load_sweep_dist", dist,
                          f"must be one of workflow.distributions {list(cfg.workflow.distributions)}", "config.yaml")
