from pacml.workflow_api import setup_job, init_tracking

setup_job(snakemake)  # noqa: F821 - injected by Snakemake
p = snakemake.params  # noqa: F821
print(init_tracking(p.db, p.experiment, list(p.dists), snakemake.output[0]))  # noqa: F821
