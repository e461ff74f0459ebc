from pacml.workflow_api import setup_job
from pacml.graphs.commands import summary_table

setup_job(snakemake)  # noqa: F821 - injected by Snakemake
print(summary_table(list(snakemake.input), snakemake.output[0]))  # noqa: F821
