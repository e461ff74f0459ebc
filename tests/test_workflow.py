"""The Snakemake workflow: config validation, the planned DAG, lint, and the smoke profile end to end."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

from conftest import ROOT


def snakemake(
    workdir: Path, *args: str, timeout: int = 900, smoke: dict | None = None, config_text: str | None = None
) -> subprocess.CompletedProcess:
    """Run Snakemake on ``workdir`` with the project's config.yaml (``smoke``: keys changed in
    its smoke scale; ``config_text``: another config.yaml)."""
    shutil.copy(ROOT / "config.yaml", workdir / "config.yaml")
    if config_text is not None:
        (workdir / "config.yaml").write_text(config_text)
    if smoke:
        data = yaml.safe_load((ROOT / "config.yaml").read_text())
        data["scales"]["smoke"].update(smoke)
        (workdir / "config.yaml").write_text(yaml.safe_dump(data))
    cmd = [
        sys.executable,
        "-m",
        "snakemake",
        "--snakefile",
        str(ROOT / "Snakefile"),
        "--directory",
        str(workdir),
        *args,
    ]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=workdir)


def job_counts(text: str) -> dict[str, int]:
    table = text[text.index("Job stats:") :]
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\w+)\s+(\d+)$", table, re.M)}


def test_schema_file_is_current():
    from pacml.schema import config_schema

    assert yaml.safe_load((ROOT / "workflow/schemas/config.schema.yaml").read_text()) == config_schema()


def test_config_yaml_is_the_paper_setting_plus_workflow_choices():
    from pacml.config import load_config

    cfg = load_config(ROOT / "config.yaml")
    assert cfg.cluster.num_workers == 32 and cfg.workload.horizon_s == 1e6
    assert cfg.workflow.distributions == ("beta_a", "beta_b", "beta_c", "beta_d")


def test_dry_run_plans_every_job_of_the_default_config(tmp_path):
    out = snakemake(tmp_path, "-n", "--cores", "2")
    assert out.returncode == 0, out.stderr + out.stdout
    counts = job_counts(out.stdout)
    # 4 distributions x 3 seeds; evaluation of 9 policies (pacml + 8 baselines) per replicate
    assert counts == {
        "graphs": 1,
        "graph_summary": 1,
        "mlflow_init": 4,
        "train": 12,
        "select": 4,
        "evaluate": 108,
        "aggregate": 4,
        "summary": 1,
        "load_sweep": 1,
        "figures": 1,
        "report": 1,
        "all": 1,
        "total": 139,
    }


def test_config_edits_rerun_what_they_affect(tmp_path):
    target = "results/graph_summary.csv"  # targets go before --config, which takes every word after it
    out = snakemake(tmp_path, target, "--cores", "2", "--config", "workflow={scale: smoke}")
    assert out.returncode == 0, out.stderr[-3000:]
    same = snakemake(tmp_path, target, "-n", "--cores", "2", "--config", "workflow={scale: smoke}")
    assert "Nothing to be done" in same.stdout + same.stderr
    changed = snakemake(
        tmp_path,
        target,
        "-n",
        "--cores",
        "2",
        "--config",
        "workflow={scale: smoke}",
        "workload={num_training_steps: 20}",
    )
    assert job_counts(changed.stdout)["graphs"] == 1


def test_one_distribution_reruns_alone(tmp_path):
    out = snakemake(tmp_path, "-n", "--cores", "2", "results/beta_c/summary.csv", "--forcerun=train")
    assert out.returncode == 0, out.stderr + out.stdout
    counts = job_counts(out.stdout)
    assert counts["train"] == 3 and counts["evaluate"] == 27 and counts["aggregate"] == 1
    assert counts["select"] == 1 and "summary" not in counts


def test_lint_is_clean(tmp_path):
    out = snakemake(tmp_path, "--lint")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Congratulations" in out.stdout + out.stderr


@pytest.mark.parametrize(
    "override,key",
    [
        ("cluster={racks_per_group: 0}", "cluster.racks_per_group"),
        ("workflow={distributions: [beta_z]}", r"workflow.distributions\[0\]"),
        ("cluster={rackz: 3}", "rackz"),
        ("ppo={gamma: high}", "gamma"),
        ("graphs={source: pipedream, pipedream_dir: /no/such/dir}", "graphs.pipedream_dir"),
        ("graphs={models: [alexnet, nosuch]}", r"graphs.models\[1\].*no built-in profile"),
        ("workflow={baselines: [para_max, fixed-0]}", r"workflow.baselines\[1\]"),
        ("figures={load_sweep_offered_loads: [0.5, -2]}", r"figures.load_sweep_offered_loads\[1\]"),
        ("workload={offered_load: 1.0e+12}", "workload.offered_load"),
    ],
)
def test_bad_config_is_rejected_before_any_job_naming_the_key(tmp_path, override, key):
    out = snakemake(tmp_path, "-n", "--cores", "1", "--config", override)
    assert out.returncode != 0
    assert re.search(key, out.stdout + out.stderr), out.stdout + out.stderr
    assert not (tmp_path / "results").exists()


def test_a_yaml_alias_bomb_in_config_yaml_is_refused_before_any_job(tmp_path):
    lines = ["scales:", '  a: &a ["x","x","x","x","x","x","x","x","x"]']
    for prev, name in zip("abcdefgh", "bcdefghi"):
        lines.append(f"  {name}: &{name} [{', '.join([f'*{prev}'] * 9)}]")
    out = snakemake(tmp_path, "-n", "--cores", "1", config_text="\n".join(lines) + "\n", timeout=120)
    assert out.returncode != 0 and "aliases" in out.stdout + out.stderr, (out.stdout + out.stderr)[-2000:]
    assert not (tmp_path / "results").exists()


# What a finished smoke run (beta_a and beta_d, one training seed, pacml + para_max, para_min,
# best_fixed, rollout; a load sweep of para_max and pacml on beta_a) reruns for one changed key
# per section, written out by hand from what each job reads.
_TAIL = {"aggregate": 2, "summary": 1, "figures": 1, "report": 1}
_EVERY_RUN = {"select": 2, "train": 2, "evaluate": 10, "load_sweep": 1, **_TAIL}
_AGENT = {"train": 2, "evaluate": 2, "load_sweep": 1, **_TAIL}  # PAC-ML's jobs alone
SECTION_EDITS = [
    ({"cluster.max_degree": 8}, _EVERY_RUN),
    ({"partition.min_op_time_s": 2.0e-5}, _EVERY_RUN),
    ({"workload.horizon_s": 40000.0}, _EVERY_RUN),
    ({"workload.num_training_steps": 20}, {"graphs": 1, "graph_summary": 1, **_EVERY_RUN}),
    ({"graphs.models": ["alexnet", "gnmt", "resnet18", "vgg16"]}, {"graphs": 1, "graph_summary": 1, **_EVERY_RUN}),
    ({"agent.hidden_dim": 32}, _AGENT),
    ({"ppo.gamma": 0.9}, _AGENT),
    ({"imitation.epochs": 5}, _AGENT),
    # the planner: the selection, the planners' evaluations, and the agent that imitates it
    ({"planning.num_futures": 3}, {"select": 2, "train": 2, "evaluate": 6, "load_sweep": 1, **_TAIL}),
    ({"workflow.validation_seeds": [1800]}, {"select": 2, "train": 2, "evaluate": 6, "load_sweep": 1, **_TAIL}),
    ({"workflow.test_seeds": [101]}, {"evaluate": 10, "load_sweep": 1, **_TAIL}),
    ({"workflow.train_seeds": [0, 1]}, {"train": 2, "evaluate": 10, **_TAIL}),
    ({"workflow.baselines": ["para_max", "para_min", "best_fixed", "rollout", "sequential"]}, {"evaluate": 2, **_TAIL}),
    # a new distribution: its own jobs, and nothing of the others
    (
        {"workflow.distributions": ["beta_a", "beta_d", "beta_b"]},
        {
            "mlflow_init": 1,
            "select": 1,
            "train": 1,
            "evaluate": 5,
            "aggregate": 1,
            "summary": 1,
            "figures": 1,
            "report": 1,
        },
    ),
    ({"figures.load_sweep_offered_loads": [0.5, 0.75]}, {"load_sweep": 1, "figures": 1, "report": 1}),
    # speed, never numbers: only the report, which prints the config, is written again
    ({"ppo.torch_threads": 2}, {"report": 1}),
]


FIGURE_NAMES = (
    "beta_distributions",
    "validation_curves",
    "performance_bars",
    "completed_jobs",
    "speedup",
    "performance_vs_load",
    "graph_characterisation",
    "decisions",
    "blocking_causes",
    "reduction",
    "degree_distribution",
    "network_overhead",
    "training_diagnostics",
)


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory) -> Path:
    """The smoke scale run once for the module's tests (the end-to-end test then reruns
    with changed keys in it, so it goes last)."""
    tmp_path = tmp_path_factory.mktemp("smoke")
    out = snakemake(tmp_path, "--cores", "2", "--config", "workflow={scale: smoke}", timeout=900)
    assert out.returncode == 0, out.stderr[-4000:]
    return tmp_path


@pytest.mark.slow
def test_the_mlflow_ui_shows_a_smoke_runs_parents_and_children_in_a_browser(smoke_run):
    """Headless Chromium on a smoke run's store, served on 127.0.0.1: the runs page lists the
    parents (one per distribution); a training run's page shows its name and its parent."""
    import mlflow
    from browser import chromium, rendered_dom, runs_page

    from mlflow_server import mlflow_server

    binary = chromium()
    if binary is None:
        reason = "no headless Chromium: chromium-headless-shell is not installed and cannot be (root, apt-get)"
        if os.environ.get("PACML_REQUIRE_BROWSER"):
            pytest.fail(reason + " (PACML_REQUIRE_BROWSER is set)")
        pytest.skip(reason)
    db = f"sqlite:///{smoke_run / 'results' / 'mlflow' / 'mlflow.db'}"
    client = mlflow.MlflowClient(db)
    exp = client.get_experiment_by_name("pacml-smoke")
    train = next(r for r in client.search_runs([exp.experiment_id]) if r.data.tags.get("kind") == "train")
    with mlflow_server(smoke_run / "ui", backend=db) as url:
        runs = rendered_dom(binary, runs_page(url, exp.experiment_id))
        child = rendered_dom(binary, f"{url}/#/experiments/{exp.experiment_id}/runs/{train.info.run_id}")
    assert "beta_a" in runs and "beta_d" in runs, runs[-2000:]  # the parents, the children folded under them
    assert "train pacml seed=0" in child and "Parent run" in child, child[-2000:]
    assert train.data.tags["dist"] in child.split("Parent run", 1)[1]  # linked to its distribution's parent


