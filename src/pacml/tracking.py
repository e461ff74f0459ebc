"""MLflow tracking: the one module that talks to a tracking store (`pacml.agent.mlflow_model`
only builds the agent's model folder that a training run logs here).

Layout (what the UI shows): one experiment per workflow (``tracking.experiment``); one
parent run per JCT distribution (tag ``dist``), created once by the workflow's
``mlflow_init`` rule; one child run per (policy, seed) with tags ``dist``, ``policy``,
``seed``, ``kind`` (train or evaluate), ``config_hash``, ``scale``, ``graph_source``, ``git_commit``
and MLflow's context tags (user, source, ``mlflow.source.git.commit``); the whole resolved
config as params and as a ``config.yaml`` artifact; the parent carries its distribution's
summary (``<policy>.<metric>`` means and ``summary.csv``); per-update
training metrics (the names of `pacml.sim.metrics.METRICS` and the ``losses/``,
``charts/``, ``perf/`` keys of training, and MLflow's ``system/`` metrics), each test episode's
metrics (``test_episode/<metric>`` at step = seed), and the checkpoints, the agent as a pyfunc
model (``agent/``) and the evaluation files as artifacts. The store is a SQLite file
(``tracking.db``; created by one process before parallel jobs write to it: concurrent first
creation corrupts its migrations) or any MLflow tracking URI (``tracking.uri``, e.g. an ``mlflow server`` that many nodes write to); a store below is
either, as `store_uri` reads it.
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

    def log_artifacts(self, folder: str | Path, artifact_path: str | None = None) -> None: ...


class NullTracker:
    """A `Tracker` that records nothing (untracked CLI runs, tests)."""

    def log_params(self, params: dict) -> None:
        pass

    def log_metrics(self, metrics: dict, step: int = 0) -> None:
        pass

    def log_artifact(self, path: str | Path, artifact_path: str | None = None) -> None:
        pass

    def log_artifacts(self, folder: str | Path, artifact_path: str | None = None) -> None:
        pass


@dataclass(frozen=True)
class RunStore:
    """A workflow's MLflow store (a SQLite file or a tracking URI: `store_uri`), the experiment
    and the parent-run ids written by the ``mlflow_init`` rule."""

    store: str | Path
    experiment: str
    parents_json: str | Path

    def parent(self, dist: str) -> str:
        return json.loads(Path(self.parents_json).read_text())[dist]


def log_to_parent(store: RunStore | None, dist: str, metrics: dict, files=()) -> None:
    """The distribution's parent run carries its summary: ``metrics`` (e.g. ``pacml.blocking_rate``)
    and ``files`` as artifacts (nothing without a store). Logged again on each aggregation."""
    if store is None:
        return
    run = Run(_mlflow(store_uri(store.store)), store.parent(dist))
    run.log_metrics(metrics)
    for path in files:
        run.log_artifact(path)


SYSTEM_METRICS_INTERVAL_S = 10.0
"""How often a training run samples its machine (MLflow's ``system/`` metrics: CPU, memory,
disk, network); `MLFLOW_SYSTEM_METRICS_SAMPLING_INTERVAL` overrides it."""


@contextmanager
def job_run(
    store: RunStore | None,
    dist: str,
    name: str,
    tags: dict[str, str],
    owner: dict | None = None,
    system_metrics: bool = False,
) -> Iterator[Tracker]:
    """The job's child run under its distribution's parent, or a `NullTracker` without a store.
    ``owner`` (host, pid, start time: `pacml.train.lock`) is recorded on the run; without it,
    this process is the owner. ``system_metrics``: MLflow samples the machine every
    `SYSTEM_METRICS_INTERVAL_S` while the run lasts (``system/cpu_utilization_percentage``, ...)."""
    if store is None:
        yield NullTracker()
        return
    owner = owner or this_process()
    commit = git_commit()
    run_tags = {
        **tags,
        "git_commit": commit,
        **context_tags(f"pacml {tags.get('kind', 'job')}", commit),
        **{f"owner.{k}": str(v) for k, v in owner.items()},
    }
    with child_run(store.store, store.experiment, store.parent(dist), name, run_tags) as run:
        if not system_metrics:
            yield run
            return
        from mlflow.system_metrics.system_metrics_monitor import SystemMetricsMonitor

        monitor = SystemMetricsMonitor(
            run.run_id, sampling_interval=SYSTEM_METRICS_INTERVAL_S, tracking_uri=store_uri(store.store)
        )
        monitor.start()
        try:
            yield run
        finally:
            monitor.finish()


def context_tags(source: str, commit: str | None = None) -> dict[str, str]:
    """MLflow's own context tags, as its fluent API sets them: the user, the source (``source``,
    a local run) and, when known, the git commit."""
    import getpass

    try:
        user = getpass.getuser()
    except (KeyError, OSError):  # no login name (a container without one)
        user = "unknown"
    tags = {"mlflow.user": user, "mlflow.source.type": "LOCAL", "mlflow.source.name": source}
    if commit and commit != "unknown":
        tags["mlflow.source.git.commit"] = commit
    return tags


def config_params(cfg) -> dict[str, str]:
    """The whole resolved config (a `pacml.config.Config`) as flat dotted MLflow params, less the
    experiments and scales (their own sections), where the run is recorded (``tracking``: the
    same run in another store is the same run) and what never changes a number (threads)."""
    from pacml.config import NOT_RESULT_KEYS

    def flat(node, prefix: str):
        if isinstance(node, dict) and node:
            for k, v in node.items():
                yield from flat(v, f"{prefix}.{k}" if prefix else str(k))
        else:
            yield prefix, ",".join(map(str, node)) if isinstance(node, (list, tuple)) else str(node)

    tree = {k: v for k, v in _logged_config(cfg).items() if k != "experiments"}
    return {k: v for k, v in flat(tree, "") if k not in NOT_RESULT_KEYS}


def _logged_config(cfg) -> dict:
    """The config tree a run records: without its scales (``extra``) and ``tracking``."""
    import dataclasses

    return {k: v for k, v in dataclasses.asdict(cfg).items() if k not in ("extra", "tracking")}


def log_config(run: Tracker, cfg) -> None:
    """Log ``cfg`` on ``run``: every key as a param and the tree as a ``config.yaml`` artifact
    (both without ``tracking``: `config_params`)."""
    import tempfile

    import yaml

    run.log_params(config_params(cfg))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "config.yaml"
        path.write_text(yaml.safe_dump(json.loads(json.dumps(_logged_config(cfg))), sort_keys=False))
        run.log_artifact(path)


def this_process() -> dict:
    """The owner record of this process: host, pid and start time."""
    import datetime
    import socket

    started = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    return {"host": socket.gethostname(), "pid": os.getpid(), "started": started}


def _owner_alive(tags: dict[str, str]) -> bool:
    """Whether the process that owns a run still lives (only knowable on this host)."""
    import socket

    pid = tags.get("owner.pid", "")
    if tags.get("owner.host") != socket.gethostname() or not pid.isdigit() or int(pid) == os.getpid():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def relocate_artifacts(db: str | Path) -> list[tuple[str, str, str]]:
    """Point a SQLite store's artifact locations at the ``artifacts/`` folder beside it now.

    MLflow records every artifact location as an absolute ``file://`` URI (it resolves a
    relative one when the experiment is created), so moving or copying ``results/`` leaves the
    UI's artifact links on the old place. This rewrites each experiment's location (the
    workflow's layout: ``artifacts/`` beside the database, `pacml.workflow.init_tracking`) and its
    runs' (and logged models') artifact URIs from the old folder to the one beside the database
    now, in one transaction. Returns (experiment, old, new) for each experiment moved; none when
    nothing moved. Only local (``file:``) locations are touched."""
    import sqlite3

    from pacml.errors import PacmlError

    db = Path(db)
    if not db.is_file():
        raise PacmlError(f"{db}: no MLflow SQLite store there (tracking.db)")
    new = (db.parent / "artifacts").resolve().as_uri()
    moved = []
    with sqlite3.connect(db) as con:
        tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if not {"experiments", "runs"} <= tables:
            raise PacmlError(f"{db}: not an MLflow store (no experiments and runs tables)")
        for exp_id, name, old in con.execute(
            "SELECT experiment_id, name, artifact_location FROM experiments"
        ).fetchall():
            if not old or not old.startswith("file:"):
                continue
            if old == new:
                continue
            con.execute("UPDATE experiments SET artifact_location = ? WHERE experiment_id = ?", (new, exp_id))
            for table, column in (("runs", "artifact_uri"), ("logged_models", "artifact_location")):
                if table in tables:  # each run's URI is <experiment's location>/<run id>/artifacts
                    con.execute(
                        f"UPDATE {table} SET {column} = ? || substr({column}, ?) "
                        f"WHERE experiment_id = ? AND substr({column}, 1, ?) = ?",
                        (new, len(old) + 1, exp_id, len(old), old),
                    )
            moved.append((name, old, new))
    return moved


def sqlite_uri(db_path: str | Path) -> str:
    return f"sqlite:///{Path(db_path).resolve()}"


def is_uri(store: str | Path) -> bool:
    """Whether a store is a tracking URI (``scheme://...``) rather than a SQLite file's path."""
    return "://" in str(store)


def store_uri(store: str | Path) -> str:
    """The tracking URI of a store: a URI as it is, a path as its SQLite file."""
    return str(store) if is_uri(store) else sqlite_uri(store)


def is_server(store: str | Path) -> bool:
    """Whether the store is a tracking server, which keeps the artifacts where it was told."""
    return str(store).startswith(("http://", "https://"))


def git_commit(cwd: str | Path | None = None) -> str:
    """The commit of the pacml source that runs (its checkout's HEAD; "unknown" outside git)."""
    cwd = Path(__file__).resolve().parent if cwd is None else cwd
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
    store: str | Path,
    experiment: str,
    dists: list[str],
    artifact_root: str | Path,
    tags: dict[str, str] | None = None,
) -> dict[str, str]:
    """Create the store (a SQLite file) if it is missing, the experiment and one parent run per
    distribution (idempotent: existing parents are reused). Returns {dist: parent run id}.
    Parallel calls on one SQLite store (the workflow's per-distribution ``mlflow_init`` jobs)
    take turns on ``<db>.init.lock``, so the schema, the experiment and each parent are created
    once; a server creates its schema itself, and an experiment another job created first is
    found, not duplicated. Artifacts go under ``artifact_root`` except on a server (its own)."""
    import contextlib
    import fcntl

    with contextlib.ExitStack() as stack:
        if not is_uri(store):
            Path(store).parent.mkdir(parents=True, exist_ok=True)
            lock = stack.enter_context(open(f"{store}.init.lock", "w"))
            fcntl.flock(lock, fcntl.LOCK_EX)  # blocking; released when the file closes or the process dies
        client = _mlflow(store_uri(store)).MlflowClient()
        exp_id = _experiment_id(
            client, experiment, None if is_server(store) else Path(artifact_root).resolve().as_uri()
        )
        parents = {}
        for dist in dists:
            found = client.search_runs([exp_id], filter_string=f"tags.dist = '{dist}' and tags.kind = 'parent'")
            if found:
                parents[dist] = found[0].info.run_id
                continue
            parent_tags = {
                "dist": dist,
                "kind": "parent",
                **context_tags("pacml mlflow_init", git_commit()),
                **(tags or {}),
            }
            run = client.create_run(exp_id, run_name=dist, tags=parent_tags)
            client.set_terminated(run.info.run_id)
            parents[dist] = run.info.run_id
    return parents


