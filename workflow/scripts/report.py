from pacml.report import write_report
from pacml.workflow import setup_job

sm = snakemake  # noqa: F821 - injected by Snakemake
setup_job(sm)
write_report(sm.params.snakefile, sm.params.config, list(sm.input), sm.output[0])
