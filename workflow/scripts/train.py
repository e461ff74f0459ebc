from pathlib import Path

from pacml.workflow_api import setup_job, config_for_workflow, train

log = setup_job(snakemake)  # noqa: F821 - injected by Snakemake
sm = snakemake  # noqa: F821
train(Path(sm.input.graphs[0]).parent, sm.wildcards.dist, int(sm.wildcards.seed), config_for_workflow(sm.config),
      out=Path(sm.output.checkpoint).parent, mlflow_db=sm.params.db, experiment=sm.params.experiment,
      parents_json=sm.input.parents[0], threads=sm.threads, log_file=log)
