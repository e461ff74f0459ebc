from pathlib import Path

from pacml.workflow_api import setup_job, config_for_workflow, load_sweep

setup_job(snakemake)  # noqa: F821 - injected by Snakemake
sm = snakemake  # noqa: F821
cfg = config_for_workflow(sm.config)
load_sweep(Path(sm.input.graphs[0]).parent, cfg, sm.params.dist, list(sm.params.loads), list(sm.params.policies),
           cfg.workflow.test_seeds, sm.input.checkpoint, sm.output[0])
