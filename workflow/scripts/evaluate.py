from pathlib import Path

from pacml.runs import evaluate, read_selection
from pacml.workflow import config_for_workflow, run_store, setup_job

sm = snakemake  # noqa: F821 - injected by Snakemake
setup_job(sm)
cfg = config_for_workflow(sm.config)
evaluate(
    Path(sm.input.graphs[0]).parent,
    sm.wildcards.policy,
    sm.wildcards.dist,
    cfg.workflow.test_seeds,
    cfg,
    out=sm.output.metrics,
    records_csv=sm.output.jobs,
    checkpoint=sm.input.checkpoint or None,
    replicate=int(sm.wildcards.seed),
    store=run_store(sm),
    selection=read_selection(sm.input.selection or None),
)
