# Validation, names and paths shared by every rule.
from pacml.config import (GRAPH_KEYS, SELECTION_KEYS, config_from_dict, evaluation_keys,
                          normalise_cli_values, section_hash, training_keys)
from pacml.workflow import check_workflow_inputs
from snakemake.utils import validate


config.update(normalise_cli_values(config))  # --config nests values as text
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
                "speedup", "performance_vs_load", "graph_characterisation", "decisions"]
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
