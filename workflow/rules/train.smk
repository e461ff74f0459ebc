rule mlflow_init:
    message:
        "The MLflow store and {wildcards.dist}'s parent run"
    output:
        "results/mlflow/parents/{dist}.json",
    params:
        store=TRACKING.store,
        experiment=TRACKING.experiment,
    log:
        "results/logs/mlflow_init/{dist}.log",
    benchmark:
        "results/benchmarks/mlflow_init/{dist}.tsv"
    threads: 1
    resources:
        mem_mb=1000,
    conda:
        "../../envs/pacml.yaml"
    script:
        "../scripts/mlflow_init.py"


rule train:
    message:
        "Training PAC-ML on {wildcards.dist}, seed {wildcards.seed}"
    input:
        graphs=rules.graphs.output,
        parents=rules.mlflow_init.output[0],
        selection=teacher_input,
    output:
        checkpoint="results/{dist}/train/seed{seed}/best.pt",
        curve="results/{dist}/train/seed{seed}/curve.json",
    params:
        config_hash=TRAIN_HASH,
        store=TRACKING.store,
        experiment=TRACKING.experiment,
    log:
        "results/logs/train/{dist}_seed{seed}.log",
    benchmark:
        "results/benchmarks/train/{dist}_seed{seed}.tsv"
    threads: CFG.ppo.torch_threads
    resources:
        mem_mb=3000,
    conda:
        "../../envs/pacml.yaml"
    script:
        "../scripts/train.py"
