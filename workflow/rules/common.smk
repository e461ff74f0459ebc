# Validation, names and paths shared by every rule.
import re
from pathlib import Path

from pacml.config import (GRAPH_KEYS, SELECTION_KEYS, config_digest, config_from_dict, evaluation_keys,
                          leaf_keys, normalise_cli_values, resolve_scale, section_hash, training_keys)
from pacml.experiments import (TRANSFER, check_experiments, experiment, experiment_policies, experiments,
                               graphs_key, model_specs, pool_inputs, reuses_main, sweep_settings, transfer_checkpoint,
                               tunes_base)
from pacml.workflow import check_workflow_inputs
from snakemake.utils import validate


config.update(normalise_cli_values(config))  # --config nests values as text
# The scale applies once, here: what --config (or --configfile) sets wins over it; every job
# gets the resolved config (pacml.config.resolve_scale).
_resolved = resolve_scale(config, leaf_keys(dict(workflow.config_settings.overwrite_config)), "config.yaml")
config.clear()
config.update(_resolved)
CFG = config_from_dict(config, "config.yaml")  # typed validation: errors name the dotted key
validate(config, "../schemas/config.schema.yaml")
check_workflow_inputs(CFG)
# Params that change with the config, so that `--config` edits rerun what they affect
# (Snakemake's "params" rerun trigger); each job hashes the keys it reads (pacml.config.hashing).
GRAPHS_HASH = section_hash(CFG, *GRAPH_KEYS)
SELECT_HASH = section_hash(CFG, *SELECTION_KEYS)
TRAIN_HASH = section_hash(CFG, *training_keys(CFG))


def evaluation_hash(wildcards):
    """A baseline's evaluation reads no agent or PPO key: a PPO edit reruns PAC-ML's alone."""
    return section_hash(CFG, *evaluation_keys(CFG, wildcards.policy))


# the load sweep's policies, each with what it reads
LOAD_SWEEP_HASH = section_hash(
    CFG, *dict.fromkeys(k for p in CFG.figures.load_sweep_policies for k in evaluation_keys(CFG, p))
)
DISTS = list(CFG.workflow.distributions)
SEEDS = list(CFG.workflow.train_seeds)
BASELINES = list(CFG.workflow.baselines)
POLICIES = ["pacml", *BASELINES]
MODELS = list(CFG.graphs.models)
TRACKING = CFG.tracking
LOAD_SWEEP_DIST = CFG.load_sweep_dist
FIGURE_NAMES = ["beta_distributions", "validation_curves", "performance_bars", "completed_jobs",
                "speedup", "performance_vs_load", "graph_characterisation", "decisions", "blocking_causes",
                "reduction", "degree_distribution", "network_overhead",
                "training_diagnostics"]
FIGURES = expand("results/figures/{name}.{ext}", name=FIGURE_NAMES, ext=["png", "pdf"])


wildcard_constraints:
    dist="|".join(DISTS),
    seed=r"\d+",
    policy="|".join(POLICIES),


def checkpoint_input(wildcards):
    """The agent checkpoint an evaluation needs (none for a baseline)."""
    if wildcards.policy == "pacml":
        return f"results/{wildcards.dist}/train/seed{wildcards.seed}/best.pt"
    return []


def selection_input(wildcards):
    """The validation-seed choices an evaluation reads: best_fixed's and the planners'."""
    if wildcards.policy in ("best_fixed", "rollout", "rollout_clairvoyant"):
        return f"results/{wildcards.dist}/selection.json"
    return []


def teacher_input(wildcards):
    """Training that imitates the planner reads its base policy from the selection."""
    return f"results/{wildcards.dist}/selection.json" if CFG.imitation.iterations else []


# Named generalisation experiments (workflow/rules/experiments.smk; pacml.experiments)

EXPERIMENT_CFG = check_experiments(CFG)  # {(experiment, pool): its jobs' config}
EXPERIMENTS = list(experiments(CFG))  # a sweep's settings as <name>/<value>
SWEEPS = sweep_settings(CFG)  # {sweep: its settings}
TABLED = list(CFG.experiments)  # one table each in the combined file: a sweep's spans its settings
# the test pool's jobs that are the main workflow's, decided once per experiment
REUSES_MAIN = {(e, what): reuses_main(CFG, e, what) for e in EXPERIMENTS for what in ("agents", "selection")}
# {(experiment, pool): its graphs' folder}, and a job per folder (for the first pool that names it)
EXPERIMENT_GRAPHS = {
    (e, pool): f"results/experiments/graphs/{graphs_key(CFG, e, pool, pool_cfg)}"
    for (e, pool), pool_cfg in EXPERIMENT_CFG.items()
}
GRAPH_POOLS = {Path(d).name: ep for ep, d in reversed(list(EXPERIMENT_GRAPHS.items()))}
EXPERIMENT_FIGURES = expand("results/experiments/{exp}/figure.{ext}", exp=EXPERIMENTS + list(SWEEPS), ext=["png", "pdf"])


wildcard_constraints:
    exp="|".join(re.escape(e) for e in EXPERIMENTS) or "no-experiment",
    sweep="|".join(re.escape(s) for s in SWEEPS) or "no-sweep",
    pool="train|test",
    gkey="[0-9a-f]{12}",
    xdist=r"[A-Za-z0-9][A-Za-z0-9_-]*",
    xpolicy=r"[A-Za-z0-9][A-Za-z0-9_-]*",


def _cfg(w):
    """The config of an experiment's jobs on one pool."""
    return EXPERIMENT_CFG[(w.exp, w.pool)]


def experiment_checkpoints(w):
    """The agents an evaluation runs, one a replicate (training seed): the agents under test
    learnt on the training pool; the reference, on the test pool (the main workflow's agents
    where nothing they read differs); none for a baseline."""
    if w.xpolicy == TRANSFER:
        return [transfer_checkpoint(CFG, w.exp, w.xdist, seed) for seed in SEEDS]
    if w.xpolicy == "pacml":
        if REUSES_MAIN[(w.exp, "agents")]:
            return [f"results/{w.xdist}/train/seed{seed}/best.pt" for seed in SEEDS]
        return [f"results/experiments/{w.exp}/test/{w.xdist}/train/seed{seed}/best.pt" for seed in SEEDS]
    return []


def experiment_selection(w):
    """best_fixed's and the planners' choices on the test pool (the main workflow's likewise)."""
    if w.xpolicy not in ("best_fixed", "rollout", "rollout_clairvoyant"):
        return []
    if REUSES_MAIN[(w.exp, "selection")]:
        return f"results/{w.xdist}/selection.json"
    return f"results/experiments/{w.exp}/test/{w.xdist}/selection.json"


def experiment_evaluation_hash(w):
    test = EXPERIMENT_CFG[(w.exp, "test")]
    return section_hash(test, *evaluation_keys(test, "pacml" if w.xpolicy == TRANSFER else w.xpolicy))
