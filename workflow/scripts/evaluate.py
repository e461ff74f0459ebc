from pathlib import Path

from pacml.workflow_api import setup_job, config_for_workflow, evaluate_tracked

setup_job(snakemake)  # noqa: F821 - injected by Snakemake
sm = snakemake  # noqa: F821
cfg = config_for_workflow(sm.config)
evaluate_tracked(Path(sm.input.graphs[0]).parent, sm.wildcards.policy, sm.wildcards.dist, cfg.workflow.test_seeds,
                 cfg, out=sm.output.metrics, records_csv=sm.output.jobs,
                 checkpoint=sm.input.checkpoint or None, replicate=int(sm.wildcards.seed),
                 mlflow_db=sm.params.db, experiment=sm.params.experiment, parents_json=sm.input.parents[0])