@pytest.mark.slow
def test_smoke_profile_end_to_end(smoke_run):
    tmp_path = smoke_run
    planned = snakemake(tmp_path, "-n", "--cores", "2", "--config", "workflow={scale: smoke}")
    assert "Nothing to be done" in planned.stdout + planned.stderr  # a rerun redoes nothing
    res = tmp_path / "results"
    import pandas as pd

    for d in ("beta_a", "beta_d"):
        summary = pd.read_csv(res / d / "summary.csv")
        assert set(summary["policy"]) == {"pacml", "para_max", "para_min", "best_fixed", "rollout"}
        degree = summary[summary["metric"] == "best_fixed_degree"]["mean"].item()
        assert degree == json.loads((res / d / "selection.json").read_text())["fixed_degree"]
        assert list(summary.columns) == ["dist", "policy", "metric", "mean", "ci_low", "ci_high", "n"]
        rate = summary[summary["metric"] == "blocking_rate"].set_index("policy")["mean"]
        red = summary[(summary["policy"] == "pacml") & (summary["metric"] == "blocking_reduction_vs_para_max")]
        assert red["mean"].item() == pytest.approx(1 - rate["pacml"] / rate["para_max"])
        assert red["n"].item() == 1 and np.isnan(red["ci_low"].item())  # one episode: no interval
        rows = json.loads((res / d / "eval" / "pacml_seed0.json").read_text())
        assert rows[0]["jobs_arrived"] > 0 and 0 <= rows[0]["blocking_rate"] <= 1
        curve = json.loads((res / d / "train" / "seed0" / "curve.json").read_text())
        assert curve["curve"] and (res / d / "train" / "seed0" / "best.pt").stat().st_size > 0
        assert curve["host"]["torch_cpu_capability"] and curve["host"]["machine"]  # pacml.train.host
        # the smoke scale's one imitation iteration, then PPO's updates (2000 decisions of 2 x 50)
        it, *updates = curve["history"]
        assert it["phase"] == "imitation" and 0 <= it["imitation/agreement"] <= 1
        assert [u["step"] for u in updates] == list(range(1, 21))
        assert all(u["phase"] == "ppo" and "losses/entropy" in u for u in updates)
    assert "| pacml |" in (res / "summary.md").read_text()
    assert "best_fixed's degree" in (res / "summary.md").read_text()
    decisions = pd.read_csv(res / "decisions.csv")
    assert set(decisions["by"]) == {"model", "beta_bin"} and (decisions["mean_degree"] >= 1).all()
    assert len(pd.read_csv(res / "graph_summary.csv")) == 5
    assert len(pd.read_csv(res / "load_sweep.csv")) > 0
    for name in FIGURE_NAMES:
        assert (res / "figures" / f"{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert (res / "figures" / f"{name}.pdf").read_bytes()[:5] == b"%PDF-"
    html = (res / "report.html").read_text(errors="ignore")
    assert "<html" in html[:5000].lower()
    # the front page shows what ran and the summary table; each figure's PNG has its own caption
    front = html.split('<script id="workflow-desc">')[1].split("</script>")[0]
    assert "Scale <strong>smoke</strong>" in front and "<td>pacml</td>" in front and "<td>para_max</td>" in front
    block = html.split('<script id="results">')[1]
    items, _ = json.JSONDecoder().raw_decode(block, block.index("var results = ") + len("var results = "))
    captions = {k: v["caption"] for k, v in items.items() if k.startswith("results/figures/")}
    assert set(captions) == {f"results/figures/{name}.png" for name in FIGURE_NAMES}  # no PDF in the report
    assert len(set(captions.values())) == len(FIGURE_NAMES) and all("smoke" in c for c in captions.values())
    import mlflow

    mlflow.set_tracking_uri(f"sqlite:///{res / 'mlflow' / 'mlflow.db'}")
    assert mlflow.get_experiment_by_name("pacml") is None  # smoke runs apart from real ones
    runs = mlflow.search_runs(experiment_names=["pacml-smoke"], output_format="list")
    kinds = [r.data.tags.get("kind") for r in runs]
    assert kinds.count("parent") == 2 and kinds.count("train") == 2 and kinds.count("evaluate") == 10
    parents = {r.info.run_id for r in runs if r.data.tags.get("kind") == "parent"}
    assert all(r.data.tags["mlflow.parentRunId"] in parents for r in runs if r.data.tags.get("kind") != "parent")
    assert all(r.data.tags["owner.pid"].isdigit() for r in runs if r.data.tags.get("kind") != "parent")
    # MLflow's context tags, kind-first names, the whole config, both checkpoints
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    train = next(r for r in runs if r.data.tags.get("kind") == "train")
    assert train.info.run_name == "train pacml seed=0" and train.data.tags["mlflow.source.name"] == "pacml train"
    assert train.data.tags["mlflow.source.git.commit"] == commit and train.data.tags["mlflow.user"]
    assert train.data.tags["scale"] == "smoke" and train.data.tags["graph_source"] == "builtin"
    assert (
        train.data.params["ppo.total_timesteps"] == "2000" and train.data.params["cluster.communication_groups"] == "4"
    )
    assert train.data.tags["host.cpu_vector_isa"] and train.data.tags["host.torch_cpu_capability"]
    artifacts = {f.path for f in mlflow.MlflowClient().list_artifacts(train.info.run_id)}
    assert {"best.pt", "last.pt", "curve.json", "config.yaml", "agent"} <= artifacts, artifacts
    # the agent as an MLflow model: it loads from the run and decides as its checkpoint does
    agent = mlflow.pyfunc.load_model(f"runs:/{train.info.run_id}/agent")
    assert [s.name for s in agent.metadata.get_input_schema().inputs] == ["graph_index", "global", "mask"]
    from pacml.agent.mlflow_model import first_observation
    from pacml.agent.policy import AgentPolicy

    dist = train.data.tags["dist"]
    checkpoint = res / dist / "train" / "seed0" / "best.pt"
    obs = first_observation(checkpoint, res / "graphs", dist)
    policy = AgentPolicy(checkpoint)
    from pacml.env.partition_env import PartitionEnv
    from pacml.runs import build_model

    env = PartitionEnv(build_model(res / "graphs", policy.cfg), dist)
    seen, done = env.reset(seed=0)[0], False
    assert agent.predict(obs).tolist() == [policy.act(env.decision, np.random.default_rng(0))]
    while not done:  # a whole episode, decision by decision
        batch = {k: np.asarray(v)[None] for k, v in seen.items()}
        degree = int(agent.predict(batch)[0])
        assert degree == policy.act(env.decision, np.random.default_rng(0))
        seen, _, done, _, _ = env.step(degree)
    parent = next(r for r in runs if r.data.tags.get("kind") == "parent" and r.data.tags["dist"] == "beta_a")
    summary = pd.read_csv(res / "beta_a" / "summary.csv").set_index(["policy", "metric"])["mean"]
    assert parent.data.metrics["pacml.blocking_rate"] == pytest.approx(summary[("pacml", "blocking_rate")])
    assert "summary.csv" in {f.path for f in mlflow.MlflowClient().list_artifacts(parent.info.run_id)}
    evaluation = next(r for r in runs if r.data.tags.get("kind") == "evaluate")
    assert evaluation.info.run_name.startswith("eval ") and "workload.horizon_s" in evaluation.data.params

    # one changed key per section: the dry run plans exactly the jobs that read it
    for change, expected in SECTION_EDITS:
        plan = snakemake(tmp_path, "-n", "--cores", "2", "--config", "workflow={scale: smoke}", smoke=change)
        assert plan.returncode == 0, plan.stderr[-3000:]
        counts = job_counts(plan.stdout)
        del counts["total"]
        assert counts == {**expected, "all": 1}, (change, counts)

    # the command line wins over the scale: ppo.total_timesteps, which the smoke scale sets, set
    # with --config reruns PAC-ML's jobs; the same value in config.yaml loses to the scale
    cli = snakemake(
        tmp_path, "-n", "--cores", "2", "--config", "workflow={scale: smoke}", "ppo={total_timesteps: 4000}"
    )
    counts = job_counts(cli.stdout)
    del counts["total"]
    assert counts == {**_AGENT, "all": 1}, counts
    in_file = yaml.safe_load((ROOT / "config.yaml").read_text())
    in_file["ppo"]["total_timesteps"] = 4000
    plan = snakemake(
        tmp_path, "-n", "--cores", "2", "--config", "workflow={scale: smoke}", config_text=yaml.safe_dump(in_file)
    )
    assert "Nothing to be done" in plan.stdout + plan.stderr, plan.stdout[-2000:]

    # a rerun with one changed key: it plans what that key affects, and the store then holds
    # one current run per logical job, the old ones superseded visibly
    smoke = {"workflow.test_seeds": [101]}
    plan = snakemake(tmp_path, "-n", "--cores", "2", "--config", "workflow={scale: smoke}", smoke=smoke)
    counts = job_counts(plan.stdout)
    assert counts["evaluate"] == 10 and not {"train", "select", "graphs", "mlflow_init"} & set(counts), counts
    again = snakemake(tmp_path, "--cores", "2", "--config", "workflow={scale: smoke}", smoke=smoke)
    assert again.returncode == 0, again.stderr[-4000:]
    runs = [r for r in mlflow.search_runs(experiment_names=["pacml-smoke"], output_format="list")]
    jobs = [r for r in runs if r.data.tags.get("kind") != "parent"]
    assert len(jobs) == 22  # 2 train + 10 evaluations, then 10 more
    current = [r for r in jobs if r.data.tags.get("current") == "true"]
    logical = {tuple(r.data.tags[k] for k in ("dist", "policy", "seed", "kind")) for r in jobs}
    assert len(current) == len(logical) == 12
    superseded = [r for r in jobs if r.data.tags.get("current") == "false"]
    assert len(superseded) == 10 and {r.data.tags["superseded_by"] for r in superseded} <= {
        r.info.run_id for r in current
    }


def test_slurm_errors_are_read_from_the_logs_of_this_run_only(tmp_path):
    import os

    from pacml.workflow import slurm_errors

    logs = tmp_path / "slurm_logs" / "rule_graphs"
    logs.mkdir(parents=True)
    (logs / "7.log").write_text(
        "Building DAG of jobs...\n"
        "slurmstepd-vm: error: Exceeded job memory limit\n"
        "srun: error: vm: task 0: Killed\n"
        "the rule printed: error: not SLURM's\n"
    )
    (logs / "3.log").write_text("slurmstepd: error: *** JOB 3 ON vm CANCELLED AT 2026-01-01 DUE TO TIME LIMIT ***\n")
    os.utime(logs / "3.log", (1000.0, 1000.0))  # an earlier run's log
    assert slurm_errors(tmp_path / "slurm_logs", since_s=2000.0) == [
        f"{logs / '7.log'}: slurmstepd-vm: error: Exceeded job memory limit",
        f"{logs / '7.log'}: srun: error: vm: task 0: Killed",
    ]
    assert len(slurm_errors(tmp_path / "slurm_logs", since_s=0.0)) == 3
