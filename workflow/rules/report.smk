rule figures:
    message:
        "Regenerating the paper's figures"
    input:
        tidy=expand("results/{dist}/metrics.csv", dist=DISTS),
        curves=expand("results/{dist}/train/seed{seed}/curve.json", dist=DISTS, seed=SEEDS),
        jobs=expand("results/{dist}/eval/{policy}_seed{seed}_jobs.csv", dist=DISTS, policy=POLICIES, seed=SEEDS[:1]),
        load_sweep=rules.load_sweep.output,
        graph_summary=rules.graph_summary.output,
    output:
        figures=[report(f, caption="../report/figures.rst", category="Figures") for f in FIGURES],
        decisions="results/decisions.csv",
    log:
        "results/logs/figures.log",
    benchmark:
        "results/benchmarks/figures.tsv"
    threads: 1
    resources:
        mem_mb=2000,
    conda:
        "../../envs/pacml.yaml"
    script:
        "../scripts/figures.py"


rule report:
    message:
        "Writing the Snakemake HTML report"
    input:
        FIGURES,
        "results/summary.csv",
        "results/decisions.csv",
        "results/graph_summary.csv",
        expand("results/{dist}/summary.csv", dist=DISTS),
    output:
        "results/report.html",
    params:
        config=config,
        snakefile=workflow.main_snakefile,
    log:
        "results/logs/report.log",
    threads: 1
    resources:
        mem_mb=1000,
    conda:
        "../../envs/pacml.yaml"
    script:
        "../scripts/report.py"
