"""Generalisation experiments: mixtures of β distributions, each experiment's config and the
errors that name its keys, reuse of the main workflow's jobs, and a smoke-sized run."""

from __future__ import annotations

import numpy as np
import pytest
import yaml

from pacml.config import load_config
from pacml.errors import ConfigError
from pacml.experiments import (
    build_pool_graphs,
    check_experiments,
    experiment,
    experiment_policies,
    experiments,
    graphs_key,
    model_specs,
    pool_config,
    pool_inputs,
    reuses_main,
    sweep_settings,
    transfer_checkpoint,
)
from pacml.sim.workload import episode_pmf

from conftest import ROOT, chain_graph

MIX = "distributions.mix={kind: mixture, components: [x, y]}"
X_AND_Y = ["distributions.x={kind: uniform, min: 0.1, max: 0.2, decimals: 1}",
           "distributions.y={kind: uniform, min: 0.2, max: 0.4, decimals: 1}"]  # fmt: skip


def test_a_mixture_averages_its_components_by_hand():
    cfg = load_config(None, [*X_AND_Y, MIX])
    pmf = episode_pmf(cfg.distributions, "mix", np.random.default_rng(0))
    # x: 0.1 and 0.2 at 1/2 each; y: 0.2, 0.3, 0.4 at 1/3 each; equal weights
    assert pmf.support.tolist() == [0.1, 0.2, 0.3, 0.4]
    assert pmf.probs == pytest.approx([1 / 4, 1 / 4 + 1 / 6, 1 / 6, 1 / 6])
    assert pmf.mean == pytest.approx((0.15 + 0.3) / 2)


def test_a_mixture_of_the_paper_distributions_draws_from_each():
    cfg = load_config(None, ["distributions.mix={kind: mixture, components: [beta_a, beta_b, beta_c, beta_d]}"])
    pmf = episode_pmf(cfg.distributions, "mix", np.random.default_rng(3))
    parts = [episode_pmf(cfg.distributions, d, np.random.default_rng(3)) for d in ("beta_a",)]
    assert pmf.probs.sum() == pytest.approx(1.0)
    assert pmf.mean == pytest.approx(np.mean([0.55, 0.285, 0.48, 0.72]), abs=0.03)  # paper.md's means
    assert set(parts[0].support) <= set(pmf.support)


@pytest.mark.parametrize(
    ("overrides", "key"),
    [
        (["distributions.m={kind: mixture}"], "distributions.m.components"),
        (["distributions.m={kind: mixture, components: [nosuch]}"], r"distributions.m.components\[0\]"),
        ([*X_AND_Y, MIX, "distributions.m2={kind: mixture, components: [mix]}"], r"distributions.m2.components\[0\]"),
        (["distributions.m={kind: uniform, components: [beta_a]}"], "distributions.m.components"),
    ],
)
def test_a_bad_mixture_names_its_key(overrides, key):
    with pytest.raises(ConfigError, match=key):
        load_config(None, overrides)


def _experiment(text: str, *extra: str):
    return load_config(None, [f"experiments.e={text}", *extra])


def test_an_experiments_config_has_its_overrides_and_its_pools():
    cfg = _experiment(
        "{train_models: [alexnet, gpt2], test_models: [resnet18], distributions: [beta_c],"
        " overrides: {agent.feature_scales: fixed, planning.horizon: 7}}"
    )
    train, test = pool_config(cfg, "e", "train"), pool_config(cfg, "e", "test")
    assert train.graphs.models == ("alexnet", "gpt2") and test.graphs.models == ("resnet18",)
    assert train.agent.feature_scales == test.agent.feature_scales == "fixed"
    assert train.planning.horizon == 7 and cfg.planning.horizon == 150
    assert train.workflow.distributions == ("beta_c",)
    # empty pools: the workflow's own
    plain = _experiment("{}")
    assert model_specs(plain, plain.experiments["e"], "test") == tuple(cfg.graphs.models)
    piped = load_config(None, ["graphs.source=pipedream", "experiments.e={}"])
    assert model_specs(piped, piped.experiments["e"], "train")[0] == "pipedream:alexnet"


