from pacml.experiments import build_pool_graphs
from pacml.workflow import config_for_workflow, setup_job

sm = snakemake  # noqa: F821 - injected by Snakemake
setup_job(sm)
print(build_pool_graphs(config_for_workflow(sm.config), sm.params.exp, sm.params.graph_pool, sm.output[0]))
