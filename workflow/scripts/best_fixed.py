from pathlib import Path

from pacml.runs import choose_best_fixed
from pacml.workflow import config_for_workflow, setup_job

sm = snakemake  # noqa: F821 - injected by Snakemake
setup_job(sm)
print(
    choose_best_fixed(Path(sm.input.graphs[0]).parent, config_for_workflow(sm.config), sm.wildcards.dist, sm.output[0])
)
