"""A real ``mlflow server`` for the tests: on 127.0.0.1 only, a free port, its SQLite backend and
artifact root in a given folder; stopped afterwards by its process group (the server and the
workers it forks, nothing else). And `run_tree`: a store's runs as comparable data."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

MLFLOW = str(Path(sys.executable).parent / "mlflow")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def mlflow_server(
    folder: Path, prefix: tuple[str, ...] = (), timeout_s: float = 180, backend: str | None = None
) -> Iterator[str]:
    """Serve ``folder/server.db`` (or the store ``backend``, e.g. a workflow's SQLite file) with
    new artifacts in ``folder/artifacts``; yields the URL. ``prefix`` runs it under another
    command (``ip netns exec NAME``: that exec()s, so the process group is still the server's)."""
    folder.mkdir(parents=True, exist_ok=True)
    port = free_port()
    cmd = [
        *prefix,
        MLFLOW,
        "server",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--workers",
        "1",
        "--backend-store-uri",
        backend or f"sqlite:///{folder / 'server.db'}",
        "--artifacts-destination",
        str(folder / "artifacts"),
    ]
    log = open(folder / "server.log", "w")
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_healthy(url, proc, folder / "server.log", prefix, timeout_s)
        yield url
    finally:
        _stop(proc)
        log.close()


def _wait_healthy(url: str, proc: subprocess.Popen, log: Path, prefix: tuple[str, ...], timeout_s: float) -> None:
    """Poll ``/health`` from where the server listens (under ``prefix``: inside its namespace)."""
    probe = [*prefix, sys.executable, "-c", f"import urllib.request; urllib.request.urlopen('{url}/health', timeout=2)"]
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"mlflow server exited {proc.returncode}: {log.read_text()[-2000:]}")
        if subprocess.run(probe, capture_output=True).returncode == 0:
            return
        time.sleep(0.5)
    raise RuntimeError(f"mlflow server not healthy after {timeout_s} s: {log.read_text()[-2000:]}")


def _stop(proc: subprocess.Popen) -> None:
    """TERM the server's process group, KILL it after 30 s."""
    for sig, wait_s in ((signal.SIGTERM, 30), (signal.SIGKILL, 10)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        try:
            proc.wait(timeout=wait_s)
            break
        except subprocess.TimeoutExpired:
            continue


def run_tree(store: str, experiment: str) -> dict:
    """What a store holds: for each logical job (kind, dist, policy, seed, and the parent's
    dist) its runs in the order they started, each with its status, name, the tags that carry
    meaning, params, metric names, the evaluation metrics' values (exact: the simulator is) and
    the artifact paths (with their sizes for evaluations). Run ids, times, owners and training's
    timings (its metrics' values, the wall time inside its files) differ between stores and runs;
    they are left out."""
    import mlflow

    from pacml.tracking import store_uri

    mlflow.set_tracking_uri(store_uri(store))
    client = mlflow.MlflowClient()
    runs = mlflow.search_runs(experiment_names=[experiment], output_format="list", max_results=50000)
    dist_of = {r.info.run_id: r.data.tags.get("dist") for r in runs}
    tree: dict[tuple, list[dict]] = {}
    for r in sorted(runs, key=lambda r: r.info.start_time):
        t = r.data.tags
        key = (t.get("kind"), t.get("dist"), t.get("policy"), t.get("seed"), dist_of.get(t.get("mlflow.parentRunId")))
        metrics = r.data.metrics
        tree.setdefault(key, []).append(
            {
                "status": r.info.status,
                "name": r.info.run_name,
                "tags": {
                    k: v for k, v in t.items() if k in ("current", "config_hash", "kind", "dist", "policy", "seed")
                },
                "params": r.data.params,
                # system metrics: sampled every 10 s, so a short run may have none in one store
                "metric_names": sorted(k for k in metrics if not k.startswith("system/")),
                "metrics": {k: v for k, v in metrics.items() if not k.startswith("perf/")}
                if t.get("kind") == "evaluate"
                else {},
                "artifacts": sorted(_artifacts(client, r.info.run_id, sizes=t.get("kind") == "evaluate")),
            }
        )
    return tree


def _artifacts(client, run_id: str, path: str | None = None, sizes: bool = False) -> list[str]:
    out = []
    for f in client.list_artifacts(run_id, path):
        if f.is_dir:
            out.extend(_artifacts(client, run_id, f.path, sizes))
        else:
            out.append(f"{f.path} {f.file_size}" if sizes else f.path)
    return out


def run_tree_json(store: str, experiment: str) -> str:
    """`run_tree` as JSON text (keys as lists, in a fixed order): for a store that only another
    network namespace can reach, ``python tests/mlflow_server.py STORE EXPERIMENT`` run there."""
    import json

    items = sorted(([list(k), v] for k, v in run_tree(store, experiment).items()), key=lambda kv: json.dumps(kv[0]))
    return json.dumps(items, sort_keys=True)


if __name__ == "__main__":
    print(run_tree_json(sys.argv[1], sys.argv[2]))
