from pathlib import Path

from pacml.runs import load_sweep
from pacml.workflow import config_for_workflow, setup_job

sm = snakemake  # noqa: F821 - injected by Snakemake
setup_job(sm)
cfg = config_for_workflow(sm.config)
load_sweep(
    Path(sm.input.graphs[0]).parent,
    cfg,
    sm.params.dist,
    list(sm.params.loads),
    list(sm.params.policies),
    cfg.workflow.test_seeds,
    sm.input.checkpoint,
    sm.output[0],
)
