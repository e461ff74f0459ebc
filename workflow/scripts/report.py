from pacml.workflow_api import setup_job, write_report

setup_job(snakemake)  # noqa: F821 - injected by Snakemake
sm = snakemake  # noqa: F821
write_report(sm.params.snakefile, sm.params.config, list(sm.input), sm.output[0])
