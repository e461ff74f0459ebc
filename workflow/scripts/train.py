from pathlib import Path

from pacml.runs import read_selection
from pacml.train.starts import train_agent
from pacml.workflow import config_for_workflow, run_store, setup_job

sm = snakemake  # noqa: F821 - injected by Snakemake
log = setup_job(sm)
train_agent(
    Path(sm.input.graphs[0]).parent,
    sm.wildcards.dist,
    int(sm.wildcards.seed),
    config_for_workflow(sm.config),
    out=Path(sm.output.checkpoint).parent,
    store=run_store(sm),
    threads=sm.threads,
    log_file=log,
    selection=read_selection(sm.input.selection or None),
)
