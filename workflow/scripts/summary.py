from pacml.analysis import summarise_all
from pacml.workflow import setup_job

sm = snakemake  # noqa: F821 - injected by Snakemake
setup_job(sm)
print(summarise_all(list(sm.input.tidy), sm.output.csv, sm.output.md, list(sm.input.selection)))
