from pathlib import Path

import pytest
import yaml

from pacml.config import Config, load_config
from pacml.errors import ConfigError

CONFIG_YAML = str(Path(__file__).resolve().parents[1] / "config.yaml")


def test_defaults_are_the_paper_setting():
    cfg = load_config()
    assert cfg == Config()
    assert cfg.cluster.num_workers == 32
    assert cfg.cluster.channel_bandwidth_bytes_per_s == 4e11
    assert cfg.workload.horizon_s == 1e6 and cfg.workload.interarrival_s == 1000
    assert sorted(cfg.distributions) == ["beta_a", "beta_b", "beta_c", "beta_d"]


def test_unknown_key_names_dotted_key_and_file(tmp_path):
    f = tmp_path / "c.yaml"
    f.write_text("cluster:\n  rackz: 3\n")
    with pytest.raises(ConfigError, match=r"cluster\.rackz") as exc:
        load_config(f)
    assert str(f) in str(exc.value)


def test_wrong_type_names_key():
    with pytest.raises(ConfigError, match=r"workload\.horizon_s"):
        load_config(overrides=["workload.horizon_s=soon"])


def test_zero_racks_rejected():
    with pytest.raises(ConfigError, match=r"cluster\.racks_per_group"):
        load_config(overrides=["cluster.racks_per_group=0"])


def test_more_racks_than_groups_rejected():
    with pytest.raises(ConfigError, match=r"cluster\.racks_per_group"):
        load_config(overrides=["cluster.racks_per_group=8"])


def test_bad_literal_rejected():
    with pytest.raises(ConfigError, match=r"workload\.interarrival"):
        load_config(overrides=["workload.interarrival=poisson"])


def test_user_distribution_extends_the_paper_four(tmp_path):
    f = tmp_path / "c.yaml"
    f.write_text("distributions:\n  strict:\n    kind: uniform\n    min: 0.1\n    max: 0.3\n")
    cfg = load_config(f)
    assert set(cfg.distributions) == {"beta_a", "beta_b", "beta_c", "beta_d", "strict"}
    assert cfg.distributions["strict"].max == 0.3


def test_bad_distribution_range_rejected():
    with pytest.raises(ConfigError, match=r"distributions\.beta_a\.min"):
        load_config(overrides=["distributions.beta_a.min=0"])


def test_a_distribution_bound_off_its_rounding_grid_is_rejected():
    # with one decimal, min 0.05 would round to a beta of 0 (and 0.1 would never be drawn)
    with pytest.raises(ConfigError, match=r"'distributions\.beta_a\.min' = 0\.05: must have at most 1 decimals"):
        load_config(overrides=["distributions.beta_a.min=0.05", "distributions.beta_a.decimals=1"])
    with pytest.raises(ConfigError, match=r"'distributions\.beta_b\.max' = 0\.955: must have at most 2 decimals"):
        load_config(overrides=["distributions.beta_b.max=0.955"])
    cfg = load_config(overrides=["distributions.beta_a.min=0.2", "distributions.beta_a.decimals=1"])
    assert cfg.distributions["beta_a"].min == 0.2


@pytest.mark.parametrize("value", ["[2.0, 1.0]", "[0.0, 1.0]", "[0.5]", "[0.5, 1.0, 2.0]", "[0.5, 2000]", "[1.0, 1.0]"])
def test_a_bad_offered_load_range_names_its_key(value):
    with pytest.raises(ConfigError, match=r"workload\.offered_load_range.*0 < low < high <= 1000"):
        load_config(overrides=[f"workload.offered_load_range={value}"])


def test_an_offered_load_range_with_a_trace_is_rejected():
    with pytest.raises(ConfigError, match=r"workload\.offered_load_range.*a trace \(trace\.path\) sets its own load"):
        load_config(overrides=["workload.offered_load_range=[0.5, 2.0]", "trace.path=t.csv"])
    assert load_config(overrides=["workload.offered_load_range=[0.5, 2]"]).workload.offered_load_range == (0.5, 2.0)


