from pacml.experiments import evaluate_replicates
from pacml.runs import read_selection
from pacml.workflow import config_for_workflow, setup_job

sm = snakemake  # noqa: F821 - injected by Snakemake
setup_job(sm)
evaluate_replicates(
    config_for_workflow(sm.config),
    sm.wildcards.exp,
    sm.input.graphs,
    sm.wildcards.xpolicy,
    sm.wildcards.xdist,
    sm.params.replicates,
    sm.output.metrics,
    sm.output.jobs,
    checkpoints=list(sm.input.checkpoints),
    selection=read_selection(sm.input.selection or None),
)
