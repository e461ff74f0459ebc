from pathlib import Path

from pacml.runs import select_on_validation
from pacml.workflow import config_for_workflow, setup_job

sm = snakemake  # noqa: F821 - injected by Snakemake
setup_job(sm)
print(
    select_on_validation(
        Path(sm.input.graphs[0]).parent, config_for_workflow(sm.config), sm.wildcards.dist, sm.output[0]
    )
)
