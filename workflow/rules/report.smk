rule figures:
    message:
        "Regenerating the paper's figures"
    input:
        tidy=expand("results/{dist}/metrics.csv", dist=DISTS),
        summaries=expand("results/{dist}/summary.csv", dist=DISTS),  # means and CIs, as aggregate made them
        curves=expand("results/{dist}/train/seed{seed}/curve.json", dist=DISTS, seed=SEEDS),
        jobs=expand("results/{dist}/eval/{policy}_seed{seed}_jobs.csv", dist=DISTS, policy=POLICIES, seed=SEEDS[:1]),
        load_sweep=rules.load_sweep.output,
        graph_summary=rules.graph_summary.output,
        graphs=rules.graphs.output,  # the network-overhead figure simulates their steps
    output:
        # the PNG of each figure in the report, with its own caption; the PDF beside it
        figures=[
            report(f, caption=f"../report/figures/{Path(f).stem}.rst", category="Figures") if f.endswith(".png") else f
            for f in FIGURES
        ],
        decisions="results/decisions.csv",
        overhead="results/network_overhead.csv",
    params:
        # what the captions say (workflow/report/figures/)
        scale=CFG.workflow.scale,
        graphs=CFG.graphs.source,
        train_seeds=len(SEEDS),
        test_seeds=len(CFG.workflow.test_seeds),
        n=len(SEEDS) * len(CFG.workflow.test_seeds),
        load_sweep_dist=LOAD_SWEEP_DIST,
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
        summary_md="results/summary.md",
    output:
        "results/report.html",
    params:
        config_digest=config_digest(config),  # the report prints the config: any edit writes it again
        snakefile=workflow.main_snakefile,
        title="pacml: PAC-ML against maximum parallelisation",
    log:
        "results/logs/report.log",
    threads: 1
    resources:
        mem_mb=1000,
    conda:
        "../../envs/pacml.yaml"
    script:
        "../scripts/report.py"