def _experiment_id(client, name: str, artifact_location: str | None) -> str:
    """The experiment's id, created when missing; one that a parallel job created between the
    lookup and the creation is found again."""
    exp = client.get_experiment_by_name(name)
    if exp is not None:
        return exp.experiment_id
    try:
        return client.create_experiment(name, artifact_location=artifact_location)
    except Exception:
        exp = client.get_experiment_by_name(name)
        if exp is None:
            raise
        return exp.experiment_id


def _retry(fn, *args, **kwargs):
    """Call ``fn``, retrying SQLite's 'database is locked' (contention between parallel jobs)."""
    for attempt in range(20):
        try:
            return fn(*args, **kwargs)
        except Exception as exc:
            if "locked" not in str(exc) or attempt == 19:
                raise
            time.sleep(0.2 * (attempt + 1))


class Run:
    """A child run: log params, metrics (with a step), artifacts. Retries 'database is locked'."""

    def __init__(self, mlflow, run_id: str):
        self._mlflow, self.run_id = mlflow, run_id
        self._client = mlflow.MlflowClient()

    def log_params(self, params: dict) -> None:
        from mlflow.entities import Param

        items = [Param(str(k), str(v)[:6000]) for k, v in params.items()]
        for i in range(0, len(items), 100):
            _retry(self._client.log_batch, self.run_id, params=items[i : i + 100])

    def log_metrics(self, metrics: dict, step: int = 0) -> None:
        from mlflow.entities import Metric

        now = int(time.time() * 1000)
        items = [
            Metric(k, float(v), now, int(step)) for k, v in metrics.items() if isinstance(v, (int, float)) and v == v
        ]
        if items:
            _retry(self._client.log_batch, self.run_id, metrics=items)

    def log_artifact(self, path: str | Path, artifact_path: str | None = None) -> None:
        if Path(path).exists():
            _retry(self._client.log_artifact, self.run_id, str(path), artifact_path)

    def log_artifacts(self, folder: str | Path, artifact_path: str | None = None) -> None:
        """A whole folder (e.g. an MLflow model) under ``artifact_path``."""
        _retry(self._client.log_artifacts, self.run_id, str(folder), artifact_path)


