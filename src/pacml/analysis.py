"""Aggregate evaluation rows: tidy tables, means and 95 % confidence intervals over seeds."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from pacml.sim.metrics import METRICS

KEY_METRICS = ("blocking_rate", "demand_throughput", "mean_jct", "mean_jct_speedup", "mean_degree",
               "worker_utilisation", "acceptance_rate")


def tidy_rows(eval_files: list[str | Path]) -> pd.DataFrame:
    """One row per (dist, policy, replicate, test seed, metric)."""
    rows = []
    for f in eval_files:
        for r in json.loads(Path(f).read_text()):
            for metric in METRICS:
                rows.append({"dist": r["dist"], "policy": r["policy"], "replicate": r["replicate"],
                             "seed": r["seed"], "metric": metric, "value": float(r[metric])})
    return pd.DataFrame(rows)


def mean_ci(values: pd.Series) -> pd.Series:
    """Mean and the half-width of its 95 % Student-t confidence interval (NaN for n < 2)."""
    from scipy import stats

    v = values.dropna().to_numpy(dtype=float)
    n = len(v)
    mean = float(v.mean()) if n else float("nan")
    half = float(stats.t.ppf(0.975, n - 1) * v.std(ddof=1) / np.sqrt(n)) if n > 1 else float("nan")
    return pd.Series({"mean": mean, "ci95": half, "n": n})


def summarise(tidy: pd.DataFrame) -> pd.DataFrame:
    """Mean and CI per (dist, policy, metric), over every replicate x test seed."""
    out = tidy.groupby(["dist", "policy", "metric"], sort=True)["value"].apply(mean_ci).unstack()
    return out.reset_index()


def aggregate_dist(eval_files: list[str | Path], summary_csv: str | Path, tidy_csv: str | Path) -> pd.DataFrame:
    tidy = tidy_rows(eval_files)
    tidy.to_csv(tidy_csv, index=False)
    summary = summarise(tidy)
    summary.to_csv(summary_csv, index=False)
    return summary


def summarise_all(tidy_files: list[str | Path], summary_csv: str | Path, summary_md: str | Path) -> str:
    """The summary over all distributions: CSV of every metric, Markdown of the main table."""
    tidy = pd.concat([pd.read_csv(f) for f in tidy_files], ignore_index=True)
    summary = summarise(tidy)
    summary.to_csv(summary_csv, index=False)
    br = summary[summary["metric"] == "blocking_rate"].set_index(["dist", "policy"])
    dists = list(dict.fromkeys(tidy["dist"]))
    policies = list(dict.fromkeys(tidy["policy"]))
    lines = ["Blocking rate, mean ± 95 % CI over replicates x test seeds (n per cell in brackets).", "",
             "| policy | " + " | ".join(dists) + " |", "|---|" + "---|" * len(dists)]
    for p in policies:
        cells = []
        for d in dists:
            if (d, p) in br.index:
                row = br.loc[(d, p)]
                ci = "" if np.isnan(row["ci95"]) else f" ± {row['ci95']:.3f}"
                cells.append(f"{row['mean']:.3f}{ci} ({int(row['n'])})")
            else:
                cells.append("")
        lines.append(f"| {p} | " + " | ".join(cells) + " |")
    if "para_max" in policies and "pacml" in policies:
        red = []
        for d in dists:
            a, b = br.loc[(d, "pacml"), "mean"], br.loc[(d, "para_max"), "mean"]
            red.append(f"{100 * (b - a) / b:.1f} %" if b > 0 else "")
        lines.append("| PAC-ML vs Para_max (lower by) | " + " | ".join(red) + " |")
    text = "\n".join(lines) + "\n"
    Path(summary_md).write_text(text)
    return text
