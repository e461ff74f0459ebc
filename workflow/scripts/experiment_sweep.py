from pacml.experiments import summarise_sweep
from pacml.workflow import config_for_workflow, setup_job

sm = snakemake  # noqa: F821 - injected by Snakemake
setup_job(sm)
summarise_sweep(
    sm.wildcards.sweep, list(sm.input), config_for_workflow(sm.config), sm.output.csv, sm.output.md,
    sm.output.png, sm.output.pdf,
)  # fmt: skip
