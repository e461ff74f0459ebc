from pacml.workflow_api import setup_job
from pacml.analysis import aggregate_dist

setup_job(snakemake)  # noqa: F821 - injected by Snakemake
aggregate_dist(list(snakemake.input), snakemake.output.summary, snakemake.output.tidy)  # noqa: F821
