"""One training job: an agent from one or several starts, its progress bar and its run record.

`train_agent` is what `pacml train` and the workflow's train rule call. With several
``agent.init_degree_biases``, or with ``imitation.alternative_teachers``, one agent is trained
from each start (in ``out/start<k>/``) and the best by validation is kept (its best.pt and
last.pt are copied to ``out``).
"""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

from pacml.config import Config, config_hash
from pacml.runs import build_model, resolve_config, write_json
from pacml.sim.workload import get_distribution
from pacml.tracking import RunStore, Tracker, job_run, log_config
from pacml.train.host import host_record
from pacml.train.lock import training_lock


def progress_bar(desc: str, log_file=None):
    """A tqdm bar showing the best validation blocking rate; returns (callback, close)."""
    from tqdm import tqdm

    bar = None

    def update(i: int, n: int, info: dict) -> None:
        nonlocal bar
        if bar is None:
            bar = tqdm(total=n, initial=i - 1, desc=desc, unit="update", file=log_file, mininterval=1.0)
        bar.update(1)
        post = {"sps": f"{info['sps']:.0f}"}
        if info.get("val_blocking") is not None:
            post["best_val_blocking"] = f"{info['val_blocking']:.4f}"
        bar.set_postfix(post)

    def close() -> None:
        if bar is not None:
            bar.close()

    return update, close


def starts_of(cfg: Config) -> list[tuple[Config, dict]]:
    """The configs an agent is trained from, one a start, each with what sets it apart: the
    degree biases of ``agent.init_degree_biases``, or the teacher of ``imitation`` and each
    of ``imitation.alternative_teachers`` (the config refuses both at once)."""
    a, im = cfg.agent, cfg.imitation
    if im.alternative_teachers:
        teachers = [(im.teacher_base_policy, im.teacher_horizon, im.teacher_futures)]
        teachers += [(t.base_policy, t.horizon, t.futures) for t in im.alternative_teachers]
        return [
            (
                dataclasses.replace(
                    cfg,
                    imitation=dataclasses.replace(
                        im, teacher_base_policy=b, teacher_horizon=h, teacher_futures=k, alternative_teachers=()
                    ),
                ),
                {"teacher_base_policy": b, "teacher_horizon": h, "teacher_futures": k},
            )
            for b, h, k in teachers
        ]
    if len(a.init_degree_biases) > 1:
        return [
            (
                dataclasses.replace(cfg, agent=dataclasses.replace(a, init_degree_biases=(float(bias),))),
                {"init_degree_bias": float(bias)},
            )
            for bias in a.init_degree_biases
        ]
    return [(cfg, {})]


def train_from_starts(cfg: Config, model, dist: str, seed: int, out: Path, tracker: Tracker, progress, selection=None):
    """Train from every start (`starts_of`; one: in ``out`` itself) and keep the best by
    validation (an alternative teacher's only if it is ``imitation.alternative_margin`` lower)."""
    from pacml.train.ppo import train as ppo_train

    starts = starts_of(cfg)
    if len(starts) == 1:
        return ppo_train(cfg, model, dist, seed, out, log=tracker.log_metrics, progress=progress, selection=selection)
    results = []
    for k, (c, _) in enumerate(starts):

        def log(metrics, step, k=k):
            tracker.log_metrics({f"start{k}/{name}": v for name, v in metrics.items()}, step)

        results.append(
            ppo_train(c, model, dist, seed, out / f"start{k}", log=log, progress=progress, selection=selection)
        )
    # an alternative teacher's student must beat the first teacher's by the margin
    margin = cfg.imitation.alternative_margin if cfg.imitation.alternative_teachers else 0.0
    best = min(range(len(starts)), key=lambda k: (results[k].best_blocking_rate + (margin if k else 0.0), k))
    for name in ("best.pt", "last.pt"):
        shutil.copyfile(out / f"start{best}" / name, out / name)
    tracker.log_params({"selected_start": best, **{f"selected_{key}": str(v) for key, v in starts[best][1].items()}})
    tracker.log_metrics(
        {f"start{k}/best_validation_blocking_rate": r.best_blocking_rate for k, r in enumerate(results)}
    )
    chosen = results[best]
    chosen.wall_s = sum(r.wall_s for r in results)
    chosen.starts = [
        {**settings, "best_blocking_rate": r.best_blocking_rate, "kept": k == best}
        for k, ((_, settings), r) in enumerate(zip(starts, results))
    ]
    return chosen