def test_a_new_distribution_in_an_experiment_stays_in_the_experiment():
    cfg = _experiment(f"{{train_distribution: mix, overrides: {{{MIX.replace('=', ': ')}}}}}", *X_AND_Y)
    assert "mix" not in cfg.distributions
    assert pool_config(cfg, "e", "train").distributions["mix"].components == ("x", "y")


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("{distributions: [nosuch]}", r"experiments.e.distributions\[0\]"),
        ("{distributions: []}", "experiments.e.distributions"),
        ("{train_distribution: nosuch}", "experiments.e.train_distribution"),
        ("{baselines: [para_max, fixed-99]}", r"experiments.e.baselines\[1\]"),
        ("{nosuch: 1}", "experiments.e.nosuch"),
        ("{overrides: {agent.nosuch: 1}}", "experiments.e.overrides.agent.nosuch"),
        ("{overrides: {workflow.train_seeds: [5]}}", "experiments.e.overrides.workflow.train_seeds"),
        ("{overrides: {agent.feature_scales: sometimes}}", "experiments.e.overrides: agent.feature_scales"),
        ("{overrides: {cluster.nosuch.deeper: 1}}", "experiments.e.overrides.cluster.nosuch.deeper"),
        ("{test_models: [alexnet, pipedream:alexnet]}", "experiments.e.test_models"),
        ("{sweep: {cluster.placement: [ddls], cluster.max_degree: [8]}}", "experiments.e.sweep"),
        ("{sweep: {cluster.placement: [compact, compact]}}", r"experiments.e.sweep.cluster.placement.*distinct"),
        ("{sweep: {cluster.max_degree: []}}", r"experiments.e.sweep.cluster.max_degree.*at least one"),
        ("{sweep: {cluster.placement: [ddls, tight]}}", r"experiments.e.sweep \(tight\): cluster.placement"),
        ("{sweep: {cluster.nosuch: [1]}}", r"experiments.e.sweep \(1\).cluster.nosuch"),
        (
            "{sweep: {cluster.max_degree: [8]}, overrides: {cluster.max_degree: 4}}",
            "experiments.e.sweep.cluster.max_degree",
        ),
        ("{train_in: main, train_models: [alexnet]}", "experiments.e.train_in"),
        ("{train_in: elsewhere}", "experiments.e.train_in"),
        ("{reference: false}", "experiments.e.reference"),
        ("{train_in: main, train_overrides: {trace.first_row: 5}}", "experiments.e.train_overrides"),
        ("{train_overrides: {trace.nosuch: 5}}", "experiments.e.train_overrides.trace.nosuch"),
        ("{setting_overrides: {8: {imitation.iterations: 2}}}", "experiments.e.setting_overrides"),
        (
            "{sweep: {cluster.max_degree: [4, 8]}, setting_overrides: {16: {imitation.iterations: 2}}}",
            r"experiments.e.setting_overrides.16.*not a value of the sweep",
        ),
        (
            "{sweep: {cluster.max_degree: [4, 8]}, setting_overrides: {8: {cluster.max_degree: 2}}}",
            r"experiments.e.setting_overrides.8.cluster.max_degree.*the sweep sets",
        ),
        (
            "{sweep: {cluster.max_degree: [4, 8]}, setting_overrides: {8: {imitation.nosuch: 2}}}",
            "experiments.e.setting_overrides.8.imitation.nosuch",
        ),
        (
            "{sweep: {cluster.max_degree: [4, 8]}, setting_overrides: {8: {imitation.iterations: many}}}",
            "experiments.e.setting_overrides.8: imitation.iterations",
        ),
    ],
)
def test_a_bad_experiment_names_its_key(text, key):
    with pytest.raises(ConfigError, match=key):
        check_experiments(_experiment(text, "workflow.distributions=[beta_a]"))


def test_a_sweep_is_one_experiment_a_value():
    cfg = _experiment(
        "{sweep: {cluster.placement: [ddls, compact]}, baselines: [para_max], overrides: {cluster.max_degree: 8}}"
    )
    assert list(experiments(cfg)) == ["e/ddls", "e/compact"] and sweep_settings(cfg) == {"e": ["e/ddls", "e/compact"]}
    for name, placement in (("e/ddls", "ddls"), ("e/compact", "compact")):
        test = pool_config(cfg, name, "test")
        assert test.cluster.placement == placement and test.cluster.max_degree == 8
        assert experiment_policies(cfg, name) == ["pacml", "para_max"]  # the agents under test are the reference
    paper = _experiment("{sweep: {cluster.placement: [ddls, compact]}}")
    assert reuses_main(paper, "e/ddls", "agents") and not reuses_main(paper, "e/compact", "agents")
    # a number's setting is named as YAML writes it
    loads = _experiment("{sweep: {workload.offered_load: [0.5, 2]}}")
    assert list(experiments(loads)) == ["e/0.5", "e/2"]
    assert pool_config(loads, "e/2", "test").workload.offered_load == 2.0


