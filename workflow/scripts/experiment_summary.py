from pacml.experiments import summarise_experiment
from pacml.workflow import config_for_workflow, setup_job

sm = snakemake  # noqa: F821 - injected by Snakemake
setup_job(sm)
summarise_experiment(
    sm.wildcards.exp, list(sm.input.evals), config_for_workflow(sm.config), sm.output.csv, sm.output.md,
    sm.output.png, sm.output.pdf,
)  # fmt: skip
