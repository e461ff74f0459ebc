"""MLflow runs: one history per logical job, one current run, an owner on every run; the same
on a SQLite file and on a real `mlflow server` (`tracking.uri`)."""

from __future__ import annotations

import subprocess
import sys

import mlflow
import pytest

from pacml.errors import PacmlError
from pacml.tracking import RunStore, child_run, current_runs, init_store, job_run, store_uri

from mlflow_server import mlflow_server, run_tree

JOB = {"dist": "beta_a", "policy": "pacml", "seed": "0", "kind": "train"}


@pytest.fixture(scope="module")
def server_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("mlflow-server")


@pytest.fixture(scope="module")
def server(server_dir):
    with mlflow_server(server_dir) as url:
        yield url


@pytest.fixture(params=["sqlite", "server"])
def store(request, tmp_path):
    """A fresh store: a SQLite file, or an experiment of its own on the module's server."""
    db = tmp_path / "mlflow.db" if request.param == "sqlite" else request.getfixturevalue("server")
    exp = f"exp-{request.node.name.split('[')[0][-40:]}"
    parents = init_store(db, exp, ["beta_a"], tmp_path / "art")
    assert init_store(db, exp, ["beta_a"], tmp_path / "art") == parents  # idempotent
    (tmp_path / "parents.json").write_text(__import__("json").dumps(parents))
    return RunStore(db, exp, tmp_path / "parents.json")


def runs_of(store, **tags):
    mlflow.set_tracking_uri(store_uri(store.store))
    runs = mlflow.search_runs(experiment_names=[store.experiment], output_format="list")
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
    (current,) = current_runs(store.store, store.experiment)
    assert current.info.run_name == "third" and current.data.metrics["x"] == 3.0
    old = [r for r in runs if r.info.run_id != current.info.run_id]
    assert all(r.data.tags["current"] == "false" for r in old)
    by_name = {r.info.run_name: r for r in runs}
    assert by_name["first"].data.tags["superseded_by"] == by_name["second"].info.run_id  # a chain of reruns
    assert by_name["second"].data.tags["superseded_by"] == current.info.run_id
    other = {**JOB, "seed": "1", "config_hash": "bbb"}  # another logical job is untouched
    with job_run(store, "beta_a", "seed 1", other):
        pass
    assert len(current_runs(store.store, store.experiment)) == 2


def test_a_killed_job_continues_its_run_and_a_failed_run_is_not_current(store):
    with pytest.raises(KeyboardInterrupt):
        with job_run(store, "beta_a", "killed", {**JOB, "config_hash": "aaa"}) as run:
            run.log_metrics({"x": 1.0}, step=1)
            raise KeyboardInterrupt
    (failed,) = runs_of(store)
    assert failed.info.status == "FAILED" and "current" not in failed.data.tags
    assert current_runs(store.store, store.experiment) == []
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
        db, parent = store.store, store.parent("beta_a")
        tags = {**JOB, "config_hash": "aaa", **{f"owner.{k}": str(v) for k, v in owner.items()}}
        mlflow.set_tracking_uri(store_uri(db))
        client = mlflow.MlflowClient()
        exp = client.get_experiment_by_name(store.experiment)
        client.create_run(exp.experiment_id, tags={"mlflow.parentRunId": parent, **tags})  # left RUNNING
        with pytest.raises(PacmlError, match=f"pid {survivor.pid}"):
            with child_run(db, store.experiment, parent, "second trainer", {**JOB, "config_hash": "aaa"}):
                pass
    finally:
        survivor.kill()
        survivor.wait()
    with job_run(store, "beta_a", "after", {**JOB, "config_hash": "aaa"}):  # its owner is gone: continued
        pass
    (run,) = runs_of(store)
    assert run.info.status == "FINISHED" and run.data.tags["owner.pid"] != str(survivor.pid)


def test_a_server_holds_the_run_tree_a_sqlite_file_holds(tmp_path, server, server_dir):
    """The workflow's sequence of calls on both stores: parents, a training run with params,
    stepped metrics and a file, a rerun that supersedes an evaluation; then the same tree."""
    (tmp_path / "curve.json").write_text('{"curve": [1, 2, 3]}')
    for store in (tmp_path / "mlflow.db", server):
        parents = init_store(store, "tree", ["beta_a", "beta_d"], tmp_path / "art", {"git_commit": "abc"})
        (tmp_path / "parents.json").write_text(__import__("json").dumps(parents))
        rs = RunStore(store, "tree", tmp_path / "parents.json")
        with job_run(rs, "beta_d", "pacml seed 0", {**JOB, "dist": "beta_d", "config_hash": "h1"}) as run:
            run.log_params({"ppo.gamma": 0.99, "planning.horizon": 150})
            for step in range(3):
                run.log_metrics({"charts/blocking_rate": 0.1 * step, "perf/seconds": 1.0}, step)
            run.log_artifact(tmp_path / "curve.json", "train")
        for config_hash in ("h1", "h2"):
            tags = {"dist": "beta_a", "policy": "para_max", "seed": "0", "kind": "evaluate", "config_hash": config_hash}
            with job_run(rs, "beta_a", "para_max seed 0", tags) as run:
                run.log_metrics({"blocking_rate": 0.25 if config_hash == "h1" else 0.5})
                run.log_artifact(tmp_path / "curve.json")

    local, served = run_tree(str(tmp_path / "mlflow.db"), "tree"), run_tree(server, "tree")
    assert local == served
    assert sorted(k[0] for k in local) == ["evaluate", "parent", "parent", "train"]
    ((train,),) = [v for k, v in local.items() if k[0] == "train"]
    assert train["artifacts"] == ["train/curve.json"] and train["tags"]["current"] == "true"
    assert train["metric_names"] == ["charts/blocking_rate", "perf/seconds"]
    (evaluations,) = [v for k, v in served.items() if k[0] == "evaluate"]  # one job, two runs
    assert [e["metrics"] for e in evaluations] == [{"blocking_rate": 0.25}, {"blocking_rate": 0.5}]
    assert [e["tags"]["current"] for e in evaluations] == ["false", "true"]
    assert evaluations[0]["artifacts"] == ["curve.json 20"]  # an evaluation's files are exact: sizes count
    # each store kept the file in its own artifact root: the server's, and the file store's
    assert len(list(server_dir.glob("artifacts/**/train/curve.json"))) == 1
    assert len(list((tmp_path / "art").glob("**/train/curve.json"))) == 1
