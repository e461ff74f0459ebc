# Validation, names and paths shared by every rule.
from pacml.config import config_from_dict, normalise_cli_values, section_hash
from pacml.workflow_api import check_workflow_inputs
from snakemake.utils import validate


config.update(normalise_cli_values(config))  # --config nests values as text
validate(config, "../schemas/config.schema.yaml")
CFG = config_from_dict(config, "config.yaml")  # typed validation: errors name the dotted key
check_workflow_inputs(CFG)
# Params that change with the config, so that `--config` edits rerun what they affect
# (Snakemake's "params" rerun trigger): the graphs' settings, and everything that shapes a run.
GRAPHS_HASH = section_hash(CFG, "graphs", "workload.num_training_steps")
RUN_HASH = section_hash(CFG, "graphs", "cluster", "partition", "workload", "distributions", "agent", "ppo")
DISTS = list(CFG.workflow.distributions)
SEEDS = list(CFG.workflow.train_seeds)
BASELINES = list(CFG.workflow.baselines)
POLICIES = ["pacml", *BASELINES]
MODELS = list(CFG.graphs.models)
TRACKING = {"experiment": "pacml", "db": "results/mlflow/mlflow.db", **CFG.extra.get("tracking", {})}
FIG = {"load_sweep_dist": DISTS[0], "load_sweep_offered_loads": [0.5, 0.94, 1.5],
       "load_sweep_policies": ["para_max", "pacml"], **CFG.extra.get("figures", {})}
FIGURE_NAMES = ["beta_distributions", "validation_curves", "performance_bars", "completed_jobs",
                "speedup", "performance_vs_load", "graph_characterisation"]
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
