"""Bad values, files and arguments are stopped up front with a named error (issue 16's cases)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pacml.cli import main
from pacml.config import load_config
from pacml.errors import ConfigError, GraphFormatError, InfeasibleClusterError
from pacml.graphs.pipedream import parse_pipedream

from conftest import ROOT

GOOD_NODE = (
    "node1 -- Conv -- forward_compute_time=1.5, backward_compute_time=2.0, activation_size=4.0, parameter_size=1.0"
)


@pytest.mark.parametrize(
    "override,key",
    [
        ("workflow.baselines=[fixed-0]", r"workflow\.baselines\[0\]"),
        ("figures.load_sweep_offered_loads=[0.5, -1]", r"figures\.load_sweep_offered_loads\[1\]"),
        ("figures.load_sweep_policies=[para_max, nosuch]", r"figures\.load_sweep_policies\[1\]"),
        ("workload.offered_load=1e12", r"workload\.offered_load"),
        ("workload.replication_factor=1000000000000", r"workload\.replication_factor"),
        ("distributions.beta_a.decimals=30", r"distributions\.beta_a\.decimals"),
        ("distributions.beta_b.samples=1000000000", r"distributions\.beta_b\.samples"),
        ("workflow.train_seeds=[0, -1]", r"workflow\.train_seeds\[1\]"),
        ("workflow.test_seeds=[]", r"workflow\.test_seeds"),
        ("figures.load_sweep_dist=beta_z", r"figures\.load_sweep_dist"),
        ("distributions={'../x': {min: 0.5}}", r"distributions\.\.\./x"),
        ('distributions={"it\'s": {min: 0.5}}', "distributions.it's"),
        ("graphs.models=['a(b']", r"graphs\.models\[0\]"),
        ('tracking.experiment="a\'b"', r"tracking\.experiment"),
        ("tracking.db=../../elsewhere/mlflow.db", r"tracking\.db"),
        ("tracking.uri=127.0.0.1:5000", r"tracking\.uri.*scheme://"),
        ("tracking.uri='http://a b'", r"tracking\.uri"),
    ],
)
def test_bad_values_are_refused_when_the_config_is_read(override, key):
    with pytest.raises(ConfigError, match=key):
        load_config(ROOT / "config.yaml", [override])


def test_fixed_interarrival_arrivals_are_bounded_before_any_episode():
    with pytest.raises(ConfigError, match=r"workload\.horizon_s.*over 1000000 arrivals"):
        load_config(overrides=["workload.offered_load=null", "workload.horizon_s=1e30"])


def test_an_offered_load_that_floods_the_episode_is_refused_by_the_model():
    from pacml.sim.engine import ClusterModel

    from conftest import two_layer_graph

    cfg = load_config(overrides=["workload.offered_load=1000", "workload.horizon_s=1e30"])
    with pytest.raises(ConfigError, match=r"workload\.horizon_s.*arrivals"):
        ClusterModel([two_layer_graph()], cfg)


def test_an_absolute_tracking_store_is_the_users_choice(tmp_path):
    assert load_config(overrides=[f"tracking.db={tmp_path}/m.db"]).tracking.store == f"{tmp_path}/m.db"


def test_a_tracking_uri_replaces_the_sqlite_file():
    cfg = load_config(overrides=["tracking.uri=http://127.0.0.1:5000"])
    assert cfg.tracking.store == "http://127.0.0.1:5000"


def test_a_yaml_alias_bomb_is_refused_before_it_expands(tmp_path):
    lines = ["scales:", '  a: &a ["x","x","x","x","x","x","x","x","x"]']
    for prev, name in zip("abcdefgh", "bcdefghi"):
        lines.append(f"  {name}: &{name} [{', '.join([f'*{prev}'] * 9)}]")
    path = tmp_path / "bomb.yaml"
    path.write_text("\n".join(lines) + "\n")
    assert len(path.read_bytes()) < 700
    with pytest.raises(ConfigError, match="aliases are not accepted") as err:
        load_config(path)
    assert "bomb.yaml" in str(err.value) and "<line 3>" in str(err.value)
    import yaml

    from pacml.config import config_from_dict, normalise_cli_values

    data = yaml.safe_load(path.read_text())  # as Snakemake reads config.yaml itself
    with pytest.raises(ConfigError, match="aliases"):
        normalise_cli_values(data)
    with pytest.raises(ConfigError, match="aliases"):
        config_from_dict(data)


def test_an_oversized_or_non_mapping_config_is_named_not_echoed(tmp_path):
    big = tmp_path / "big.yaml"
    big.write_text("- x\n" * 4_000_000)  # 16 MB
    with pytest.raises(ConfigError, match="larger than") as err:
        load_config(big)
    assert len(str(err.value)) < 300
    listy = tmp_path / "list.yaml"
    listy.write_text("[" + ", ".join(["12345678"] * 20000) + "]\n")
    with pytest.raises(ConfigError, match="expected a mapping") as err:
        load_config(listy)
    assert len(str(err.value)) < 400 and "characters" in str(err.value)


@pytest.mark.parametrize(
    "text,problem",
    [
        ("forward_compute_time=1e300", "over the limit"),
        ("forward_compute_time=4_423", "not a plain decimal"),
        ("forward_compute_time=inf", "not a plain decimal"),
        ("forward_compute_time=nan", "not a plain decimal"),
        ("forward_compute_time=0x10", "not a plain decimal"),
        ("forward_compute_time=-1.0", "not a plain decimal"),
        ("activation_size=[1e14; 1e15; 1e15]", "sums to"),
    ],
)
def test_pipedream_numbers_must_be_plain_finite_decimals(text, problem):
    key = text.split("=")[0]
    line = GOOD_NODE.replace(f"{key}=" + {"forward_compute_time": "1.5", "activation_size": "4.0"}[key], text)
    with pytest.raises(GraphFormatError, match=rf"model\.txt:2: {key}.*{problem}"):
        parse_pipedream("\n" + line + "\n", "model.txt")


def test_a_graph_that_takes_no_time_is_refused_at_load():
    zero = GOOD_NODE.replace("forward_compute_time=1.5", "forward_compute_time=0.0").replace(
        "backward_compute_time=2.0", "backward_compute_time=0"
    )
    with pytest.raises(GraphFormatError, match=r"z\.txt:1: every forward and backward compute time is zero"):
        parse_pipedream(zero + "\n", "z.txt")
    with pytest.raises(GraphFormatError, match="num_training_steps"):
        parse_pipedream(GOOD_NODE + "\n", "z.txt", num_training_steps=-5)


def test_a_json_graph_of_no_time_is_refused_by_the_model():
    import dataclasses

    from pacml.sim.engine import ClusterModel

    from conftest import two_layer_graph

    g = two_layer_graph()
    zero = dataclasses.replace(g, compute_time_s=g.compute_time_s * 0)
    with pytest.raises(InfeasibleClusterError, match="toy"):
        ClusterModel([zero], load_config())


@pytest.mark.parametrize(
    "argv,message",
    [
        ("simulate --graphs g --policy para_max --dist beta_a --seed -1 --out o.json", "seed"),
        ("evaluate --graphs g --policy para_max --dist beta_a --seeds 1 x --out o", "integer"),
        ("simulate --graphs g --policy para_max --dist beta_a --out .", "is a directory"),
        ("graphs import-pipedream d --out o --steps -5", "must be an integer >= 1"),
    ],
)
def test_cli_arguments_out_of_range_exit_2_naming_the_argument(argv, message, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv.split())
    assert exc.value.code == 2 and message in capsys.readouterr().err


def test_cli_names_a_non_utf8_config_and_cuts_long_errors(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "latin.yaml").write_bytes(b"cluster:\n  max_degree: \xff\n")
    args = ["simulate", "--graphs", "g", "--policy", "para_max", "--dist", "beta_a", "--out", "o.json"]
    assert main([*args, "--config", "latin.yaml"]) == 2
    err = capsys.readouterr().err
    assert "latin.yaml" in err and "not UTF-8" in err and "Traceback" not in err
    (tmp_path / "big.yaml").write_text("[" + ", ".join(["1"] * 400_000) + "]\n")
    assert main([*args, "--config", "big.yaml"]) == 2
    err = capsys.readouterr().err
    assert "big.yaml" in err and len(err) < 2200


def test_cli_without_config_reads_the_projects_config_yaml(tmp_path, capsys, monkeypatch):
    """`pacml simulate` in the project folder runs at the workflow's offered load."""
    from pacml.graphs.io import write_graph

    from conftest import two_layer_graph

    (tmp_path / "g").mkdir()
    write_graph(two_layer_graph(), tmp_path / "g" / "toy.json")
    args = ["simulate", "--graphs", "g", "--policy", "para_max", "--dist", "beta_a", "--out", "o.json"]
    args += ["--set", "graphs.models=[]"]
    monkeypatch.chdir(tmp_path)
    assert main(args) == 0
    bare = json.loads((tmp_path / "o.json").read_text())
    (tmp_path / "config.yaml").write_text("workload:\n  offered_load: 0.5\n  horizon_s: 100000.0\n")
    assert main(args) == 0
    assert "./config.yaml" in capsys.readouterr().err
    read = json.loads((tmp_path / "o.json").read_text())
    assert read["jobs_arrived"] != bare["jobs_arrived"]
    assert read == _simulate_with(tmp_path, ["--config", "config.yaml", "--set", "graphs.models=[]"])


