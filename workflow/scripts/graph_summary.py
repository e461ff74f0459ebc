from pacml.graphs.commands import summary_table
from pacml.workflow import setup_job

sm = snakemake  # noqa: F821 - injected by Snakemake
setup_job(sm)
print(summary_table(list(sm.input), sm.output[0]))
