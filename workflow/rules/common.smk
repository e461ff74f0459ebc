# Validation, names and paths shared by every rule.
from pacml.config import config_from_dict, normalise_cli_values, section_hash
from pacml.workflow import check_workflow_inputs
from snakemake.utils import validate


config.update(normalise_cli_values(config))  # --config nests values as text
CFG = config_from_dict(config, "config.yaml")  # typed validation: errors name the dotted key
validate(config, "../schemas/config.schema.yaml")
check_workflow_inputs(CFG)
# Params that change with the config, so that `--config` edits rerun what they affect
# (Snakemake's "params" rerun trigger): the graphs' settings, and everything that shapes a run.
GRAPHS_HASH = section_hash(CFG, "graphs", "workload.num_training_steps")
RUN_SECTIONS = ("graphs", "cluster", "partition", "workload", "distributions", "agent", "ppo", "planning")
RUN_HASH = section_hash(CFG, *RUN_SECTIONS)
# best_fixed's choice depends on the validation seeds; an evaluation also on the test seeds
BEST_FIXED_HASH = section_hash(CFG, *RUN_SECTIONS, "workflow.validation_seeds")
EVAL_HASH = section_hash(CFG, *RUN_SECTIONS, "workflow.validation_seeds", "workflow.test_seeds")
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


def uses_best_fixed(policy):
    """best_fixed itself, and planners that continue with best_fixed's degree."""
    planner = policy in ("rollout", "rollout_clairvoyant") and CFG.planning.base_policy == "best_fixed"
    return policy == "best_fixed" or planner


def best_fixed_input(wildcards):
    """The best_fixed choice an evaluation reads (none for most policies)."""
    return f"results/{wildcards.dist}/best_fixed.json" if uses_best_fixed(wildcards.policy) else []
