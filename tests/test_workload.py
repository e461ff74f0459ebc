"""What arrives: the four beta distributions against paper.md, arrivals and the job pool."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

from pacml.analysis import mean_ci
from pacml.config import load_config
from pacml.sim.workload import build_pmf, sample_arrivals


def pmfs(name: str, seeds=range(5)):
    cfg = load_config()
    return [build_pmf(cfg.distributions[name], np.random.default_rng(s)) for s in seeds]


def test_beta_a_is_uniform_over_the_91_values_by_hand():
    (pmf,) = pmfs("beta_a", [0])
    assert np.array_equal(pmf.support, np.round(np.arange(10, 101) / 100, 2))
    assert np.all(pmf.probs == 1 / 91) and pmf.mean == pytest.approx(0.55, abs=1e-12)


@pytest.mark.parametrize(
    "name,mean,modes",
    [
        # paper.md: beta_B mean about 0.285, mode about 0.2-0.25; beta_C about 0.47, mode about
        # 0.5; beta_D about 0.73, mode about 0.77 (completed-job means 0.28-0.32 / 0.47-0.51 / 0.71-0.74)
        ("beta_b", 0.285, (0.20, 0.25)),
        ("beta_c", 0.48, (0.47, 0.53)),
        ("beta_d", 0.72, (0.75, 0.82)),
    ],
)
def test_the_skewed_distributions_have_the_papers_support_mean_and_mode(name, mean, modes):
    for pmf in pmfs(name):
        assert pmf.support.min() >= 0.1 and pmf.support.max() == 1.0
        assert np.array_equal(pmf.support, np.round(pmf.support, 2)) and pmf.probs.sum() == pytest.approx(1.0)
        assert modes[0] <= pmf.support[np.argmax(pmf.probs)] <= modes[1]
        assert np.all(pmf.probs > 0)  # empty histogram bins leave the support
    assert np.mean([p.mean for p in pmfs(name)]) == pytest.approx(mean, abs=0.025)


def test_a_skewed_distribution_is_scaled_to_its_own_max():
    cfg = load_config()
    for top in (0.8, 0.5):
        dist = dataclasses.replace(cfg.distributions["beta_b"], max=top)
        pmf = build_pmf(dist, np.random.default_rng(0))
        assert pmf.support.min() >= 0.1 and pmf.support.max() == top


def test_fixed_arrivals_by_hand_and_the_pool_drawn_without_replacement():
    cfg = load_config(overrides=["workload.offered_load=null", "workload.replication_factor=2"])
    w = dataclasses.replace(cfg.workload, horizon_s=5000.0)
    (pmf,) = pmfs("beta_a", [0])
    arr = sample_arrivals(w, 3, 1000.0, pmf, np.random.default_rng(0))
    assert arr.time_s.tolist() == [0.0, 1000.0, 2000.0, 3000.0, 4000.0, 5000.0]
    assert np.all(arr.interarrival_s == 1000.0)
    assert sorted(arr.graph.tolist()) == [0, 0, 1, 1, 2, 2]  # two copies of each of three graphs
    # six jobs use up the pool exactly: one permutation, then the betas from the same generator
    # (values of seed 0; a second permutation drawn here would change the betas)
    assert arr.graph.tolist() == [1, 1, 2, 2, 0, 0]
    assert arr.beta.tolist() == [0.84, 0.93, 0.65, 0.76, 0.59, 0.95]


def test_exponential_arrivals_have_the_configured_mean_gap():
    cfg = load_config(overrides=["workload.offered_load=null", "workload.interarrival=exponential"])
    w = dataclasses.replace(cfg.workload, horizon_s=2e6)
    (pmf,) = pmfs("beta_a", [0])
    arr = sample_arrivals(w, 5, 100.0, pmf, np.random.default_rng(1))
    n = len(arr.time_s)
    assert arr.time_s[0] == 0.0 and arr.time_s[-1] <= 2e6 < arr.time_s[-1] + arr.interarrival_s[-1]
    assert np.allclose(np.diff(arr.time_s), arr.interarrival_s[:-1])
    assert n == pytest.approx(2e6 / 100.0, rel=0.03)  # about 20,000 arrivals (sd about 0.7 %)
    assert arr.interarrival_s.std() == pytest.approx(100.0, rel=0.05)  # exponential: sd = mean
    assert set(np.unique(arr.beta)) <= set(pmf.support)


def test_the_arrival_stream_of_a_seed_is_pinned():
    """Every published number rests on this stream: the gaps are drawn 1024 at a time until
    they pass the horizon, then the jobs' graphs and betas from the same generator. Values
    recorded from the code of 2026-12-04; a change here changes every result."""
    cfg = load_config(overrides=["workload.offered_load=null", "workload.interarrival=exponential"])
    w = dataclasses.replace(cfg.workload, horizon_s=2e6)
    (pmf,) = pmfs("beta_a", [0])
    arr = sample_arrivals(w, 5, 100.0, pmf, np.random.default_rng(1))
    assert len(arr.time_s) == 20054 and arr.time_s[1] == 107.30290263725388
    assert arr.graph[:8].tolist() == [4, 4, 3, 3, 4, 2, 3, 3] and arr.beta[:4].tolist() == [0.2, 0.88, 0.35, 0.12]


def test_a_horizon_shorter_than_every_gap_has_the_arrival_at_zero():
    cfg = load_config(overrides=["workload.offered_load=null", "workload.interarrival=exponential"])
    (pmf,) = pmfs("beta_a", [0])
    for horizon_s in (0.5, 0.0):
        arr = sample_arrivals(
            dataclasses.replace(cfg.workload, horizon_s=horizon_s), 5, 1e6, pmf, np.random.default_rng(0)
        )
        assert arr.time_s.tolist() == [0.0] and arr.interarrival_s[0] > horizon_s


def test_mean_ci_on_one_two_three_by_hand():
    # three agents of one test seed each, or one agent of three seeds: a resample's mean is the
    # mean of three draws from {1, 2, 3}; "all 1" and "all 3" each have probability 1/27 = 3.7 %
    # (> 2.5 %), so the 95 % interval is [1, 3]
    agents = mean_ci(pd.DataFrame({"replicate": [0, 1, 2], "seed": [100] * 3, "value": [1.0, 2.0, 3.0]}))
    seeds = mean_ci(pd.DataFrame({"replicate": [0] * 3, "seed": [100, 101, 102], "value": [1.0, 2.0, 3.0]}))
    for out in (agents, seeds):
        assert (out["mean"], out["ci_low"], out["ci_high"], out["n"]) == (2.0, 1.0, 3.0, 3)
    one = mean_ci(pd.DataFrame({"replicate": [0, 1], "seed": [100, 100], "value": [5.0, np.nan]}))
    assert one["mean"] == 5.0 and one["n"] == 1 and np.isnan(one["ci_low"])
