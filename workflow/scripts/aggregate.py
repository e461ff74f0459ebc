from pacml.analysis import aggregate_dist, parent_metrics
from pacml.tracking import log_to_parent
from pacml.workflow import run_store, setup_job

sm = snakemake  # noqa: F821 - injected by Snakemake
setup_job(sm)
summary = aggregate_dist(list(sm.input.evals), sm.output.summary, sm.output.tidy, sm.input.selection)
log_to_parent(run_store(sm), sm.wildcards.dist, parent_metrics(summary), [sm.output.summary])
