# Named generalisation experiments (`experiments:` in config.yaml; pacml.experiments):
#   snakemake --cores 2 experiments                                   # all of them
#   snakemake --cores 2 results/experiments/mixed_beta/summary.csv    # one
# Each experiment's jobs run in its own config (the workflow's, its overrides, its pools), and
# each job hashes the keys it reads in that config, like the main workflow's. Pools of the same
# models and graph keys share one graphs folder, results/experiments/graphs/<key> (graphs_key).


rule experiment_graphs:
    message:
        "Experiment graphs {wildcards.gkey}: {params.models} (first asked for by {params.exp}, {params.graph_pool} pool)"
    input:
        lambda w: pool_inputs(CFG, *GRAPH_POOLS[w.gkey]),  # PipeDream files; built-in names checked here
    output:
        directory("results/experiments/graphs/{gkey}"),
    params:
        models=lambda w: list(model_specs(CFG, experiment(CFG, GRAPH_POOLS[w.gkey][0]), GRAPH_POOLS[w.gkey][1])),
        exp=lambda w: GRAPH_POOLS[w.gkey][0],
        graph_pool=lambda w: GRAPH_POOLS[w.gkey][1],
    log:
        "results/logs/experiments/graphs/{gkey}.log",
    threads: 1
    resources:
        mem_mb=2000,
    conda:
        "../../envs/pacml.yaml"
    script:
        "../scripts/experiment_graphs.py"


rule experiment_select:
    message:
        "Experiment {wildcards.exp}: best_fixed and the planners' base on the {wildcards.pool} pool, {wildcards.xdist}"
    input:
        graphs=lambda w: EXPERIMENT_GRAPHS[(w.exp, w.pool)],
    output:
        "results/experiments/{exp}/{pool}/{xdist}/selection.json",
    params:
        config_hash=lambda w: section_hash(_cfg(w), *SELECTION_KEYS),
        tune_base=lambda w: tunes_base(CFG, w.exp, w.pool),  # only where a planner or a teacher reads it
    log:
        "results/logs/experiments/{exp}/select_{pool}_{xdist}.log",
    benchmark:
        "results/benchmarks/experiments/{exp}/select_{pool}_{xdist}.tsv"
    threads: 1
    resources:
        mem_mb=1000,
    conda:
        "../../envs/pacml.yaml"
    script:
        "../scripts/experiment_select.py"


rule experiment_train:
    message:
        "Experiment {wildcards.exp}: training PAC-ML on the {wildcards.pool} pool, {wildcards.xdist}, seed {wildcards.seed}"
    input:
        graphs=lambda w: EXPERIMENT_GRAPHS[(w.exp, w.pool)],
        selection=lambda w: (
            f"results/experiments/{w.exp}/{w.pool}/{w.xdist}/selection.json" if _cfg(w).imitation.iterations else []
        ),
    output:
        checkpoint="results/experiments/{exp}/{pool}/{xdist}/train/seed{seed}/best.pt",
        curve="results/experiments/{exp}/{pool}/{xdist}/train/seed{seed}/curve.json",
    params:
        config_hash=lambda w: section_hash(_cfg(w), *training_keys(_cfg(w))),
    log:
        "results/logs/experiments/{exp}/train_{pool}_{xdist}_seed{seed}.log",
    benchmark:
        "results/benchmarks/experiments/{exp}/train_{pool}_{xdist}_seed{seed}.tsv"
    threads: CFG.ppo.torch_threads
    resources:
        mem_mb=3000,
    conda:
        "../../envs/pacml.yaml"
    script:
        "../scripts/experiment_train.py"


