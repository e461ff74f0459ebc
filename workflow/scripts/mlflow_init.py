from pacml.workflow import init_tracking, setup_job

sm = snakemake  # noqa: F821 - injected by Snakemake
setup_job(sm)
print(init_tracking(sm.params.store, sm.params.experiment, [sm.wildcards.dist], sm.output[0]))
