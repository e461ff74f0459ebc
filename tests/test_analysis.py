"""The tables the results are read from, on hand-written evaluation rows: tidy rows, means and
95 % confidence intervals, the Markdown summary, best_fixed's rows, the decision table."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from pacml.analysis import (
    POLICY_NOTES,
    aggregate_dist,
    blocking_cause_shares,
    decision_table,
    mean_ci,
    summarise,
    summarise_all,
    tidy_rows,
)
from pacml.sim.metrics import METRICS

T_975_1 = 12.706204736174698  # Student t, 97.5 % quantile, 1 degree of freedom (tables)


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
    # mean 0.15; sample sd 0.1 / sqrt(2); half-width t x sd / sqrt(2) = t x 0.05
    assert row["mean"] == pytest.approx(0.15) and row["ci95"] == pytest.approx(T_975_1 * 0.05) and row["n"] == 2
    flat = summary[(summary["policy"] == "para_max") & (summary["metric"] == "blocking_rate")].iloc[0]
    assert flat["mean"] == pytest.approx(0.3) and flat["ci95"] == pytest.approx(0.0, abs=1e-12)
    bf = summary[summary["metric"] == "best_fixed_degree"].iloc[0]
    assert (bf["policy"], bf["mean"], bf["n"]) == ("best_fixed", 4.0, 3) and math.isnan(bf["ci95"])


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
    half = T_975_1 * 0.05
    assert text == (
        "Blocking rate, mean ± 95 % CI over replicates x test seeds (n per cell in brackets).\n"
        "\n"
        "| policy | beta_a | beta_b |\n"
        "|---|---|---|\n"
        f"| pacml | 0.150 ± {half:.3f} (2) | 0.000 (1) |\n"
        "| para_max | 0.300 ± 0.000 (2) | 0.000 (1) |\n"
        "| best_fixed's degree (chosen on validation seeds) | 4 | 16 |\n"
        "| rollout's base policy | fixed-4 | fixed-16 |\n"
        "| PAC-ML vs Para_max (lower by) | 50.0 % |  |\n"  # (0.3 - 0.15) / 0.3; nothing to lower on beta_b
    )
    assert (tmp_path / "summary.md").read_text() == text
    assert f"{half:.3f}" == "0.635"


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
    assert list(summary.columns) == ["dist", "policy", "metric", "mean", "ci95", "n"]
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


def test_mean_ci_of_nothing_and_of_one_value():
    empty = mean_ci(pd.Series([], dtype=float))  # no warning either: the suite turns them into errors
    assert empty["n"] == 0 and math.isnan(empty["mean"]) and math.isnan(empty["ci95"])
    one = mean_ci(pd.Series([float("nan"), 2.0]))  # NaN rows do not count
    assert one["n"] == 1 and one["mean"] == 2.0 and math.isnan(one["ci95"])


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
    assert list(written.columns) == ["dist", "policy", "metric", "mean", "ci95", "n"]
    assert len(written) == 5 * len(METRICS) + 1  # five (dist, policy) cells and best_fixed's degree


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
        ]
    )
    shares = blocking_cause_shares(tidy).set_index(["policy", "cause"])["share"]
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
    assert set(metrics) == {f"{p}.{m}" for p in ("pacml", "para_max") for m in KEY_METRICS}
    assert metrics["pacml.blocking_rate"] == pytest.approx(0.15) and metrics["para_max.mean_degree"] == pytest.approx(
        3.0
    )
