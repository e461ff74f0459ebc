# pacml: graphs -> seed-replicated training per JCT distribution -> evaluation against
# maximum parallelisation and the other baselines -> tables, figures and a report.
#
#   snakemake --cores 2                       # everything under results/
#   snakemake -n                              # dry run: what would run
#   snakemake --cores 2 results/beta_c/summary.csv --forcerun=train    # one distribution
#   snakemake --cores 2 --config workflow='{scale: smoke}'             # a smaller scale
#
# The config is validated (schema, then pacml's typed config) before any job starts.

configfile: "config.yaml"


include: "workflow/rules/common.smk"
include: "workflow/rules/graphs.smk"
include: "workflow/rules/train.smk"
include: "workflow/rules/evaluate.smk"
include: "workflow/rules/report.smk"


rule all:
    input:
        "results/graph_summary.csv",
        "results/summary.csv",
        "results/summary.md",
        FIGURES,
        "results/report.html",
    default_target: True
