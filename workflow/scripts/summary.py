from pacml.workflow_api import setup_job
from pacml.analysis import summarise_all

setup_job(snakemake)  # noqa: F821 - injected by Snakemake
print(summarise_all(list(snakemake.input), snakemake.output.csv, snakemake.output.md))  # noqa: F821
