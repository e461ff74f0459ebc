from pacml.workflow import build_graphs, config_for_workflow, setup_job

sm = snakemake  # noqa: F821 - injected by Snakemake
setup_job(sm)
build_graphs(config_for_workflow(sm.config), list(sm.output))