def train_agent(
    graphs_dir,
    dist: str,
    seed: int,
    config=None,
    overrides=(),
    out: str | Path = "results/train",
    store: RunStore | None = None,
    threads: int | None = None,
    log_file=None,
    selection=None,
) -> dict:
    """Train one PAC-ML agent; write ``best.pt``, ``last.pt`` and ``curve.json`` (the validation
    curve and every update's training metrics, ``history``) to ``out``.

    With a ``store`` the run is tracked as a child run (policy pacml, this seed) with
    per-update metrics and the checkpoints as artifacts.
    """
    cfg = resolve_config(config, overrides)
    get_distribution(cfg.distributions, dist)
    if threads is not None:
        cfg = dataclasses.replace(cfg, ppo=dataclasses.replace(cfg.ppo, torch_threads=threads))
    model = build_model(graphs_dir, cfg)
    out = Path(out)
    host = host_record()  # what sets the weights' last digits (pacml.train.host)
    tags = {
        "dist": dist,
        "policy": "pacml",
        "seed": str(seed),
        "kind": "train",
        "config_hash": config_hash(cfg),
        "scale": cfg.workflow.scale,
        "graph_source": cfg.graphs.source,
        # tags, not params: a killed run continued on another host records that host
        **{f"host.{k}": v for k, v in host.items()},
    }
    update_bar, close_bar = progress_bar(f"train {dist} seed={seed}", log_file)
    # the folder's lock first: a second trainer stops here, before it touches the MLflow run
    with (
        training_lock(out) as owner,
        job_run(store, dist, f"train pacml seed={seed}", tags, owner, system_metrics=True) as run,
    ):
        log_config(run, cfg)
        run.log_params(
            {
                "dist": dist,
                "seed": seed,
                "graphs": ",".join(g.name for g in model.graphs),
                "interarrival_s": model.interarrival_s,
            }
        )
        try:
            result = train_from_starts(cfg, model, dist, seed, out, run, update_bar, selection)
        finally:
            close_bar()
        summary = {
            "dist": dist,
            "seed": seed,
            "best_blocking_rate": result.best_blocking_rate,
            "best_update": result.best_update,
            "updates": result.updates,
            "global_step": result.global_step,
            "wall_s": result.wall_s,
            "curve": result.curve,
            "history": result.history,
            **({"starts": result.starts} if result.starts else {}),
            "config_hash": config_hash(cfg),
            "host": host,
        }
        write_json(out / "curve.json", summary)
        run.log_metrics(
            {"best_validation_blocking_rate": result.best_blocking_rate, "train_wall_s": result.wall_s},
            result.global_step,
        )
        for name in ("best.pt", "last.pt", "curve.json"):
            run.log_artifact(out / name)
        if store is not None:
            log_agent_model(run, out / "best.pt", graphs_dir, dist)
    return summary


def log_agent_model(run, checkpoint: Path, graphs_dir, dist: str) -> None:
    """The best agent as an MLflow pyfunc model under the run's ``agent/`` artifacts
    (`pacml.agent.mlflow_model`): ``mlflow.pyfunc.load_model("runs:/<run id>/agent")``."""
    import tempfile

    from pacml.agent.mlflow_model import save_agent_model

    with tempfile.TemporaryDirectory() as tmp:
        run.log_artifacts(save_agent_model(Path(tmp) / "agent", checkpoint, graphs_dir, dist), "agent")