def test_setting_overrides_change_one_setting_alone():
    cfg = _experiment(
        "{sweep: {cluster.servers_per_rack: [1, 2]}, overrides: {imitation.iterations: 4},"
        " setting_overrides: {2: {imitation.episodes_per_iteration: 1}}}"
    )
    one, two = (pool_config(cfg, f"e/{s}", pool) for s, pool in (("1", "test"), ("2", "test")))
    assert (one.imitation.iterations, one.imitation.episodes_per_iteration) == (4, cfg.imitation.episodes_per_iteration)
    assert (
        (two.imitation.iterations, two.imitation.episodes_per_iteration)
        == (4, 1)
        != (4, one.imitation.episodes_per_iteration)
    )
    assert pool_config(cfg, "e/2", "train").imitation.episodes_per_iteration == 1
    assert experiment(cfg, "e/2").setting_overrides == {}


def test_agents_from_the_main_workflow_are_the_agents_under_test():
    cfg = _experiment(
        "{train_in: main, reference: false, baselines: [para_max], overrides: {cluster.placement: compact}}"
    )
    assert experiment_policies(cfg, "e") == ["pacml_transfer", "para_max"]
    assert transfer_checkpoint(cfg, "e", "beta_a", 2) == "results/beta_a/train/seed2/best.pt"
    # a distribution the main workflow does not train on is named when its agents are asked for
    narrow = _experiment("{train_in: main, distributions: [beta_b]}", "workflow.distributions=[beta_a]")
    with pytest.raises(ConfigError, match=r"experiments\.e\.train_in.*trains no agents on beta_b"):
        transfer_checkpoint(narrow, "e", "beta_b", 0)
    elsewhere = _experiment("{train_distribution: beta_d}")
    assert transfer_checkpoint(elsewhere, "e", "beta_a", 1) == "results/experiments/e/train/beta_d/train/seed1/best.pt"
    both = _experiment("{train_in: main, overrides: {cluster.placement: compact}}")
    assert experiment_policies(both, "e") == ["pacml_transfer", "pacml", "para_max", "best_fixed"]


def test_train_overrides_change_the_training_pool_alone():
    cfg = _experiment(
        "{overrides: {trace.path: t.csv, trace.first_row: 100}, train_overrides: {trace.first_row: 0, trace.last_row: 100},"
        " reference: false}"
    )
    train, test = pool_config(cfg, "e", "train"), pool_config(cfg, "e", "test")
    assert (train.trace.first_row, train.trace.last_row) == (0, 100)
    assert (test.trace.first_row, test.trace.last_row) == (100, None) and train.trace.path == test.trace.path
    assert experiment_policies(cfg, "e") == ["pacml_transfer", "para_max", "best_fixed"]


def test_reference_settings_train_reference_agents_in_those_settings_alone():
    cfg = _experiment(
        "{train_in: main, reference_settings: [1, 4], baselines: [para_max], sweep: {cluster.servers_per_rack: [1, 2, 4]}}"
    )
    policies = {name: experiment_policies(cfg, name) for name in experiments(cfg)}
    assert policies == {
        "e/1": ["pacml_transfer", "pacml", "para_max"],
        "e/2": ["pacml_transfer", "para_max"],
        "e/4": ["pacml_transfer", "pacml", "para_max"],
    }
    assert experiment(cfg, "e/2").reference is False and experiment(cfg, "e/4").reference is True


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{train_in: main, reference_settings: [3], sweep: {cluster.servers_per_rack: [1, 2]}}",
         r"experiments\.e\.reference_settings\[0\].*not a value of the sweep"),
        ("{train_in: main, reference_settings: [1]}", r"experiments\.e\.reference_settings.*needs a sweep"),
        ("{train_in: main, reference: false, reference_settings: [1], sweep: {cluster.servers_per_rack: [1, 2]}}",
         r"experiments\.e\.reference_settings.*reference: true"),
    ],
)  # fmt: skip
def test_bad_reference_settings_name_their_key(text, message):
    with pytest.raises(ConfigError, match=message):
        check_experiments(_experiment(text))


