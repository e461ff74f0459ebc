rule graphs:
    message:
        "Job graphs ({params.source}): {MODELS}"
    output:
        expand("results/graphs/{model}.json", model=MODELS),
    params:
        source=CFG.graphs.source,
        config_hash=GRAPHS_HASH,
    log:
        "results/logs/graphs.log",
    benchmark:
        "results/benchmarks/graphs.tsv"
    threads: 1
    resources:
        mem_mb=2000,
    conda:
        "../../envs/pacml.yaml"
    script:
        "../scripts/graphs.py"


rule graph_summary:
    message:
        "Characterising the job graphs"
    input:
        rules.graphs.output,
    output:
        report("results/graph_summary.csv", caption="../report/graph_summary.rst", category="Job graphs"),
    log:
        "results/logs/graph_summary.log",
    benchmark:
        "results/benchmarks/graph_summary.tsv"
    threads: 1
    resources:
        mem_mb=500,
    conda:
        "../../envs/pacml.yaml"
    script:
        "../scripts/graph_summary.py"
