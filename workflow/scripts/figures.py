from pacml.plotting import make_figures
from pacml.workflow_api import config_for_workflow, setup_job

setup_job(snakemake)  # noqa: F821 - injected by Snakemake
sm = snakemake  # noqa: F821
make_figures(config_for_workflow(sm.config), sm.input, list(sm.output))