def _simulate_with(tmp_path: Path, extra: list[str]) -> dict:
    out = tmp_path / "explicit.json"
    assert (
        main(["simulate", "--graphs", "g", "--policy", "para_max", "--dist", "beta_a", "--out", str(out), *extra]) == 0
    )
    return json.loads(out.read_text())


OVERRIDE_KEYS = st.sampled_from(
    [
        "cluster.max_degree",
        "workload.horizon_s",
        "workflow.baselines",
        "distributions.beta_a.min",
        "ppo.gamma",
        "x.y",
        "",
        "graphs",
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=40), st.builds(lambda k, v: f"{k}={v}", OVERRIDE_KEYS, st.text(max_size=30))))
def test_random_overrides_raise_only_named_errors(text):
    try:
        load_config(overrides=[text])
    except ConfigError as exc:
        assert exc.key is not None and len(str(exc)) < 1200


NUMBER_TEXT = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.text(alphabet="0123456789.e+-_[]; xinfa", max_size=12),
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.builds(
                lambda n, a, b, c, d: (
                    f"node{n} -- Op -- forward_compute_time={a}, backward_compute_time={b}, "
                    f"activation_size={c}, parameter_size={d}"
                ),
                st.integers(0, 5),
                NUMBER_TEXT,
                NUMBER_TEXT,
                NUMBER_TEXT,
                NUMBER_TEXT,
            ),
            st.builds(lambda u, v: f"\tnode{u} -- node{v}", st.integers(0, 5), st.integers(0, 5)),
            st.text(max_size=60),
        ),
        max_size=8,
    )
)
def test_random_pipedream_lines_raise_only_named_errors(lines):
    try:
        graph = parse_pipedream("\n".join(lines), "random.txt")
    except GraphFormatError as exc:
        assert str(exc).startswith("random.txt")
        return
    assert graph.step_time_s > 0 and all(t == t and t < float("inf") for t in graph.compute_time_s)


