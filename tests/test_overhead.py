"""The network-overhead table (the paper's first figure): the share of a step the network costs."""

from __future__ import annotations

import dataclasses
import math

import pytest

from pacml.config import load_config
from pacml.sim.overhead import OVERHEAD_COLUMNS, ideal_network, network_overhead

from conftest import two_layer_graph

PHYSICAL = ["workload.compute_time_scale=1.0"]


def test_one_worker_has_no_network_and_the_step_is_the_ops_in_sequence():
    (one, *_) = network_overhead([two_layer_graph()], load_config(None, PHYSICAL))
    assert tuple(one) == OVERHEAD_COLUMNS
    # A, B, B', A' = 1 + 2 + 4 + 3 ms on one server, nothing sent
    assert (one["degree"], one["workers"], one["network_overhead"]) == (1, 1, 0.0)
    assert one["step_time_s"] == one["ideal_step_time_s"] == pytest.approx(0.010, rel=1e-12)


def test_the_ideal_network_changes_only_the_network():
    cfg = load_config(None, [*PHYSICAL, "cluster.reconfiguration_s=0.5"])  # every network key non-zero
    assert cfg.cluster.propagation_latency_s > 0 and cfg.cluster.io_latency_s > 0
    ideal = ideal_network(cfg)
    assert ideal.cluster.node_bandwidth_bytes_per_s == math.inf
    assert ideal.cluster.propagation_latency_s == ideal.cluster.io_latency_s == ideal.cluster.reconfiguration_s == 0
    keep = {"node_bandwidth_bytes_per_s", "propagation_latency_s", "io_latency_s", "reconfiguration_s"}
    for f in dataclasses.fields(cfg.cluster):
        if f.name not in keep:
            assert getattr(ideal.cluster, f.name) == getattr(cfg.cluster, f.name), f.name
    assert dataclasses.replace(ideal, cluster=cfg.cluster) == cfg


def test_a_slower_network_costs_a_larger_share_of_every_split_step():
    fast = network_overhead([two_layer_graph()], load_config(None, PHYSICAL))
    slow = network_overhead(
        [two_layer_graph()], load_config(None, [*PHYSICAL, "cluster.node_bandwidth_bytes_per_s=1.6e11"])
    )
    assert [r["degree"] for r in fast] == [r["degree"] for r in slow] == [1, 2, 4, 6, 8, 16]
    for f, s in zip(fast[1:], slow[1:]):
        assert f["ideal_step_time_s"] == s["ideal_step_time_s"]  # the ideal network is the same
        assert 0 < f["network_overhead"] < s["network_overhead"] < 1
        assert f["ideal_step_time_s"] < f["step_time_s"] < s["step_time_s"]


def test_the_paper_models_overhead_stays_small_on_the_paper_clock(model_graphs):
    rows = network_overhead(model_graphs, load_config())
    assert {r["model"] for r in rows} == {g.name for g in model_graphs}
    assert all(0.0 <= r["network_overhead"] < 0.01 for r in rows)  # paper.md: <= 2 % on RAMP
    assert all(r["ideal_step_time_s"] <= r["step_time_s"] for r in rows)


def test_two_servers_give_one_row_a_degree_the_last_on_both():
    two = [*PHYSICAL, "cluster.communication_groups=1", "cluster.racks_per_group=1", "cluster.servers_per_rack=2"]
    rows = network_overhead([two_layer_graph()], load_config(None, two))
    assert [(r["degree"], r["workers"]) for r in rows] == [(1, 1), (2, 2)]
    assert 0 < rows[1]["network_overhead"] < 1
