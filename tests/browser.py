"""A real browser for the tests: Debian's headless Chromium (``chromium-headless-shell``),
installed on demand as root, loading a page as a user would (its scripts run, its data
fetched) and giving back the rendered DOM or a screenshot. Only 127.0.0.1 and local files are
ever loaded.

As a script it screenshots a finished run for `results/published/`: the MLflow runs page of a
store and one training run's page (served by `mlflow_server` on 127.0.0.1, stopped
afterwards) and the Snakemake report::

    python tests/browser.py --db results/mlflow/mlflow.db --experiment pacml \\
        --report results/report.html --out results/published/builtin/screenshots
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

PACKAGE = "chromium-headless-shell"
VIRTUAL_TIME_MS = 20000
"""How long the page may run its scripts (virtual time: as long as it needs, capped)."""


def chromium() -> str | None:
    """The headless Chromium binary; installed with apt-get when missing and this is root.
    None when it cannot be had (not root, no apt-get, no package), with the reason printed."""
    found = shutil.which(PACKAGE) or shutil.which("chromium")
    if found:
        return found
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        print(f"{PACKAGE}: not installed, and installing it needs root and apt-get", file=sys.stderr)
        return None
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for cmd in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", PACKAGE]):
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
        if done.returncode != 0:
            print(f"{' '.join(cmd)}: {done.stderr[-500:]}", file=sys.stderr)
            return None
    return shutil.which(PACKAGE)


def _run(binary: str, url: str, *args: str, timeout_s: float = 120) -> subprocess.CompletedProcess:
    if not (url.startswith("http://127.0.0.1:") or url.startswith("file://")):
        raise ValueError(f"{url}: only 127.0.0.1 and local files are loaded")
    cmd = [
        binary,
        "--no-sandbox",  # root in a container has no user namespace for the sandbox
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        f"--virtual-time-budget={VIRTUAL_TIME_MS}",
        "--window-size=1600,1000",
        *args,
        url,
    ]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)


def rendered_dom(binary: str, url: str) -> str:
    """The page's DOM after its scripts ran."""
    done = _run(binary, url, "--dump-dom")
    if done.returncode != 0:
        raise RuntimeError(f"{binary} --dump-dom {url}: exit {done.returncode}: {done.stderr[-1000:]}")
    return done.stdout


def screenshot(binary: str, url: str, png: Path) -> Path:
    """A PNG of the page after its scripts ran."""
    png.parent.mkdir(parents=True, exist_ok=True)
    done = _run(binary, url, f"--screenshot={png}")
    if done.returncode != 0 or not png.is_file():
        raise RuntimeError(f"{binary} --screenshot {url}: exit {done.returncode}: {done.stderr[-1000:]}")
    return png


def runs_page(url: str, experiment_id: str) -> str:
    """The UI's runs view (MLflow 3 otherwise opens an experiment on its GenAI overview)."""
    return f"{url}/#/experiments/{experiment_id}/runs?workflowType=machine_learning"


def main(argv: list[str] | None = None) -> int:
    import mlflow

    from mlflow_server import mlflow_server

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--db", required=True, type=Path, help="the workflow's SQLite store")
    p.add_argument("--experiment", default="pacml")
    p.add_argument("--report", type=Path, help="the Snakemake report (report.html)")
    p.add_argument("--out", required=True, type=Path, help="folder for the PNGs")
    args = p.parse_args(argv)
    binary = chromium()
    if binary is None:
        return 1
    exp = mlflow.MlflowClient(f"sqlite:///{args.db.resolve()}").get_experiment_by_name(args.experiment)
    if exp is None:
        print(f"{args.db}: no experiment {args.experiment!r}", file=sys.stderr)
        return 1
    db = f"sqlite:///{args.db.resolve()}"
    train = mlflow.MlflowClient(db).search_runs(
        [exp.experiment_id], "tags.kind = 'train' and tags.current = 'true'", max_results=1
    )
    with mlflow_server(args.out / ".server", backend=db) as url:
        print(screenshot(binary, runs_page(url, exp.experiment_id), args.out / "mlflow_runs.png"))
        if train:
            page = f"{url}/#/experiments/{exp.experiment_id}/runs/{train[0].info.run_id}"
            print(screenshot(binary, page, args.out / "mlflow_training_run.png"))
    shutil.rmtree(args.out / ".server", ignore_errors=True)
    if args.report is not None:
        print(screenshot(binary, args.report.resolve().as_uri(), args.out / "report.png"))
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    sys.exit(main())
