from pacml.experiments import evaluate_policy
from pacml.runs import read_selection
from pacml.workflow import config_for_workflow, setup_job

sm = snakemake  # noqa: F821 - injected by Snakemake
setup_job(sm)
evaluate_policy(
    config_for_workflow(sm.config),
    sm.wildcards.exp,
    sm.input.graphs,
    sm.wildcards.xpolicy,
    sm.wildcards.xdist,
    int(sm.wildcards.seed),
    sm.output.metrics,
    sm.output.jobs,
    checkpoint=sm.input.checkpoint or None,
    selection=read_selection(sm.input.selection or None),
)
