"""MLflow tracking: the only module that imports mlflow.

Layout (what the UI shows): one experiment per workflow (``tracking.experiment``); one
parent run per JCT distribution (tag ``dist``), created once by the workflow's
``mlflow_init`` rule; one child run per (policy, seed) with tags ``dist``, ``policy``,
``seed``, ``kind`` (train or evaluate), ``config_hash`` and ``git_commit``; per-update
training metrics (the names of `pacml.sim.metrics.METRICS` and the ``losses/``,
``charts/``, ``perf/`` keys of training) and the checkpoints and evaluation files as
artifacts. The store is SQLite and must be created by one process before parallel jobs
write to it (concurrent first creation corrupts its migrations).
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol


class Tracker(Protocol):
    """Where a job's params, metrics and files go: an MLflow run, or nowhere."""

    def log_params(self, params: dict) -> None: ...

    def log_metrics(self, metrics: dict, step: int = 0) -> None: ...

    def log_artifact(self, path: str | Path, artifact_path: str | None = None) -> None: ...


class NullTracker:
    """A `Tracker` that records nothing (untracked CLI runs, tests)."""

    def log_params(self, params: dict) -> None:
        pass

    def log_metrics(self, metrics: dict, step: int = 0) -> None:
        pass

    def log_artifact(self, path: str | Path, artifact_path: str | None = None) -> None:
        pass


@dataclass(frozen=True)
class RunStore:
    """A workflow's MLflow store: the SQLite file, the experiment and the parent-run ids
    written by the ``mlflow_init`` rule."""

    db: str | Path
    experiment: str
    parents_json: str | Path

    def parent(self, dist: str) -> str:
        return json.loads(Path(self.parents_json).read_text())[dist]


@contextmanager
def job_run(store: RunStore | None, dist: str, name: str, tags: dict[str, str]) -> Iterator[Tracker]:
    """The job's child run under its distribution's parent, or a `NullTracker` without a store."""
    if store is None:
        yield NullTracker()
        return
    with child_run(store.db, store.experiment, store.parent(dist), name, {**tags, "git_commit": git_commit()}) as run:
        yield run


def sqlite_uri(db_path: str | Path) -> str:
    return f"sqlite:///{Path(db_path).resolve()}"


def git_commit(cwd: str | Path = ".") -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True, timeout=10)
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def _mlflow(uri: str):
    os.environ.setdefault("MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR", "false")
    import mlflow

    mlflow.set_tracking_uri(uri)
    return mlflow


def init_store(
    db_path: str | Path,
    experiment: str,
    dists: list[str],
    artifact_root: str | Path,
    tags: dict[str, str] | None = None,
) -> dict[str, str]:
    """Create the store, the experiment and one parent run per distribution (idempotent:
    existing parents are reused). Returns {dist: parent run id}."""
    Path(db_path).parent.mkdir(parents=True, exist_ok=True)
    mlflow = _mlflow(sqlite_uri(db_path))
    client = mlflow.MlflowClient()
    exp = client.get_experiment_by_name(experiment)
    if exp is None:
        exp_id = client.create_experiment(experiment, artifact_location=Path(artifact_root).resolve().as_uri())
    else:
        exp_id = exp.experiment_id
    parents = {}
    for dist in dists:
        found = client.search_runs([exp_id], filter_string=f"tags.dist = '{dist}' and tags.kind = 'parent'")
        if found:
            parents[dist] = found[0].info.run_id
            continue
        run = client.create_run(exp_id, run_name=dist, tags={"dist": dist, "kind": "parent", **(tags or {})})
        client.set_terminated(run.info.run_id)
        parents[dist] = run.info.run_id
    return parents


class Run:
    """A child run: log params, metrics (with a step), artifacts. Retries 'database is locked'."""

    def __init__(self, mlflow, run_id: str):
        self._mlflow, self.run_id = mlflow, run_id
        self._client = mlflow.MlflowClient()

    def _retry(self, fn, *args, **kwargs):
        for attempt in range(20):
            try:
                return fn(*args, **kwargs)
            except Exception as exc:  # sqlite lock contention between parallel jobs
                if "locked" not in str(exc) or attempt == 19:
                    raise
                time.sleep(0.2 * (attempt + 1))

    def log_params(self, params: dict) -> None:
        from mlflow.entities import Param

        items = [Param(str(k), str(v)[:6000]) for k, v in params.items()]
        for i in range(0, len(items), 100):
            self._retry(self._client.log_batch, self.run_id, params=items[i : i + 100])

    def log_metrics(self, metrics: dict, step: int = 0) -> None:
        from mlflow.entities import Metric

        now = int(time.time() * 1000)
        items = [
            Metric(k, float(v), now, int(step)) for k, v in metrics.items() if isinstance(v, (int, float)) and v == v
        ]
        if items:
            self._retry(self._client.log_batch, self.run_id, metrics=items)

    def log_artifact(self, path: str | Path, artifact_path: str | None = None) -> None:
        if Path(path).exists():
            self._retry(self._client.log_artifact, self.run_id, str(path), artifact_path)


@contextmanager
def child_run(
    db_path: str | Path, experiment: str, parent_run_id: str, name: str, tags: dict[str, str]
) -> Iterator[Run]:
    """A child run under ``parent_run_id`` (the UI nests it through ``mlflow.parentRunId``).

    If the same job (parent, dist, policy, seed, kind) left an unfinished run -- the job was
    killed -- that run is continued instead of a second one being created."""
    mlflow = _mlflow(sqlite_uri(db_path))
    client = mlflow.MlflowClient()
    exp = client.get_experiment_by_name(experiment)
    if exp is None:
        raise RuntimeError(
            f"MLflow experiment {experiment!r} does not exist in {db_path}: run the mlflow_init rule first"
        )
    all_tags = {"mlflow.parentRunId": parent_run_id, **{k: str(v) for k, v in tags.items()}}
    # a job killed mid-run left its run unfinished: a rerun of that job continues it
    query = " and ".join(
        f"tags.`{k}` = '{v}'"
        for k, v in all_tags.items()
        if k in ("mlflow.parentRunId", "dist", "policy", "seed", "kind")
    )
    unfinished = [
        r
        for r in client.search_runs([exp.experiment_id], filter_string=query)
        if r.info.status in ("RUNNING", "FAILED", "KILLED")
    ]
    if unfinished:
        run = unfinished[0]
        client.update_run(run.info.run_id, status="RUNNING")
    else:
        run = client.create_run(exp.experiment_id, run_name=name, tags=all_tags)
    status = "FAILED"
    try:
        yield Run(mlflow, run.info.run_id)
        status = "FINISHED"
    finally:
        client.set_terminated(run.info.run_id, status=status)
