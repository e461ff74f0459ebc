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
# the selection depends on the validation seeds (and so does training that imitates the
# planner); an evaluation also on the test seeds
SELECT_HASH = section_hash(CFG, *RUN_SECTIONS, "workflow.validation_seeds")
TRAIN_HASH = SELECT_HASH if CFG.imitation.iterations else RUN_HASH
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


def selection_input(wildcards):
    """The validation-seed choices an evaluation reads: best_fixed's and the planners'."""
    if wildcards.policy in ("best_fixed", "rollout", "rollout_clairvoyant"):
        return f"results/{wildcards.dist}/selection.json"
    return []


def teacher_input(wildcards):
    """Training that imitates the planner reads its base policy from the selection."""
    return f"results/{wildcards.dist}/selection.json" if CFG.imitation.iterations else []
