# pacml: graphs -> seed-replicated training per JCT distribution -> evaluation against
# maximum parallelisation and the other baselines -> tables, figures and a report.
#
#   snakemake --cores 2                       # everything under results/
#   snakemake -n                              # dry run: what would run
#   snakemake --cores 2 results/beta_c/summary.csv --forcerun=train    # one distribution
#   snakemake --cores 2 --config workflow='{scale: smoke}'             # a smaller scale
#
# The config is validated (schema, then pacml's typed config) before any job starts.

import os
import time

from pacml.report import FRONT_PAGE_ENV


configfile: "config.yaml"
# The report's front page: the report rule writes one with the run's summary (pacml.report)
report: os.environ.get(FRONT_PAGE_ENV, "workflow/report/workflow.rst")


include: "workflow/rules/common.smk"
include: "workflow/rules/graphs.smk"
include: "workflow/rules/train.smk"
include: "workflow/rules/evaluate.smk"
include: "workflow/rules/report.smk"
include: "workflow/rules/experiments.smk"


WORKFLOW_START_S = time.time()


onerror:
    # A SLURM job killed over its memory or time limit says so only in its SLURM log (the
    # executor plugin reports FAILED); print SLURM's own words here, in Snakemake's output.
    from pacml.workflow import slurm_errors

    for line in slurm_errors(".snakemake/slurm_logs", WORKFLOW_START_S):
        print(f"SLURM: {line}")


rule all:
    input:
        "results/graph_summary.csv",
        "results/summary.csv",
        "results/summary.md",
        FIGURES,
        "results/report.html",
    default_target: True
