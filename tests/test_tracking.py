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


def test_a_training_run_records_its_machine_and_an_evaluation_does_not(store, monkeypatch):
    import time

    monkeypatch.setenv("MLFLOW_SYSTEM_METRICS_SAMPLING_INTERVAL", "0.2")  # not the 10 s default
    with job_run(store, "beta_a", "train pacml seed=0", JOB, system_metrics=True):
        time.sleep(1.0)
    evaluation = {**JOB, "policy": "para_max", "kind": "evaluate"}
    with job_run(store, "beta_a", "eval para_max seed=0", evaluation):
        time.sleep(1.0)
    (train,) = runs_of(store, kind="train")
    (evaluate,) = runs_of(store, kind="evaluate")
    assert {"system/cpu_utilization_percentage", "system/system_memory_usage_megabytes"} <= set(train.data.metrics)
    assert 0 <= train.data.metrics["system/cpu_utilization_percentage"] <= 100
    assert not [k for k in evaluate.data.metrics if k.startswith("system/")]


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
        with job_run(store, "beta_a", "killed", {**JOB, "config_hash": "aaa", "host.cpu": "A"}) as run:
            run.log_metrics({"x": 1.0}, step=1)
            raise KeyboardInterrupt
    (failed,) = runs_of(store)
    assert failed.info.status == "FAILED" and "current" not in failed.data.tags
    assert current_runs(store.store, store.experiment) == []
    # continued on another CPU (pacml.train.host): the run names the host that finished it
    with job_run(store, "beta_a", "rerun", {**JOB, "config_hash": "aaa", "host.cpu": "B"}) as run:
        run.log_metrics({"x": 2.0}, step=2)
    (only,) = runs_of(store)  # continued, not duplicated
    assert only.info.run_id == failed.info.run_id and only.info.status == "FINISHED"
    assert only.data.tags["current"] == "true" and only.data.tags["host.cpu"] == "B"


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


def test_a_moved_results_folder_gets_its_artifact_links_back(tmp_path):
    import shutil

    from pacml.cli import main

    first = tmp_path / "first" / "results" / "mlflow"
    parents = init_store(first / "mlflow.db", "pacml", ["beta_a"], first / "artifacts")
    (first / "parents.json").write_text(__import__("json").dumps(parents))
    (tmp_path / "note.txt").write_text("logged")
    with job_run(RunStore(first / "mlflow.db", "pacml", first / "parents.json"), "beta_a", "train", JOB) as run:
        run.log_artifact(tmp_path / "note.txt")
        run_id = run.run_id
    moved = tmp_path / "moved" / "results"
    shutil.move(tmp_path / "first" / "results", moved)
    db = moved / "mlflow" / "mlflow.db"
    client = mlflow.MlflowClient(store_uri(db))
    with pytest.raises(mlflow.exceptions.MlflowException):  # the links still point at the old folder
        client.download_artifacts(run_id, "note.txt", str(tmp_path))
    assert main(["mlflow-relocate", "--db", str(db)]) == 0
    got = client.download_artifacts(run_id, "note.txt", str(tmp_path / "dl"))
    assert open(got).read() == "logged"
    assert client.get_experiment_by_name("pacml").artifact_location == (moved / "mlflow" / "artifacts").as_uri()
    assert main(["mlflow-relocate", "--db", str(db)]) == 0  # a second time moves nothing
    assert main(["mlflow-relocate", "--db", str(tmp_path / "nothing.db")]) == 2
    from pacml.tracking import relocate_artifacts

    with pytest.raises(PacmlError, match="nothing.db: no MLflow SQLite store"):
        relocate_artifacts(tmp_path / "nothing.db")
    (tmp_path / "other.db").write_bytes(b"")
    with pytest.raises(PacmlError, match="other.db: not an MLflow store"):
        relocate_artifacts(tmp_path / "other.db")