def test_a_bad_extra_base_names_its_key():
    with pytest.raises(ConfigError, match=r"planning\.extra_bases\[1\]"):
        load_config(overrides=["planning.extra_bases=[para_max, rollout]"])
    assert load_config(overrides=["planning.extra_bases=[para_max, fixed-2]"]).planning.extra_bases == (
        "para_max",
        "fixed-2",
    )


@pytest.mark.parametrize(
    ("value", "extra", "key"),
    [
        ("[{base_policy: rollout}]", [], r"imitation\.alternative_teachers\[0\]\.base_policy"),
        ("[{horizon: 20}, {futures: 0}]", [], r"imitation\.alternative_teachers\[1\]\.futures"),
        ("[{horizon: 20, depth: 3}]", [], r"imitation\.alternative_teachers\[0\]\.depth"),
        ("[{horizon: 20}]", ["imitation.iterations=0"], r"imitation\.alternative_teachers.*iterations >= 1"),
        (
            "[{horizon: 20}]",
            ["agent.init_degree_biases=[0.0, 3.0]"],
            r"imitation\.alternative_teachers.*one or the other",
        ),
    ],
)
def test_a_bad_alternative_teacher_names_its_key(value, extra, key):
    with pytest.raises(ConfigError, match=key):
        load_config(overrides=["imitation.iterations=2", f"imitation.alternative_teachers={value}", *extra])


@pytest.mark.parametrize("key", ["teacher_horizon", "teacher_futures"])
def test_a_teachers_horizon_or_futures_below_one_names_its_key(key):
    with pytest.raises(ConfigError, match=rf"imitation\.{key}.*>= 1"):
        load_config(overrides=[f"imitation.{key}=0"])
    assert getattr(load_config(overrides=[f"imitation.{key}=null"]).imitation, key) is None


def test_alternative_teachers_parse_and_leave_every_other_hash_alone():
    from pacml.config import TeacherConfig, config_hash

    plain = load_config(overrides=["imitation.iterations=2"])
    empty = load_config(overrides=["imitation.iterations=2", "imitation.alternative_teachers=[]"])
    one = load_config(
        overrides=["imitation.iterations=2", "imitation.alternative_teachers=[{horizon: 20, futures: 32}]"]
    )
    assert one.imitation.alternative_teachers == (TeacherConfig("tuned", 20, 32),)
    assert config_hash(empty) == config_hash(plain) != config_hash(one)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["agent.actor_ensemble=0"], r"agent\.actor_ensemble.*>= 1"),
        (["agent.actor_ensemble=3", "imitation.iterations=2"], r"agent\.actor_ensemble.*imitation\.iterations is 2"),
        (
            ["agent.actor_ensemble=2", "imitation.iterations=2", "ppo.total_timesteps=1000"],
            r"agent\.actor_ensemble.*total_timesteps",
        ),
    ],
)
def test_a_bad_actor_ensemble_names_its_key(overrides, message):
    with pytest.raises(ConfigError, match=message):
        load_config(overrides=["ppo.total_timesteps=0", *overrides])


def test_a_single_actor_leaves_every_hash_alone():
    from pacml.config import config_hash

    plain = load_config(overrides=["imitation.iterations=3", "ppo.total_timesteps=0"])
    one = load_config(overrides=["imitation.iterations=3", "ppo.total_timesteps=0", "agent.actor_ensemble=1"])
    three = load_config(overrides=["imitation.iterations=3", "ppo.total_timesteps=0", "agent.actor_ensemble=3"])
    assert config_hash(one) == config_hash(plain) != config_hash(three)


def test_the_imitation_loss_leaves_the_cross_entropy_hashes_alone_and_names_its_key():
    from pacml.config import config_hash

    plain = load_config(overrides=["imitation.iterations=3", "ppo.total_timesteps=0"])
    named = load_config(overrides=["imitation.iterations=3", "ppo.total_timesteps=0", "imitation.loss=cross_entropy"])
    scores = load_config(
        overrides=["imitation.iterations=3", "ppo.total_timesteps=0", "imitation.loss=score_regression"]
    )
    assert config_hash(named) == config_hash(plain) != config_hash(scores)
    with pytest.raises(
        ConfigError, match=r"'imitation\.loss' = 'mse': must be one of \['cross_entropy', 'score_regression'\]"
    ):
        load_config(overrides=["imitation.loss=mse"])