@pytest.mark.parametrize("override", ["cluster.max_degree=[1", "cluster.max_degree=*a", "cluster.max_degree={a: 1"])
def test_an_override_that_is_not_plain_yaml_names_its_key(override):
    with pytest.raises(ConfigError, match=r"--set: config key 'cluster\.max_degree'"):
        load_config(overrides=[override])


SIM = "simulate --graphs g --dist beta_a --out o.json --set graphs.models=[]"


@pytest.mark.parametrize(
    "argv,message",
    [
        (f"{SIM} --policy nosuch", "unknown policy 'nosuch'; known: para_max"),
        (f"{SIM} --policy fixed-99", r"policy 'fixed-99': degree 99 must be in 1\.\.16"),
        (f"{SIM} --policy pacml", r"policy 'pacml' needs a checkpoint \(--checkpoint FILE\)"),
        (f"{SIM} --policy para_max --dist beta_z", "unknown distribution 'beta_z'"),
        (f"{SIM} --policy para_max --set cluster.rackz=3", "config key 'cluster.rackz' = 3: unknown key"),
        (f"{SIM} --policy para_max --config nosuch.yaml", "nosuch.yaml: .*cannot read"),
        (
            "simulate --graphs nodir --dist beta_a --out o.json --policy para_max",
            "nodir: graph directory does not exist",
        ),
        (
            "evaluate --graphs g --policy pacml --checkpoint no.pt --dist beta_a --seeds 1 --out o.json",
            "no.pt: no such",
        ),
        ("train --graphs g --dist beta_a --out t --set ppo.gamma=2", r"config key 'ppo\.gamma'"),
        ("graphs import-pipedream nodir --out o", "nodir: PipeDream profile directory does not exist"),
        ("graphs summary bad/broken.txt", r"broken\.txt:1: node 'node1' lacks backward_compute_time"),
    ],
)
def test_cli_errors_exit_2_with_one_line_naming_the_cause(tmp_path, monkeypatch, capsys, argv, message):
    from pacml.graphs.io import write_graph

    from conftest import two_layer_graph

    (tmp_path / "g").mkdir()
    write_graph(two_layer_graph(), tmp_path / "g" / "toy.json")
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "broken.txt").write_text("node1 -- Conv2d -- forward_compute_time=abc\n")
    monkeypatch.chdir(tmp_path)
    rc = main(argv.split())
    err = capsys.readouterr().err
    assert rc == 2 and re.search(message, err), err
    assert err.startswith("pacml: error: ") and "Traceback" not in err and err.count("\n") == 1
    assert not (tmp_path / "o.json").exists()