def test_a_sweep_whose_train_overrides_set_its_key_trains_one_set_of_agents():
    cfg = _experiment(
        "{reference: false, sweep: {workload.offered_load: [0.5, 2]}, overrides: {agent.load_feature: true},"
        " train_overrides: {workload.offered_load: null, workload.offered_load_range: [0.25, 4]}}"
    )
    train, other = (pool_config(cfg, name, "train") for name in ("e/0.5", "e/2"))
    assert train == other  # every setting's training pool is the same config
    assert train.workload.offered_load is None and train.workload.offered_load_range == (0.25, 4.0)
    assert pool_config(cfg, "e/2", "test").workload.offered_load == 2.0
    assert pool_config(cfg, "e/2", "test").workload.offered_load_range is None
    for name in ("e/0.5", "e/2"):
        assert (
            transfer_checkpoint(cfg, name, "beta_a", 1) == "results/experiments/e/0.5/train/beta_a/train/seed1/best.pt"
        )
    # train_overrides that leave the sweep's key alone: each setting trains its own
    own = _experiment("{sweep: {workload.offered_load: [0.5, 2]}, train_overrides: {cluster.max_degree: 8}}")
    assert transfer_checkpoint(own, "e/2", "beta_a", 0) == "results/experiments/e/2/train/beta_a/train/seed0/best.pt"


@pytest.mark.parametrize(
    ("text", "teacher", "tuned"),
    [
        ("{train_in: main, reference: false}", "tuned", False),  # nothing trains or plans here
        ("{train_in: main, reference: false, baselines: [rollout]}", "best_fixed", True),  # a planner is evaluated
        ("{train_in: main}", "best_fixed", False),  # the reference agents' teacher continues with best_fixed
        ("{train_in: main}", "tuned", True),  # ... or with the tuned base
        ("{train_in: main}", "planning", True),  # ... or with planning.base_policy (tuned)
    ],
)
def test_the_planners_base_is_tuned_only_where_something_reads_it(text, teacher, tuned):
    from pacml.experiments import tunes_base

    cfg = _experiment(
        text, "planning.base_policy=tuned", "imitation.iterations=2", f"imitation.teacher_base_policy={teacher}"
    )
    assert tunes_base(cfg, "e", "test") is tuned
    assert pool_config(cfg, "e", "test").planning.base_policy == "tuned"  # the config is the user's
    no_imitation = _experiment(
        text, "planning.base_policy=tuned", "imitation.iterations=0", f"imitation.teacher_base_policy={teacher}"
    )
    assert tunes_base(no_imitation, "e", "test") is ("rollout" in text)


def test_a_seedless_policy_plays_once_and_writes_what_each_replicate_would(tmp_path, monkeypatch):
    import pacml.policies.base
    from pacml.experiments import evaluate_replicates
    from pacml.graphs.pipedream import write_pipedream

    from conftest import TOY_CLUSTER, chain_graph

    write_pipedream(chain_graph("toy", 3, 2e-3, 2e8), tmp_path / "toy.txt")
    cfg = _experiment(
        "{test_models: [pipedream:toy], train_in: main, reference: false}",
        f"graphs.pipedream_dir={tmp_path}", "workflow.test_seeds=[100, 101]", *TOY_CLUSTER,
    )  # fmt: skip

    def run(policy, tag):
        outs = [tmp_path / f"{tag}_{policy}_{r}.json" for r in (0, 1, 2)]
        csvs = [tmp_path / f"{tag}_{policy}_{r}.csv" for r in (0, 1, 2)]
        rows = evaluate_replicates(cfg, "e", tmp_path, policy, "beta_a", [0, 1, 2], outs, csvs)
        return rows, [p.read_bytes() for p in outs + csvs]

    for policy in ("para_max", "oracle", "fixed-2"):
        rows, once = run(policy, "once")
        assert [(r["replicate"], r["seed"]) for r in rows] == [
            (0, 100),
            (0, 101),
            (1, 100),
            (1, 101),
            (2, 100),
            (2, 101),
        ]
        with monkeypatch.context() as m:  # every replicate played on its own
            m.setattr(pacml.policies.base, "is_seedless", lambda name: False)
            assert run(policy, "each")[1] == once, policy
    rows, _ = run("random", "once")  # a policy that draws: its replicates differ
    assert rows[0]["blocking_rate"] != rows[2]["blocking_rate"] or rows[0]["mean_degree"] != rows[2]["mean_degree"]