LOGICAL_JOB_TAGS = ("mlflow.parentRunId", "dist", "policy", "seed", "kind")
"""The tags that name a logical job: its runs are one history, of which one is current."""


def _filter(tags: dict[str, str]) -> str:
    for k, v in tags.items():
        if "'" in v or "`" in k:  # config names are checked against a safe pattern; never here
            raise ValueError(f"a quote in MLflow tag {k}={v!r}")
    return " and ".join(f"tags.`{k}` = '{v}'" for k, v in tags.items())


@contextmanager
def child_run(store: str | Path, experiment: str, parent_run_id: str, name: str, tags: dict[str, str]) -> Iterator[Run]:
    """A child run under ``parent_run_id`` (the UI nests it through ``mlflow.parentRunId``).

    One history per logical job (`LOGICAL_JOB_TAGS`: parent, dist, policy, seed, kind):

    - a run of the job left unfinished (killed, failed) under the same ``config_hash`` is
      continued, not duplicated; one still RUNNING whose owner process lives (tags ``owner.*``)
      is refused;
    - when a run finishes, it is tagged ``current = true`` and every earlier run of the job
      ``current = false`` with ``superseded_by = <its run id>``: a rerun (a changed config,
      ``--forcerun``) supersedes visibly, and ``tags.current = 'true'`` in the UI's search
      shows exactly one run per job.
    """
    from pacml.errors import PacmlError

    mlflow = _mlflow(store_uri(store))
    client = mlflow.MlflowClient()
    exp = client.get_experiment_by_name(experiment)
    if exp is None:
        raise RuntimeError(
            f"MLflow experiment {experiment!r} does not exist in {store}: run the mlflow_init rule first"
        )
    all_tags = {"mlflow.parentRunId": parent_run_id, **{k: str(v) for k, v in tags.items()}}
    job = {k: all_tags[k] for k in LOGICAL_JOB_TAGS if k in all_tags}
    history = _retry(client.search_runs, [exp.experiment_id], filter_string=_filter(job), max_results=10000)
    unfinished = [
        r
        for r in history
        if r.info.status in ("RUNNING", "FAILED", "KILLED")
        and r.data.tags.get("config_hash") == all_tags.get("config_hash")
        and r.data.tags.get("current") != "false"
    ]
    live = [r for r in unfinished if r.info.status == "RUNNING" and _owner_alive(r.data.tags)]
    if live:
        t = live[0].data.tags
        raise PacmlError(
            f"MLflow run {live[0].info.run_id} ({name}) is being written by pid {t['owner.pid']} on "
            f"{t['owner.host']} (since {t.get('owner.started')}): wait for it, or stop it and rerun"
        )
    if unfinished:  # a job killed mid-run left its run unfinished: a rerun continues it
        run = unfinished[0]
        _retry(client.update_run, run.info.run_id, status="RUNNING")
        for k, v in all_tags.items():
            if k.startswith(("owner.", "host.")):  # who continues it, and on what CPU
                _retry(client.set_tag, run.info.run_id, k, v)
    else:
        run = _retry(client.create_run, exp.experiment_id, run_name=name, tags=all_tags)
    run_id = run.info.run_id
    status = "FAILED"
    try:
        yield Run(mlflow, run_id)
        status = "FINISHED"
    finally:
        _retry(client.set_terminated, run_id, status=status)
    if status == "FINISHED":
        for old in history:
            if old.info.run_id != run_id and old.data.tags.get("superseded_by") is None:
                _retry(client.set_tag, old.info.run_id, "current", "false")
                _retry(client.set_tag, old.info.run_id, "superseded_by", run_id)
        _retry(client.set_tag, run_id, "current", "true")


def current_runs(store: str | Path, experiment: str) -> list:
    """The current run of every logical job (what the results are made of)."""
    mlflow = _mlflow(store_uri(store))
    return mlflow.search_runs(
        experiment_names=[experiment], filter_string="tags.current = 'true'", output_format="list", max_results=50000
    )
