from pacml.experiments import join_tables
from pacml.workflow import setup_job

sm = snakemake  # noqa: F821 - injected by Snakemake
setup_job(sm)
join_tables(list(sm.input), sm.output[0])
