from pacml.experiments import pool_config
from pacml.runs import select_on_validation
from pacml.workflow import config_for_workflow, setup_job

sm = snakemake  # noqa: F821 - injected by Snakemake
setup_job(sm)
cfg = pool_config(config_for_workflow(sm.config), sm.wildcards.exp, sm.wildcards.pool)
print(select_on_validation(sm.input.graphs, cfg, sm.wildcards.xdist, sm.output[0], sm.params.tune_base))
