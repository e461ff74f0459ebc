"""What the workflow's rules call besides running policies: config, job setup, inputs, graphs, the store."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

from pacml.config import Config, config_from_dict
from pacml.errors import ConfigError
from pacml.tracking import RunStore


def config_for_workflow(snakemake_config: dict) -> Config:
    """The typed config of a workflow job (profile applied)."""
    return config_from_dict(snakemake_config, "config.yaml")


def setup_job(snakemake):
    """For workflow scripts: send stdout and stderr to the rule's log, and cap the math
    libraries' threads at the rule's (set before torch is ever imported; only the rules that
    train or run the agent import it)."""
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[var] = str(snakemake.threads)
    log = open(snakemake.log[0], "w", buffering=1)
    sys.stdout = sys.stderr = log
    return log


def run_store(snakemake) -> RunStore:
    """The job's MLflow store, from the rule's params and the mlflow_init output."""
    return RunStore(snakemake.params.store, snakemake.params.experiment, snakemake.input.parents)


def check_workflow_inputs(cfg: Config) -> None:
    """Checks the workflow makes before any job: inputs named by the config exist (the
    models a graphs rule profiles or imports)."""
    if cfg.graphs.source == "pipedream":
        from pacml.graphs.pipedream import pipedream_file

        folder = Path(cfg.graphs.pipedream_dir)
        if not folder.is_dir():
            raise ConfigError("graphs.pipedream_dir", cfg.graphs.pipedream_dir, "no such directory", "config.yaml")
        for i, name in enumerate(cfg.graphs.models):
            if pipedream_file(folder, name) is None:
                raise ConfigError(
                    f"graphs.models[{i}]", name, f"no {name}.txt or {name}/graph.txt in {folder}", "config.yaml"
                )
    else:
        from pacml.graphs.models import is_known_model, known_models_text

        for i, name in enumerate(cfg.graphs.models):
            if not is_known_model(name):
                raise ConfigError(
                    f"graphs.models[{i}]", name, f"no built-in profile; known: {known_models_text()}", "config.yaml"
                )
    dist = cfg.figures.load_sweep_dist
    if dist is not None and dist not in cfg.workflow.distributions:
        raise ConfigError(
            "figures.load_sweep_dist",
            dist,
            f"must be one of workflow.distributions {list(cfg.workflow.distributions)}",
            "config.yaml",
        )


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
    if missing:
        raise ConfigError("graphs.models", list(cfg.graphs.models), f"graphs not written: {missing}", "config.yaml")
    return written


def init_tracking(store: str, experiment: str, dists: list[str], out_json: str | Path) -> dict:
    """The ``mlflow_init`` rule, one job per distribution (adding a distribution reruns
    nothing else): create the store if it is missing; record the distribution's parent run id.
    Artifacts go beside a SQLite store (``artifacts/``), under ``results/mlflow/artifacts``
    for another database URI, and where a tracking server keeps them."""
    from pacml.runs import write_json
    from pacml.tracking import git_commit, init_store, is_uri

    root = Path("results/mlflow") if is_uri(store) else Path(store).parent
    parents = init_store(store, experiment, dists, root / "artifacts", {"git_commit": git_commit()})
    write_json(out_json, parents)
    return parents


_SLURM_ERROR = re.compile(r"^(slurmstepd|srun)(-[^:]*)?: error: ")


def slurm_errors(folder: str | Path, since_s: float, limit: int = 50) -> list[str]:
    """The error lines of the SLURM logs under ``folder`` written since ``since_s`` (epoch
    seconds): why a SLURM job died (over its memory, its time limit, a killed step), which the
    executor plugin reports only as FAILED. Each line is prefixed with its log's path."""
    lines = []
    for log in sorted(Path(folder).glob("**/*.log")):
        if log.stat().st_mtime < since_s:
            continue
        for line in log.read_text(errors="replace").splitlines():
            if _SLURM_ERROR.match(line):
                lines.append(f"{log}: {line}")
    return lines[:limit]
