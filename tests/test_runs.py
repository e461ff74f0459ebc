"""The one evaluation path: simulate, evaluate and the workflow share it and its seeding."""

from __future__ import annotations

import json

from pacml.config import load_config
from pacml.graphs.io import write_graph
from pacml.runs import evaluate, select_on_validation, simulate

from conftest import TOY_CLUSTER, toy_pool


def pool_dir(tmp_path):
    d = tmp_path / "graphs"
    d.mkdir()
    for g in toy_pool():
        write_graph(g, d / f"{g.name}.json")
    return d


def test_simulate_of_one_seed_is_evaluates_row_of_replicate_0(tmp_path):
    d = pool_dir(tmp_path)
    cfg = load_config(overrides=[*TOY_CLUSTER, "graphs.models=[small, mid, big]"])
    row = simulate(d, "random", "beta_a", 4, cfg, out=tmp_path / "s.json")
    (first,) = evaluate(d, "random", "beta_a", [4], cfg, replicate=0)
    other = evaluate(d, "random", "beta_a", [4], cfg, replicate=1)[0]
    assert row == first and json.loads((tmp_path / "s.json").read_text()) == row
    assert other["mean_degree"] != first["mean_degree"]  # replicates seed the policy apart


def test_selection_file_drives_best_fixed_and_the_planners(tmp_path):
    d = pool_dir(tmp_path)
    cfg = load_config(
        overrides=[
            *TOY_CLUSTER,
            "graphs.models=[small, mid, big]",
            "workflow.validation_seeds=[7]",
            "planning.horizon=10",
            "planning.num_futures=1",
        ]
    )
    chosen = select_on_validation(d, cfg, "beta_a", tmp_path / "selection.json")
    assert chosen["rollout_base"] == f"fixed-{chosen['fixed_degree']}"  # base_policy best_fixed
    from pacml.runs import read_selection

    sel = read_selection(tmp_path / "selection.json")
    (row,) = evaluate(d, "best_fixed", "beta_a", [100], cfg, selection=sel)
    (fixed,) = evaluate(d, f"fixed-{sel.fixed_degree}", "beta_a", [100], cfg)
    assert row["policy"] == "best_fixed" and row["blocking_rate"] == fixed["blocking_rate"]
