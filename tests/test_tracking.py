"""MLflow runs: one history per logical job, one current run, an owner on every run."""

from __future__ import annotations

import subprocess
import sys

import mlflow
import pytest

from pacml.errors import PacmlError
from pacml.tracking import RunStore, child_run, current_runs, init_store, job_run, sqlite_uri

JOB = {"dist": "beta_a", "policy": "pacml", "seed": "0", "kind": "train"}


@pytest.fixture
def store(tmp_path):
    db = tmp_path / "mlflow.db"
    parents = init_store(db, "exp", ["beta_a"], tmp_path / "art")
    (tmp_path / "parents.json").write_text(__import__("json").dumps(parents))
    return RunStore(db, "exp", tmp_path / "parents.json")


def runs_of(store, **tags):
    mlflow.set_tracking_uri(sqlite_uri(store.db))
    runs = mlflow.search_runs(experiment_names=["exp"], output_format="list")
    return [
        r for r in runs if r.data.tags.get("kind") != "parent" and all(r.data.tags.get(k) == v for k, v in tags.items())
    ]


def test_a_rerun_supersedes_the_finished_run_visibly(store):
    with job_run(store, "beta_a", "first", {**JOB, "config_hash": "aaa"}) as run:
        run.log_metrics({"x": 1.0})
    with job_run(store, "beta_a", "second", {**JOB, "config_hash": "bbb"}) as run:
        run.log_metrics({"x": 2.0})
    with job_run(store, "beta_a", "third", {**JOB, "config_hash": "bbb"}) as run:  # --forcerun: same config
        run.log_metrics({"x": 3.0})
    runs = runs_of(store)
    assert len(runs) == 3
    (current,) = current_runs(store.db, "exp")
    assert current.info.run_name == "third" and current.data.metrics["x"] == 3.0
    old = [r for r in runs if r.info.run_id != current.info.run_id]
    assert all(r.data.tags["current"] == "false" for r in old)
    by_name = {r.info.run_name: r for r in runs}
    assert by_name["first"].data.tags["superseded_by"] == by_name["second"].info.run_id  # a chain of reruns
    assert by_name["second"].data.tags["superseded_by"] == current.info.run_id
    other = {**JOB, "seed": "1", "config_hash": "bbb"}  # another logical job is untouched
    with job_run(store, "beta_a", "seed 1", other):
        pass
    assert len(current_runs(store.db, "exp")) == 2


def test_a_killed_job_continues_its_run_and_a_failed_run_is_not_current(store):
    with pytest.raises(KeyboardInterrupt):
        with job_run(store, "beta_a", "killed", {**JOB, "config_hash": "aaa"}) as run:
            run.log_metrics({"x": 1.0}, step=1)
            raise KeyboardInterrupt
    (failed,) = runs_of(store)
    assert failed.info.status == "FAILED" and "current" not in failed.data.tags
    assert current_runs(store.db, "exp") == []
    with job_run(store, "beta_a", "rerun", {**JOB, "config_hash": "aaa"}) as run:
        run.log_metrics({"x": 2.0}, step=2)
    (only,) = runs_of(store)  # continued, not duplicated
    assert only.info.run_id == failed.info.run_id and only.info.status == "FINISHED"
    assert only.data.tags["current"] == "true"


def test_a_run_owned_by_a_live_process_is_refused(store):
    survivor = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        import socket

        owner = {"host": socket.gethostname(), "pid": survivor.pid, "started": "2026-12-03T00:00:00+00:00"}
        db, parent = store.db, store.parent("beta_a")
        tags = {**JOB, "config_hash": "aaa", **{f"owner.{k}": str(v) for k, v in owner.items()}}
        mlflow.set_tracking_uri(sqlite_uri(db))
        client = mlflow.MlflowClient()
        exp = client.get_experiment_by_name("exp")
        client.create_run(exp.experiment_id, tags={"mlflow.parentRunId": parent, **tags})  # left RUNNING
        with pytest.raises(PacmlError, match=f"pid {survivor.pid}"):
            with child_run(db, "exp", parent, "second trainer", {**JOB, "config_hash": "aaa"}):
                pass
    finally:
        survivor.kill()
        survivor.wait()
    with job_run(store, "beta_a", "after", {**JOB, "config_hash": "aaa"}):  # its owner is gone: continued
        pass
    (run,) = runs_of(store)
    assert run.info.status == "FINISHED" and run.data.tags["owner.pid"] != str(survivor.pid)
