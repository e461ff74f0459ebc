from pacml.analysis import aggregate_dist
from pacml.workflow import setup_job

sm = snakemake  # noqa: F821 - injected by Snakemake
setup_job(sm)
aggregate_dist(list(sm.input.evals), sm.output.summary, sm.output.tidy, sm.input.selection)