def test_cli_usage_errors_exit_2_from_the_shell(tmp_path):
    import subprocess
    import sys

    for argv, message in ([[], "required: COMMAND"], [["nosuch"], "invalid choice: 'nosuch'"]):
        out = subprocess.run([sys.executable, "-m", "pacml", *argv], capture_output=True, text=True, cwd=tmp_path)
        assert out.returncode == 2 and message in out.stderr, out.stderr
    bad = subprocess.run(
        [sys.executable, "-m", "pacml", *f"{SIM} --policy nosuch".split()], capture_output=True, text=True, cwd=tmp_path
    )
    assert bad.returncode == 2 and bad.stderr.startswith("pacml: error: g: graph directory does not exist"), bad.stderr


def test_cli_version_is_the_installed_package_version(capsys):
    from importlib.metadata import version

    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0 and capsys.readouterr().out.strip() == f"pacml {version('pacml')}"


def test_every_policy_the_help_names_is_one(capsys):
    """`--help` lists the policies by name; each resolves (fixed-K as fixed-4), and an unknown one does not."""
    from pacml.cli import POLICY_HELP
    from pacml.errors import UnknownNameError
    from pacml.policies.base import PolicyContext, make_policy
    from pacml.sim.engine import ClusterModel

    from conftest import TOY_CLUSTER, toy_pool

    names = re.findall(r"(?:^|, )([a-z_]+(?:-K)?)", POLICY_HELP)
    assert len(names) == 10 and "pacml" in names and "fixed-K" in names
    with pytest.raises(SystemExit):
        main(["evaluate", "--help"])
    assert "rollout_clairvoyant" in " ".join(capsys.readouterr().out.split())
    context = PolicyContext(ClusterModel(toy_pool(), load_config(overrides=TOY_CLUSTER)), "beta_a")
    for name in names:
        if name == "pacml":
            continue  # needs a checkpoint: tests/test_agent.py
        assert make_policy(name.replace("-K", "-4"), context=context) is not None, name
    with pytest.raises(UnknownNameError):
        make_policy("para_medium", context=context)