def test_a_model_with_no_profile_is_named_by_its_key(tmp_path):
    cfg = _experiment("{train_models: [alexnet, nosuchnet]}")
    with pytest.raises(ConfigError, match=r"experiments.e.train_models\[1\]"):
        pool_inputs(cfg, "e", "train")
    # a PipeDream model is an input file of the graphs job, missing or not
    cfg = _experiment("{test_models: [pipedream:toy, alexnet]}", f"graphs.pipedream_dir={tmp_path}")
    assert pool_inputs(cfg, "e", "test") == [str(tmp_path / "toy.txt")]
    # an arrival trace is an input too
    cfg = _experiment("{overrides: {trace.path: arrivals.csv}}")
    assert pool_inputs(cfg, "e", "test")[-1] == "arrivals.csv"


def test_a_pool_mixes_pipedream_files_and_built_in_profiles(tmp_path):
    from pacml.graphs.io import read_graph
    from pacml.graphs.pipedream import write_pipedream

    write_pipedream(chain_graph("toy", 3, 2e-3, 2e8), tmp_path / "toy.txt")
    cfg = _experiment("{test_models: [pipedream:toy, squeezenet1_0]}", f"graphs.pipedream_dir={tmp_path}")
    written = build_pool_graphs(cfg, "e", "test", tmp_path / "graphs")
    assert [p.name for p in written] == ["toy.json", "squeezenet1_0.json"]
    toy = read_graph(written[0])
    assert toy.num_forward == 3 and toy.num_training_steps == cfg.workload.num_training_steps


def test_pools_share_a_graphs_folder_exactly_when_they_would_write_the_same_graphs():
    cfg = load_config(
        None,
        [
            "experiments.loads={sweep: {workload.offered_load: [0.5, 2]}, overrides: {cluster.servers_per_rack: 1}}",
            "experiments.steps={overrides: {workload.num_training_steps: 7}}",
            "experiments.other={test_models: [alexnet, gnmt, resnet18, squeezenet1_0]}",
            "experiments.piped={test_models: [pipedream:alexnet, gnmt, resnet18, squeezenet1_0, vgg16]}",
            "experiments.reordered={test_models: [gnmt, alexnet, resnet18, squeezenet1_0, vgg16]}",
        ],
    )
    key = {name: graphs_key(cfg, name, "test") for name in experiments(cfg)}
    # the cluster and the load change no graph: one folder for both settings and the train pool
    assert key["loads/0.5"] == key["loads/2"] == graphs_key(cfg, "loads/2", "train")
    # the steps a job trains for, the models, a PipeDream file of a built-in name, their order: another
    assert len({key["loads/0.5"], key["steps"], key["other"], key["piped"], key["reordered"]}) == 5
    assert all(len(k) == 12 and int(k, 16) >= 0 for k in key.values())


def test_reference_jobs_are_the_main_workflows_only_when_nothing_they_read_differs():
    cfg = load_config(ROOT / "config.yaml")
    assert reuses_main(cfg, "mixed_beta", "agents") and reuses_main(cfg, "mixed_beta", "selection")
    assert not reuses_main(cfg, "unseen_models", "agents")  # another pool
    same_pool_other_agent = _experiment("{overrides: {agent.feature_scales: fixed}}")
    assert not reuses_main(same_pool_other_agent, "e", "agents")
    assert reuses_main(same_pool_other_agent, "e", "selection")  # selection reads no agent key
    # the planner is the teacher of config.yaml's agents; with PPO alone (the defaults) it is not
    other_planner = load_config(ROOT / "config.yaml", ["experiments.e={overrides: {planning.horizon: 7}}"])
    assert not reuses_main(other_planner, "e", "selection") and not reuses_main(other_planner, "e", "agents")
    ppo_only = _experiment("{overrides: {planning.horizon: 7}}")
    assert ppo_only.imitation.iterations == 0 and reuses_main(ppo_only, "e", "agents")
    not_in_workflow = _experiment("{distributions: [beta_b]}", "workflow.distributions=[beta_a]")
    assert not reuses_main(not_in_workflow, "e", "agents")