@pytest.mark.parametrize(
    "path",
    sorted((Path(__file__).resolve().parents[1] / "results/published").glob("*/config.yaml")),
    ids=lambda p: p.parent.name,
)
def test_every_published_snapshots_config_still_loads(path):
    """A snapshot's config is how a user reruns it: a key renamed or a check tightened in the
    code must not leave it unloadable."""
    cfg = load_config(path)
    assert cfg.workflow.distributions and cfg.graphs.models


def test_workflow_distribution_must_exist():
    with pytest.raises(ConfigError, match=r"workflow\.distributions\[0\]"):
        load_config(overrides=["workflow.distributions=[beta_z]"])


def test_malformed_override():
    with pytest.raises(ConfigError, match="key.sub=value"):
        load_config(overrides=["cluster.racks_per_group"])


def test_every_config_field_has_a_description_in_the_schema():
    from pacml.schema import config_schema

    missing = []

    def walk(node, path):
        for name, sub in node.get("properties", {}).items():
            if "description" not in sub:
                missing.append(f"{path}{name}")
            walk(sub, f"{path}{name}.")
        if isinstance(node.get("additionalProperties"), dict):
            walk(node["additionalProperties"], f"{path}<name>.")

    walk(config_schema(), "")
    assert missing == []


def test_a_misspelt_key_gets_a_suggestion():
    with pytest.raises(ConfigError, match=r"cluster\.servers_per_rak.*did you mean 'servers_per_rack'"):
        load_config(overrides=["cluster.servers_per_rak=4"])


@pytest.mark.parametrize(
    "override,old,new",
    [
        ("workflow.profile=smoke", "workflow.profile", "workflow.scale"),
        ("profiles.smoke.ppo.num_envs=2", "profiles", "scales"),
        ("agent.init_degree_bias=3.0", "agent.init_degree_bias", "agent.init_degree_biases"),
    ],
)
def test_renamed_keys_are_refused_naming_the_new_key(override, old, new):
    with pytest.raises(ConfigError, match=rf"'{old}'.*renamed: use {new}"):
        load_config(overrides=[override])


def test_thread_count_is_not_part_of_any_run_hash():
    from pacml.config import section_hash

    one, four = load_config(), load_config(overrides=["ppo.torch_threads=4"])
    assert section_hash(one, "ppo") == section_hash(four, "ppo")
    assert section_hash(one, "ppo") != section_hash(load_config(overrides=["ppo.gamma=0.9"]), "ppo")


def test_a_runs_config_hash_is_the_same_in_every_store():
    from pacml.config import config_hash

    base = config_hash(load_config())
    elsewhere = ["tracking.uri=http://127.0.0.1:5000", "tracking.db=/tmp/m.db", "ppo.torch_threads=4"]
    assert config_hash(load_config(overrides=elsewhere)) == base
    assert config_hash(load_config(overrides=["planning.horizon=10"])) != base


def test_editing_a_scale_not_in_use_changes_no_runs_hash(tmp_path):
    from pacml.config import config_hash

    text = Path(CONFIG_YAML).read_text()
    assert "  paper:\n" in text
    edited = tmp_path / "config.yaml"
    edited.write_text(text.replace("  paper:\n", "  paper:\n    ppo.learning_rate: 0.5\n", 1))
    assert config_hash(load_config(edited)) == config_hash(load_config(CONFIG_YAML))
    # the scale in use is applied to the tree, so its values count
    scaled = ["workflow.scale=paper"]
    assert config_hash(load_config(edited, scaled)) != config_hash(load_config(CONFIG_YAML, scaled))


