from pacml.workflow_api import setup_job, build_graphs, config_for_workflow

setup_job(snakemake)  # noqa: F821 - injected by Snakemake
build_graphs(config_for_workflow(snakemake.config), list(snakemake.output))  # noqa: F821