SMOKE_EXPERIMENTS = {
    # the main workflow's pool and β: the reference agents and selections are the workflow's
    "reuse": {
        "train_distribution": "mix",
        "distributions": ["beta_a"],
        "baselines": ["para_max"],
        "overrides": {"distributions.mix": {"kind": "mixture", "components": ["beta_a", "beta_d"]}},
    },
    # a sweep over the placer, with the main workflow's agents: nothing trained
    "placer": {
        "sweep": {"cluster.placement": ["ddls", "compact"]},
        "train_in": "main",
        "reference": False,
        "distributions": ["beta_a"],
        "baselines": ["para_max"],
    },
    # two pools, one of them with a PipeDream file: everything trained in the experiment
    "transfer": {
        "train_models": ["alexnet", "resnet18"],
        "test_models": ["pipedream:toy", "squeezenet1_0"],
        "distributions": ["beta_a"],
        "baselines": ["best_fixed"],
        "overrides": {"agent.feature_scales": "fixed"},
    },
}


@pytest.mark.slow
def test_smoke_experiments_end_to_end(tmp_path):
    import pandas as pd

    from pacml.graphs.pipedream import write_pipedream

    from test_workflow import job_counts, snakemake

    (tmp_path / "profiles").mkdir()
    write_pipedream(chain_graph("toy", 3, 2e-3, 2e8), tmp_path / "profiles" / "toy.txt")
    data = yaml.safe_load((ROOT / "config.yaml").read_text())
    data["experiments"] = SMOKE_EXPERIMENTS
    data["graphs"]["pipedream_dir"] = str(tmp_path / "profiles")
    text = yaml.safe_dump(data)
    args = ("experiments", "--cores", "2", "--config", "workflow={scale: smoke}")
    planned = snakemake(tmp_path, "-n", *args, config_text=text)
    assert planned.returncode == 0, planned.stderr[-3000:]
    assert job_counts(planned.stdout) == {
        "experiment_evaluate": 10,  # one a policy (for all replicates): reuse: pacml_transfer, pacml,
        # para_max; transfer: the same with best_fixed; placer: pacml_transfer and para_max in each setting
        "experiment_graphs": 3,  # transfer's two pools; the workflow's models (reuse's, placer's settings')
        "experiment_select": 3,  # reuse's mixture; transfer's two pools
        "experiment_summary": 4,
        "experiment_sweep": 1,
        "experiment_train": 3,  # reuse's mixture agent; transfer's agents under test and its reference
        "experiments": 1,
        "experiments_table": 1,
        "experiments_report": 1,
        "graphs": 1,
        "mlflow_init": 1,
        "select": 1,  # reuse's reference: the main workflow's beta_a agent and selection
        "train": 1,
        "total": 31,
    }
    out = snakemake(tmp_path, *args, config_text=text, timeout=900)
    assert out.returncode == 0, out.stderr[-4000:]
    again = snakemake(tmp_path, "-n", *args, config_text=text)
    assert "Nothing to be done" in again.stdout + again.stderr
    res = tmp_path / "results" / "experiments"
    for name, baseline in (("reuse", "para_max"), ("transfer", "best_fixed")):
        summary = pd.read_csv(res / name / "summary.csv")
        assert set(summary["policy"]) == {"pacml_transfer", "pacml", baseline}
        assert set(summary["experiment"]) == {name} and set(summary["dist"]) == {"beta_a"}
        rates = summary[summary["metric"] == "blocking_rate"]["mean"]
        assert ((rates >= 0) & (rates <= 1)).all()
        assert (res / name / "figure.png").stat().st_size > 0 and (res / name / "figure.pdf").stat().st_size > 0
    report = (res / "report.html").read_text()
    assert "Experiments" in report and "figure.png" in report
    table = (res / "summary.md").read_text()
    assert "### reuse" in table and "### transfer" in table and "| PAC-ML, agents under test |" in table
    sweep = pd.read_csv(res / "placer" / "summary.csv")
    assert list(sweep.columns[:4]) == ["experiment", "setting", "dist", "policy"]
    assert set(sweep["setting"]) == {"ddls", "compact"} and set(sweep["policy"]) == {"pacml_transfer", "para_max"}
    assert "### placer" in table and "| policy | ddls | compact |" in table
    assert (res / "placer" / "figure.png").stat().st_size > 0
    placed = pd.read_csv(res / "placer" / "compact" / "test" / "beta_a" / "eval" / "para_max_seed0_jobs.csv")
    done = placed[placed["outcome"] == "completed"]
    assert (done["num_workers"] == done["action"]).all()  # compact: a job of degree n takes n servers
    assert "against agents trained here" in table
    rows = pd.read_json(res / "transfer" / "test" / "beta_a" / "eval" / "pacml_transfer_seed0.json")
    assert rows["jobs_arrived"].item() > 0
    jobs = pd.read_csv(res / "transfer" / "test" / "beta_a" / "eval" / "pacml_transfer_seed0_jobs.csv")
    assert set(jobs["model"]) <= {"toy", "squeezenet1_0"}