def test_each_job_hashes_the_keys_it_reads():
    from pacml.config import evaluation_keys, section_hash, training_keys

    def hashes(*overrides):
        cfg = load_config(overrides=["imitation.iterations=12", *overrides])  # config.yaml's imitation
        jobs = {p: section_hash(cfg, *evaluation_keys(cfg, p)) for p in ("pacml", "para_max", "best_fixed")}
        return {**jobs, "train": section_hash(cfg, *training_keys(cfg))}

    base = hashes()
    changed = lambda *o: {job for job, h in hashes(*o).items() if h != base[job]}  # noqa: E731
    assert changed("ppo.gamma=0.9") == changed("agent.hidden_dim=32") == {"pacml", "train"}
    assert changed("planning.num_futures=3") == {"pacml", "train", "best_fixed"}  # the agent imitates the planner
    assert changed("workflow.test_seeds=[7]") == {"pacml", "para_max", "best_fixed"}
    assert changed("cluster.max_degree=8") == {"pacml", "para_max", "best_fixed", "train"}
    assert changed("tracking.experiment=other", "figures.load_sweep_offered_loads=[0.5]") == set()
    # PPO alone (no imitation) reads no planner key
    no_teacher = load_config(overrides=["imitation.iterations=0"])
    other = load_config(overrides=["imitation.iterations=0", "planning.num_futures=3"])
    assert section_hash(no_teacher, *training_keys(no_teacher)) == section_hash(other, *training_keys(other))


def test_command_line_text_becomes_a_number_only_where_the_key_takes_one():
    """Snakemake's --config leaves nested values as text; a trace filter's "6214e9" is an id."""
    from pacml.config import config_from_dict, normalise_cli_values

    data = {
        "cluster": {"max_degree": "8", "placement": "compact"},
        "trace": {"filter": {"cluster": "6214e9"}, "path": "null", "submit_column": "123"},
        "experiments": {
            "e": {
                "overrides": {"trace.filter": {"cluster": "6214e9"}, "workload.horizon_s": "1e4"},
                "sweep": {"workload.offered_load": ["0.5", "2"]},
            }
        },
    }
    out = normalise_cli_values(data)
    assert out["cluster"] == {"max_degree": 8, "placement": "compact"}
    assert out["trace"] == {"filter": {"cluster": "6214e9"}, "path": None, "submit_column": "123"}
    assert out["experiments"]["e"]["overrides"] == {"trace.filter": {"cluster": "6214e9"}, "workload.horizon_s": 1e4}
    assert out["experiments"]["e"]["sweep"] == {"workload.offered_load": [0.5, 2]}
    cfg = config_from_dict(out, "cli")
    assert cfg.trace.filter == {"cluster": "6214e9"} and cfg.cluster.max_degree == 8


@pytest.mark.parametrize(
    "overrides",
    [
        ["workflow.scale=smoke", "ppo.total_timesteps=4000"],
        ["ppo.total_timesteps=4000", "workflow.scale=smoke"],
        ["workflow.scale=smoke", "ppo={total_timesteps: 4000, num_envs: 2}"],
    ],
)
def test_an_override_wins_over_the_scale(overrides):
    cfg = load_config(CONFIG_YAML, overrides)
    assert cfg.ppo.total_timesteps == 4000
    assert cfg.ppo.num_steps == 50 and cfg.workflow.train_seeds == (0,)  # the scale's other keys still apply


def test_a_resolved_config_applies_its_scale_once():
    from pacml.config import config_from_dict, leaf_keys, resolve_scale

    data = yaml.safe_load(Path(CONFIG_YAML).read_text())
    data["workflow"]["scale"] = "smoke"
    data["ppo"]["total_timesteps"] = 4000  # in the file: the scale wins
    assert config_from_dict(data).ppo.total_timesteps == 2000
    resolved = resolve_scale(data, leaf_keys({"ppo": {"total_timesteps": 4000}, "workflow": {"scale": "smoke"}}))
    assert resolved["scales"]["smoke"] == {} and resolved["ppo"]["num_envs"] == 2
    assert config_from_dict(resolved).ppo.total_timesteps == 4000  # applying it again changes nothing
    assert leaf_keys({"a": {"b": 1, "c": {"d": [1]}}, "e": {}}) == ("a.b", "a.c.d", "e")
