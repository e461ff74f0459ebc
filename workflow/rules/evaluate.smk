rule select:
    message:
        "Choosing best_fixed's degree and the planners' base policy for {wildcards.dist} on the validation seeds"
    input:
        graphs=rules.graphs.output,
    output:
        "results/{dist}/selection.json",
    params:
        config_hash=SELECT_HASH,
    log:
        "results/logs/select/{dist}.log",
    benchmark:
        "results/benchmarks/select/{dist}.tsv"
    threads: 1
    resources:
        mem_mb=1000,
    conda:
        "../../envs/pacml.yaml"
    script:
        "../scripts/select.py"


rule evaluate:
    message:
        "Evaluating {wildcards.policy} on {wildcards.dist} (replicate {wildcards.seed}) on the test seeds"
    input:
        graphs=rules.graphs.output,
        parents=rules.mlflow_init.output[0],
        checkpoint=checkpoint_input,
        selection=selection_input,
    output:
        metrics="results/{dist}/eval/{policy}_seed{seed}.json",
        jobs="results/{dist}/eval/{policy}_seed{seed}_jobs.csv",
    params:
        config_hash=evaluation_hash,
        store=TRACKING.store,
        experiment=TRACKING.experiment,
    log:
        "results/logs/evaluate/{dist}_{policy}_seed{seed}.log",
    benchmark:
        "results/benchmarks/evaluate/{dist}_{policy}_seed{seed}.tsv"
    threads: 1
    resources:
        mem_mb=2000,
    conda:
        "../../envs/pacml.yaml"
    script:
        "../scripts/evaluate.py"


rule aggregate:
    message:
        "Aggregating {wildcards.dist}: means and 95% confidence intervals over seeds"
    input:
        evals=expand("results/{{dist}}/eval/{policy}_seed{seed}.json", policy=POLICIES, seed=SEEDS),
        selection="results/{dist}/selection.json",
        parents=rules.mlflow_init.output[0],
    output:
        summary=report("results/{dist}/summary.csv", caption="../report/summary.rst", category="Tables",
                       subcategory="{dist}"),
        tidy="results/{dist}/metrics.csv",
    params:
        store=TRACKING.store,  # the parent run carries the distribution's summary
        experiment=TRACKING.experiment,
    log:
        "results/logs/aggregate/{dist}.log",
    benchmark:
        "results/benchmarks/aggregate/{dist}.tsv"
    threads: 1
    resources:
        mem_mb=1000,  # 386 MiB peak here, 510 MiB under CI's SLURM: 500 was killed there
    conda:
        "../../envs/pacml.yaml"
    script:
        "../scripts/aggregate.py"


rule summary:
    message:
        "The blocking-rate table over all distributions"
    input:
        tidy=expand("results/{dist}/metrics.csv", dist=DISTS),
        selection=expand("results/{dist}/selection.json", dist=DISTS),
    output:
        csv=report("results/summary.csv", caption="../report/summary.rst", category="Tables"),
        md="results/summary.md",
    log:
        "results/logs/summary.log",
    benchmark:
        "results/benchmarks/summary.tsv"
    threads: 1
    resources:
        mem_mb=1000,
    conda:
        "../../envs/pacml.yaml"
    script:
        "../scripts/summary.py"


rule load_sweep:
    message:
        "Performance vs offered load on {params.dist}"
    input:
        graphs=rules.graphs.output,
        checkpoint=f"results/{LOAD_SWEEP_DIST}/train/seed{SEEDS[0]}/best.pt",
    output:
        "results/load_sweep.csv",
    params:
        config_hash=LOAD_SWEEP_HASH,
        dist=LOAD_SWEEP_DIST,
        loads=list(CFG.figures.load_sweep_offered_loads),
        policies=list(CFG.figures.load_sweep_policies),
    log:
        "results/logs/load_sweep.log",
    benchmark:
        "results/benchmarks/load_sweep.tsv"
    threads: 1
    resources:
        mem_mb=2000,
    conda:
        "../../envs/pacml.yaml"
    script:
        "../scripts/load_sweep.py"
