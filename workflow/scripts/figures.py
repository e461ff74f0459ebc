from pacml.plotting import make_figures
from pacml.workflow import config_for_workflow, setup_job

sm = snakemake  # noqa: F821 - injected by Snakemake
setup_job(sm)
make_figures(config_for_workflow(sm.config), sm.input, list(sm.output.figures), sm.output.decisions, sm.output.overhead)