rule experiment_evaluate:
    message:
        "Experiment {wildcards.exp}: {wildcards.xpolicy} on the test pool, {wildcards.xdist}, replicates "
        + ", ".join(map(str, SEEDS))
    input:
        graphs=lambda w: EXPERIMENT_GRAPHS[(w.exp, "test")],
        checkpoints=experiment_checkpoints,
        selection=experiment_selection,
    output:
        # one job a policy: a seedless one plays once for every replicate, an agent loads torch once
        metrics=expand("results/experiments/{{exp}}/test/{{xdist}}/eval/{{xpolicy}}_seed{seed}.json", seed=SEEDS),
        jobs=expand("results/experiments/{{exp}}/test/{{xdist}}/eval/{{xpolicy}}_seed{seed}_jobs.csv", seed=SEEDS),
    params:
        config_hash=experiment_evaluation_hash,
        replicates=SEEDS,
    log:
        "results/logs/experiments/{exp}/evaluate_{xdist}_{xpolicy}.log",
    benchmark:
        "results/benchmarks/experiments/{exp}/evaluate_{xdist}_{xpolicy}.tsv"
    threads: 1
    resources:
        mem_mb=2000,
    conda:
        "../../envs/pacml.yaml"
    script:
        "../scripts/experiment_evaluate.py"


rule experiment_summary:
    message:
        "Experiment {wildcards.exp}: table and figure"
    input:
        evals=lambda w: expand(
            "results/experiments/{exp}/test/{xdist}/eval/{xpolicy}_seed{seed}.json",
            exp=w.exp,
            xdist=experiment(CFG, w.exp).distributions,
            xpolicy=experiment_policies(CFG, w.exp),
            seed=SEEDS,
        ),
    output:
        csv=report("results/experiments/{exp}/summary.csv", caption="../report/experiment.rst", category="Experiments",
                   subcategory="{exp}"),
        md="results/experiments/{exp}/summary.md",
        png=report("results/experiments/{exp}/figure.png", caption="../report/experiment.rst", category="Experiments",
                   subcategory="{exp}"),
        pdf="results/experiments/{exp}/figure.pdf",
    params:
        description=lambda w: experiment(CFG, w.exp).description,
    log:
        "results/logs/experiments/{exp}/summary.log",
    threads: 1
    resources:
        mem_mb=1000,
    conda:
        "../../envs/pacml.yaml"
    script:
        "../scripts/experiment_summary.py"


rule experiment_sweep:
    message:
        "Sweep {wildcards.sweep}: its settings in one table and figure"
    input:
        lambda w: expand("results/experiments/{exp}/summary.csv", exp=SWEEPS[w.sweep]),
    output:
        csv=report("results/experiments/{sweep}/summary.csv", caption="../report/sweep.rst", category="Experiments",
                   subcategory="{sweep}"),
        md="results/experiments/{sweep}/summary.md",
        png=report("results/experiments/{sweep}/figure.png", caption="../report/sweep.rst", category="Experiments",
                   subcategory="{sweep}"),
        pdf="results/experiments/{sweep}/figure.pdf",
    log:
        "results/logs/experiments/{sweep}/sweep.log",
    threads: 1
    resources:
        mem_mb=1000,
    conda:
        "../../envs/pacml.yaml"
    script:
        "../scripts/experiment_sweep.py"


rule experiments_table:
    message:
        "The experiments' tables in one file"
    input:
        expand("results/experiments/{exp}/summary.md", exp=TABLED),
    output:
        "results/experiments/summary.md",
    log:
        "results/logs/experiments/summary.log",
    threads: 1
    resources:
        mem_mb=1000,
    conda:
        "../../envs/pacml.yaml"
    script:
        "../scripts/experiments_table.py"


rule experiments_report:
    message:
        "Writing the experiments' Snakemake HTML report"
    input:
        expand("results/experiments/{exp}/summary.csv", exp=EXPERIMENTS + list(SWEEPS)),
        expand("results/experiments/{exp}/figure.png", exp=EXPERIMENTS + list(SWEEPS)),
        summary_md="results/experiments/summary.md",
    output:
        "results/experiments/report.html",
    params:
        config_digest=config_digest(config),  # the report prints the config: any edit writes it again
        snakefile=workflow.main_snakefile,
        title="pacml: the experiments",
    log:
        "results/logs/experiments/report.log",
    threads: 1
    resources:
        mem_mb=1000,
    conda:
        "../../envs/pacml.yaml"
    script:
        "../scripts/report.py"


rule experiments:
    input:
        "results/experiments/summary.md",
        "results/experiments/report.html",
        expand("results/experiments/{exp}/summary.csv", exp=EXPERIMENTS + list(SWEEPS)),
        EXPERIMENT_FIGURES,
