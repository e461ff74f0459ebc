from pathlib import Path

from pacml.experiments import pool_config
from pacml.runs import read_selection
from pacml.train.starts import train_agent
from pacml.workflow import config_for_workflow, setup_job

sm = snakemake  # noqa: F821 - injected by Snakemake
log = setup_job(sm)
train_agent(
    sm.input.graphs,
    sm.wildcards.xdist,
    int(sm.wildcards.seed),
    pool_config(config_for_workflow(sm.config), sm.wildcards.exp, sm.wildcards.pool),
    out=Path(sm.output.checkpoint).parent,
    threads=sm.threads,
    log_file=log,
    selection=read_selection(sm.input.selection or None),
)
