"""The tables the results are read from, on hand-written evaluation rows: tidy rows, means and
95 % confidence intervals (hierarchical bootstrap), the blocking reductions, the Markdown
summary, best_fixed's rows, the decision table."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from pacml.analysis import (
    CI_METHOD,
    POLICY_NOTES,
    aggregate_dist,
    blocking_cause_shares,
    bootstrap_draws,
    decision_table,
    mean_ci,
    reduction_rows,
    resampled_means,
    summarise,
    summarise_all,
    tidy_rows,
)
from pacml.sim.metrics import METRICS


def eval_file(path, dist, policy, rates):
    """An evaluate rule's JSON: one row per (replicate, test seed); every metric 0 except the
    blocking rate (and mean_degree = 10 x the blocking rate, to tell metrics apart)."""
    rows = [
        {
            **dict.fromkeys(METRICS, 0.0),
            "dist": dist,
            "policy": policy,
            "replicate": i,
            "seed": 100,
            "blocking_rate": r,
            "mean_degree": 10 * r,
        }
        for i, r in enumerate(rates)
    ]
    path.write_text(json.dumps(rows))
    return path


def selection(path, dist, degree, base):
    path.write_text(
        json.dumps({"dist": dist, "fixed_degree": degree, "validation_seeds": [1, 2, 3], "rollout_base": base})
    )
    return path


def test_tidy_rows_one_per_replicate_seed_and_metric(tmp_path):
    tidy = tidy_rows([eval_file(tmp_path / "a.json", "beta_a", "pacml", [0.1, 0.2])])
    assert len(tidy) == 2 * len(METRICS)
    assert list(tidy.columns) == ["dist", "policy", "replicate", "seed", "metric", "value"]
    br = tidy[tidy["metric"] == "blocking_rate"]
    assert br["value"].tolist() == [0.1, 0.2] and br["replicate"].tolist() == [0, 1]
    assert tidy[tidy["metric"] == "mean_degree"]["value"].tolist() == [1.0, 2.0]


def test_the_per_distribution_summary_by_hand(tmp_path):
    files = [
        eval_file(tmp_path / "p.json", "beta_a", "pacml", [0.1, 0.2]),
        eval_file(tmp_path / "m.json", "beta_a", "para_max", [0.3, 0.3]),
    ]
    summary = aggregate_dist(
        files, tmp_path / "s.csv", tmp_path / "t.csv", selection(tmp_path / "sel.json", "beta_a", 4, "fixed-4")
    )
    assert pd.read_csv(tmp_path / "s.csv").shape == summary.shape
    assert len(pd.read_csv(tmp_path / "t.csv")) == 4 * len(METRICS)
    row = summary[(summary["policy"] == "pacml") & (summary["metric"] == "blocking_rate")].iloc[0]
    # two agents, one test seed each: a resample's mean is 0.1, 0.15 or 0.2 (1/4, 1/2, 1/4), so
    # the 2.5 % and 97.5 % quantiles are the two agents' own rates
    assert (row["mean"], row["ci_low"], row["ci_high"], row["n"]) == pytest.approx((0.15, 0.1, 0.2, 2))
    flat = summary[(summary["policy"] == "para_max") & (summary["metric"] == "blocking_rate")].iloc[0]
    assert (flat["mean"], flat["ci_low"], flat["ci_high"]) == pytest.approx((0.3, 0.3, 0.3))
    red = summary[summary["metric"] == "blocking_reduction_vs_para_max"].iloc[0]  # paired: 1 - 0.1/0.3 .. 1 - 0.2/0.3
    assert red["policy"] == "pacml" and red["n"] == 2
    assert (red["mean"], red["ci_low"], red["ci_high"]) == pytest.approx((0.5, 1 / 3, 2 / 3))
    bf = summary[summary["metric"] == "best_fixed_degree"].iloc[0]
    assert (bf["policy"], bf["mean"], bf["n"]) == ("best_fixed", 4.0, 3) and math.isnan(bf["ci_low"])


def test_the_markdown_summary_by_hand(tmp_path):
    tidy = tmp_path / "tidy.csv"
    files = [
        eval_file(tmp_path / "pa.json", "beta_a", "pacml", [0.1, 0.2]),
        eval_file(tmp_path / "ma.json", "beta_a", "para_max", [0.3, 0.3]),
        eval_file(tmp_path / "pb.json", "beta_b", "pacml", [0.0]),
        eval_file(tmp_path / "mb.json", "beta_b", "para_max", [0.0]),
    ]
    tidy_rows(files).to_csv(tidy, index=False)
    sels = [
        selection(tmp_path / "a.json", "beta_a", 4, "fixed-4"),
        selection(tmp_path / "b.json", "beta_b", 16, "fixed-16"),
    ]
    text = summarise_all([tidy], tmp_path / "summary.csv", tmp_path / "summary.md", sels)
    assert text == (
        f"Blocking rate, mean and {CI_METHOD}; episodes per cell in brackets.\n"
        "\n"
        "| policy | beta_a | beta_b |\n"
        "|---|---|---|\n"
        "| pacml | 0.150 [0.100, 0.200] (2) | 0.000 (1) |\n"
        "| para_max | 0.300 [0.300, 0.300] (2) | 0.000 (1) |\n"
        "| best_fixed's degree (chosen on validation seeds) | 4 | 16 |\n"
        "| rollout's base policy | fixed-4 | fixed-16 |\n"
        # (0.3 - 0.15) / 0.3, paired resamples 1 - 0.1/0.3 .. 1 - 0.2/0.3; nothing to lower on beta_b
        "| PAC-ML vs Para_max (lower by) | 50.0 % [33.3, 66.7] |  |\n"
    )
    assert (tmp_path / "summary.md").read_text() == text
    assert CI_METHOD.startswith("95 % CI by hierarchical bootstrap")


def test_the_decision_table_by_hand():
    jobs = pd.DataFrame(
        [
            {"dist": "beta_a", "policy": "pacml", "model": "alexnet", "beta": 0.15, "action": 8},
            {"dist": "beta_a", "policy": "pacml", "model": "alexnet", "beta": 0.5, "action": 4},
            {"dist": "beta_a", "policy": "pacml", "model": "gnmt", "beta": 0.55, "action": 4},
            {"dist": "beta_a", "policy": "pacml", "model": "gnmt", "beta": 0.9, "action": 0},  # not placed: left out
        ]
    )
    table = decision_table(jobs)
    got = {(r.by, r.group): (r.mean_degree, r.share_off_mode, r.n) for r in table.itertuples()}
    assert got == {  # the usual (modal) degree is 4
        ("model", "alexnet"): (6.0, 0.5, 2),
        ("model", "gnmt"): (4.0, 0.0, 1),
        ("beta_bin", "(-0.001, 0.2]"): (8.0, 1.0, 1),
        ("beta_bin", "(0.4, 0.5]"): (4.0, 0.0, 1),
        ("beta_bin", "(0.5, 0.6]"): (4.0, 0.0, 1),
    }
    alexnet = table[(table["by"] == "model") & (table["group"] == "alexnet")].iloc[0]
    assert alexnet["std_degree"] == pytest.approx(np.sqrt(8.0))  # sample sd of 8 and 4
    assert list(table.columns) == ["dist", "policy", "by", "group", "mean_degree", "std_degree", "share_off_mode", "n"]


def test_the_written_tables_are_the_returned_ones(tmp_path):
    files = [
        eval_file(tmp_path / "p.json", "beta_a", "pacml", [0.1, 0.2]),
        eval_file(tmp_path / "m.json", "beta_a", "para_max", [0.3, 0.3]),
    ]
    sel = selection(tmp_path / "sel.json", "beta_a", 4, "fixed-4")
    summary = aggregate_dist(files, tmp_path / "s.csv", tmp_path / "t.csv", sel)
    assert list(summary.columns) == ["dist", "policy", "metric", "mean", "ci_low", "ci_high", "n"]
    assert summary.index.equals(pd.RangeIndex(len(summary)))  # one row, one label
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "s.csv"), summary, check_dtype=False)
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "t.csv"), tidy_rows(files))
    bf = summary[summary["metric"] == "best_fixed_degree"]
    assert bf[["dist", "policy"]].values.tolist() == [["beta_a", "best_fixed"]]


def test_summaries_are_sorted_whatever_order_the_rows_come_in():
    tidy = pd.DataFrame(
        [
            {"dist": "beta_b", "policy": "pacml", "replicate": 0, "seed": 1, "metric": "mean_jct", "value": 2.0},
            {
                "dist": "beta_a",
                "policy": "para_max",
                "replicate": 0,
                "seed": 1,
                "metric": "blocking_rate",
                "value": 0.3,
            },
            {"dist": "beta_a", "policy": "pacml", "replicate": 0, "seed": 1, "metric": "blocking_rate", "value": 0.1},
        ]
    )
    keys = summarise(tidy)[["dist", "policy", "metric"]].values.tolist()
    assert keys == [
        ["beta_a", "pacml", "blocking_rate"],
        ["beta_a", "para_max", "blocking_rate"],
        ["beta_b", "pacml", "mean_jct"],
    ]


def cell(grid) -> pd.DataFrame:
    """Rows (replicate, seed, value) of a replicates x test seeds grid (None: no episode)."""
    return pd.DataFrame(
        [
            {"replicate": r, "seed": 100 + s, "value": v}
            for r, row in enumerate(grid)
            for s, v in enumerate(row)
            if v is not None
        ]
    )


def test_mean_ci_of_nothing_and_of_one_value():
    empty = mean_ci(pd.DataFrame({"replicate": [], "seed": [], "value": []}, dtype=float))
    assert empty["n"] == 0 and math.isnan(empty["mean"]) and math.isnan(empty["ci_low"])  # and no warning
    one = mean_ci(cell([[float("nan"), 2.0]]))  # NaN rows do not count
    assert one["n"] == 1 and one["mean"] == 2.0 and math.isnan(one["ci_low"]) and math.isnan(one["ci_high"])


def test_the_interval_resamples_agents_first_so_it_keeps_their_spread():
    # three agents, each the same on its three test seeds: 9 values, but 3 independent agents
    grid = [[0.0] * 3, [1.0] * 3, [2.0] * 3]
    out = mean_ci(cell(grid))
    # a resample's mean is the mean of 3 agents drawn with replacement: all three 0 has
    # probability 1/27 = 3.7 % > 2.5 %, so the interval runs from 0 to 2, the agents' extremes
    assert (out["mean"], out["ci_low"], out["ci_high"], out["n"]) == (1.0, 0.0, 2.0, 9)
    # the pooled Student-t interval over 9 values would be 1 ± 0.67: narrower than the agents differ
    # the other way round, agents alike and seeds apart: each seed column drawn within each agent
    seeds_apart = mean_ci(cell([[0.0, 1.0, 2.0]] * 3))
    assert 0.0 < seeds_apart["ci_low"] < 1.0 < seeds_apart["ci_high"] < 2.0


def test_the_bootstrap_is_seeded_and_nans_are_left_out():
    a = mean_ci(cell([[0.1, 0.3, 0.2], [0.4, None, 0.5], [0.3, 0.2, float("nan")]]))
    b = mean_ci(cell([[0.1, 0.3, 0.2], [0.4, None, 0.5], [0.3, 0.2, float("nan")]]))
    assert a.equals(b)  # to the last digit
    assert a["n"] == 7 and a["mean"] == pytest.approx(2.0 / 7)
    assert a["ci_low"] < a["mean"] < a["ci_high"]
    reps, seeds = bootstrap_draws((3, 3), resamples=50)
    assert reps.shape == (50, 3, 1) and seeds.shape == (50, 3, 3)
    assert set(np.unique(reps)) <= {0, 1, 2} and set(np.unique(seeds)) <= {0, 1, 2}


def test_reductions_are_paired_episode_by_episode():
    rows = []
    for policy, grid in (("pacml", [[0.1, 0.2], [0.1, 0.2]]), ("para_max", [[0.2, 0.4], [0.2, 0.4]])):
        rows += [
            {**r, "dist": "beta_a", "policy": policy, "metric": "blocking_rate"} for r in cell(grid).to_dict("records")
        ]
    out = reduction_rows(pd.DataFrame(rows))
    assert out[["dist", "policy", "metric"]].values.tolist() == [["beta_a", "pacml", "blocking_reduction_vs_para_max"]]
    r = out.iloc[0]
    # every episode halves para_max's blocking; paired resamples keep that, so the interval is
    # the point 0.5 (unpaired draws would spread it from 1 - 0.2/0.2 = 0 to 1 - 0.1/0.4 = 0.75)
    assert (r["mean"], r["ci_low"], r["ci_high"], r["n"]) == pytest.approx((0.5, 0.5, 0.5, 4))


def _rates(policy, episodes):
    """blocking_rate rows of one policy on beta_a: {(replicate, seed): value}."""
    return [
        {"dist": "beta_a", "policy": policy, "replicate": r, "seed": s, "metric": "blocking_rate", "value": v}
        for (r, s), v in episodes.items()
    ]


def test_a_reduction_pairs_only_the_episodes_both_policies_ran():
    # pacml: agents 0 and 1 on seeds 100, 101 (agent 1 also 103); para_max: replicate 0 only, on
    # seeds 100-102. Paired: (0, 100) and (0, 101), so 1 - (0.1 + 0.3) / (0.2 + 0.4) = 1/3, n = 2
    pacml = _rates("pacml", {(0, 100): 0.1, (0, 101): 0.3, (1, 100): 0.5, (1, 101): 0.5, (1, 103): 0.2})
    para_max = _rates("para_max", {(0, 100): 0.2, (0, 101): 0.4, (0, 102): 0.9})
    r = reduction_rows(pd.DataFrame(pacml + para_max)).iloc[0]
    assert (r["policy"], r["n"]) == ("pacml", 2) and r["mean"] == pytest.approx(1 / 3)
    # no episode in common: no reduction, n = 0
    apart = _rates("pacml", {(1, 101): 0.1}) + _rates("para_max", {(0, 100): 0.2})
    r = reduction_rows(pd.DataFrame(apart)).iloc[0]
    assert r["n"] == 0 and math.isnan(r["mean"]) and math.isnan(r["ci_low"])
    # no reference policy at all: an empty table with the summary's columns
    alone = reduction_rows(pd.DataFrame(_rates("pacml", {(0, 100): 0.1})))
    assert alone.empty and list(alone.columns) == ["dist", "policy", "metric", "mean", "ci_low", "ci_high", "n"]


def test_resampled_means_leave_out_nans_and_keep_single_values():
    draws = bootstrap_draws((1, 2), resamples=20)
    # one agent, seeds [0.4, NaN]: every resample that drew seed 0 means 0.4; one of only the
    # NaN seed has no mean
    means = resampled_means(np.array([[0.4, np.nan]]), draws)
    drew_first = (draws[1] == 0).any(axis=(1, 2))
    assert np.all(means[drew_first] == 0.4) and np.all(np.isnan(means[~drew_first])) and (~drew_first).any()
    one = resampled_means(np.array([[0.7]]), bootstrap_draws((1, 1), resamples=5))
    assert one.tolist() == [0.7] * 5


def test_a_reference_that_blocks_nothing_gives_no_reduction():
    rows = [
        {"dist": "beta_a", "policy": p, "replicate": 0, "seed": s, "metric": "blocking_rate", "value": v}
        for p, v in (("pacml", 0.1), ("para_max", 0.0))
        for s in (1, 2)
    ]
    r = reduction_rows(pd.DataFrame(rows)).iloc[0]
    assert math.isnan(r["mean"]) and math.isnan(r["ci_low"]) and r["n"] == 2


def test_a_markdown_summary_with_gaps_by_hand(tmp_path):
    # best_fixed only on beta_b, a selection only for beta_a, and the clairvoyant upper bound
    tidy = tmp_path / "tidy.csv"
    files = [
        eval_file(tmp_path / "pa.json", "beta_a", "pacml", [0.1]),
        eval_file(tmp_path / "fb.json", "beta_b", "best_fixed", [0.5]),
        eval_file(tmp_path / "ca.json", "beta_a", "rollout_clairvoyant", [0.05]),
        eval_file(tmp_path / "pb.json", "beta_b", "pacml", [0.4]),
        eval_file(tmp_path / "cb.json", "beta_b", "rollout_clairvoyant", [0.3]),
    ]
    tidy_rows(files).to_csv(tidy, index=False)
    sel = [selection(tmp_path / "a.json", "beta_a", 4, "fixed-4")]
    text = summarise_all([tidy], tmp_path / "summary.csv", tmp_path / "summary.md", sel)
    note = POLICY_NOTES["rollout_clairvoyant"]
    assert text.splitlines()[4:] == [
        "| pacml | 0.100 (1) | 0.400 (1) |",
        "| best_fixed |  | 0.500 (1) |",
        f"| rollout_clairvoyant{note} | 0.050 (1) | 0.300 (1) |",
        "| best_fixed's degree (chosen on validation seeds) | 4 |  |",
        "| rollout's base policy | fixed-4 |  |",
        "| PAC-ML vs best_fixed (lower by) |  | 20.0 % |",  # (0.5 - 0.4) / 0.5
    ]
    assert note.startswith(" (clairvoyant")
    written = pd.read_csv(tmp_path / "summary.csv")
    assert list(written.columns) == ["dist", "policy", "metric", "mean", "ci_low", "ci_high", "n"]
    # five (dist, policy) cells, best_fixed's degree, and on beta_b pacml and rollout_clairvoyant
    # against best_fixed
    assert len(written) == 5 * len(METRICS) + 1 + 2


def test_the_decision_table_counts_degree_one_and_sorts_its_groups():
    jobs = pd.DataFrame(
        [
            {"dist": "beta_a", "policy": "pacml", "model": "vgg16", "beta": 0.9, "action": 1},
            {"dist": "beta_a", "policy": "pacml", "model": "alexnet", "beta": 0.1, "action": 1},
            {"dist": "beta_a", "policy": "pacml", "model": "alexnet", "beta": 0.1, "action": 2},
        ]
    )
    table = decision_table(jobs)
    models = table[table["by"] == "model"]
    assert models["group"].tolist() == ["alexnet", "vgg16"] and models["n"].tolist() == [2, 1]
    assert table.index.equals(pd.RangeIndex(len(table)))


def test_a_summary_without_a_selection_has_no_best_fixed_row(tmp_path):
    files = [eval_file(tmp_path / "p.json", "beta_a", "pacml", [0.1, 0.2])]
    summary = aggregate_dist(files, tmp_path / "s.csv", tmp_path / "t.csv")
    assert "best_fixed_degree" not in set(summary["metric"]) and len(summary) == len(METRICS)


def test_the_readme_glossary_is_the_metrics_definitions():
    from conftest import ROOT

    readme = (ROOT / "README.md").read_text()
    missing = [k for k, v in METRICS.items() if f"| `{k}` | {v.replace('|', '/')} |" not in readme]
    assert not missing, f"README.md's metric glossary lacks or misstates {missing}"


def _episode_rows(dist, policy, seed, arrived, causes):
    rows = [{"dist": dist, "policy": policy, "replicate": 0, "seed": seed, "metric": "jobs_arrived", "value": arrived}]
    for c in ("rejected", "invalid", "placement", "jct", "horizon"):
        rows.append({**rows[0], "metric": f"blocked_{c}", "value": causes.get(c, 0)})
    return rows


def test_blocking_cause_shares_by_hand():
    tidy = pd.DataFrame(
        [
            *_episode_rows("beta_a", "pacml", 0, 10, {"jct": 1, "placement": 1}),
            *_episode_rows("beta_a", "pacml", 1, 20, {"jct": 2}),
            *_episode_rows("beta_a", "para_max", 0, 10, {"horizon": 3}),
            *_episode_rows("beta_b", "para_max", 0, 1, {"jct": 1}),  # one arrival, blocked
        ]
    )
    out = blocking_cause_shares(tidy)
    assert out[(out["dist"] == "beta_b") & (out["cause"] == "jct")]["share"].tolist() == [1.0]
    shares = blocking_cause_shares(tidy[tidy["dist"] == "beta_a"]).set_index(["policy", "cause"])["share"]
    # the mean over episodes of each episode's share: jct (1/10 + 2/20) / 2, placement (1/10 + 0) / 2
    assert shares[("pacml", "jct")] == pytest.approx(0.1) and shares[("pacml", "placement")] == pytest.approx(0.05)
    assert shares[("para_max", "horizon")] == pytest.approx(0.3) and shares[("pacml", "horizon")] == 0.0
    assert shares.groupby("policy").sum().to_dict() == pytest.approx({"pacml": 0.15, "para_max": 0.3})


def test_a_parent_run_carries_the_key_metrics_of_each_policy(tmp_path):
    from pacml.analysis import KEY_METRICS, parent_metrics

    files = [
        eval_file(tmp_path / "p.json", "beta_a", "pacml", [0.1, 0.2]),
        eval_file(tmp_path / "m.json", "beta_a", "para_max", [0.3, 0.3]),
    ]
    sel = selection(tmp_path / "sel.json", "beta_a", 4, "fixed-4")
    metrics = parent_metrics(aggregate_dist(files, tmp_path / "s.csv", tmp_path / "t.csv", sel))
    # every key metric of both policies, and pacml's reduction against para_max (best_fixed was
    # not evaluated here)
    episode_metrics = [m for m in KEY_METRICS if not m.startswith("blocking_reduction")]
    assert set(metrics) == {f"{p}.{m}" for p in ("pacml", "para_max") for m in episode_metrics} | {
        "pacml.blocking_reduction_vs_para_max"
    }
    assert metrics["pacml.blocking_reduction_vs_para_max"] == pytest.approx(0.5)
    assert metrics["pacml.blocking_rate"] == pytest.approx(0.15) and metrics["para_max.mean_degree"] == pytest.approx(
        3.0
    )