def test_the_readme_holds_the_published_experiment_tables():
    """The README's tables are the workflow's own summary.md files (tools/sync_readme.py)."""
    from pacml.experiments import sync_readme

    names = list(load_config(ROOT / "config.yaml").experiments)
    assert sync_readme(ROOT / "README.md", ROOT / "results/published/experiments", names, write=False), (
        "README.md's experiments block differs from results/published/experiments: run tools/sync_readme.py"
    )


def test_the_readme_holds_the_published_results_tables():
    """The README's results tables are the main workflow's own summary.md files."""
    from pacml.experiments import RESULTS_BEGIN, RESULTS_END, results_block, sync_block

    assert sync_block(
        ROOT / "README.md", RESULTS_BEGIN, RESULTS_END, results_block(ROOT / "results/published"), False
    ), "README.md's results block differs from results/published/*/summary.md: run tools/sync_readme.py"


def test_the_results_block_is_each_runs_table_with_its_headline_figure(tmp_path):
    from pacml.experiments import RESULTS_BEGIN, RESULTS_END, results_block, sync_block

    (tmp_path / "builtin" / "figures").mkdir(parents=True)
    (tmp_path / "builtin" / "summary.md").write_text("| policy | beta_a |\n")
    (tmp_path / "builtin" / "figures" / "reduction.png").write_bytes(b"")
    block = results_block(tmp_path, {"builtin": "Built-in", "pipedream": "PipeDream"})  # no pipedream run here
    assert block == "\n".join(
        [
            RESULTS_BEGIN,
            "",
            "### Built-in (`results/published/builtin/`)",
            "",
            "| policy | beta_a |",
            "",
            "![Blocking reduction vs Para_max, builtin](results/published/builtin/figures/reduction.png)",
            "",
            RESULTS_END,
        ]
    )
    readme = tmp_path / "README.md"
    readme.write_text(f"# x\n{RESULTS_BEGIN}\nold\n{RESULTS_END}\ntail\n")
    assert not sync_block(readme, RESULTS_BEGIN, RESULTS_END, block)  # it was stale: rewritten
    assert readme.read_text() == f"# x\n{block}\ntail\n"
    assert sync_block(readme, RESULTS_BEGIN, RESULTS_END, block, write=False)


def test_the_readme_block_is_each_published_table_with_its_figure(tmp_path):
    from pacml.experiments import README_BEGIN, README_END, readme_block, sync_readme

    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "summary.md").write_text("### a\n\n| policy | beta_a |\n")
    block = readme_block(tmp_path, ["a", "b"])
    assert block == "\n".join(
        [README_BEGIN, "", "### a", "", "| policy | beta_a |", "", "![a](results/published/experiments/a/figure.png)", "",
         "Not run at the default scale yet: b.", "", README_END]
    )  # fmt: skip
    readme = tmp_path / "README.md"
    readme.write_text(f"intro\n{README_BEGIN}\nold\n{README_END}\nrest\n")
    assert not sync_readme(readme, tmp_path, ["a", "b"])
    assert readme.read_text() == f"intro\n{block}\nrest\n" and sync_readme(readme, tmp_path, ["a", "b"])
