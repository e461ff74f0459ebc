"""Aggregate evaluation rows: tidy tables, means and 95 % confidence intervals over seeds."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from pacml.sim.metrics import METRICS

KEY_METRICS = (
    "blocking_rate",
    "demand_throughput",
    "mean_jct",
    "mean_jct_speedup",
    "mean_degree",
    "worker_utilisation",
    "acceptance_rate",
)


def tidy_rows(eval_files: list[str | Path]) -> pd.DataFrame:
    """One row per (dist, policy, replicate, test seed, metric)."""
    rows = []
    for f in eval_files:
        for r in json.loads(Path(f).read_text()):
            for metric in METRICS:
                rows.append(
                    {
                        "dist": r["dist"],
                        "policy": r["policy"],
                        "replicate": r["replicate"],
                        "seed": r["seed"],
                        "metric": metric,
                        "value": float(r[metric]),
                    }
                )
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


def read_selections(paths) -> list[dict]:
    """The select rule's JSON files."""
    return [json.loads(Path(f).read_text()) for f in paths]


def best_fixed_rows(selections: list[dict]) -> pd.DataFrame:
    """best_fixed's chosen degree as summary rows (metric ``best_fixed_degree``)."""
    return pd.DataFrame(
        [
            {
                "dist": bf["dist"],
                "policy": "best_fixed",
                "metric": "best_fixed_degree",
                "mean": float(bf["fixed_degree"]),
                "ci95": float("nan"),
                "n": len(bf["validation_seeds"]),
            }
            for bf in selections
        ]
    )


def aggregate_dist(
    eval_files: list[str | Path],
    summary_csv: str | Path,
    tidy_csv: str | Path,
    best_fixed_json: str | Path | None = None,
) -> pd.DataFrame:
    tidy = tidy_rows(eval_files)
    tidy.to_csv(tidy_csv, index=False)
    chosen = read_selections([best_fixed_json] if best_fixed_json is not None else [])
    summary = pd.concat([summarise(tidy), best_fixed_rows(chosen)], ignore_index=True)
    summary.to_csv(summary_csv, index=False)
    return summary


def parent_metrics(summary: pd.DataFrame) -> dict[str, float]:
    """A distribution's summary as MLflow metrics of its parent run: ``<policy>.<metric>`` means of
    `KEY_METRICS` (e.g. ``pacml.blocking_rate``)."""
    rows = summary[summary["metric"].isin(KEY_METRICS)]
    return {f"{r.policy}.{r.metric}": float(r.mean) for r in rows.itertuples()}


POLICY_NOTES = {"rollout_clairvoyant": " (clairvoyant: sees the true future; an upper bound, not deployable)"}


def summarise_all(
    tidy_files: list[str | Path],
    summary_csv: str | Path,
    summary_md: str | Path,
    best_fixed_files: list[str | Path] = (),
) -> str:
    """The summary over all distributions: CSV of every metric, Markdown of the main table."""
    tidy = pd.concat([pd.read_csv(f) for f in tidy_files], ignore_index=True)
    chosen = read_selections(best_fixed_files)
    summary = pd.concat([summarise(tidy), best_fixed_rows(chosen)], ignore_index=True)
    summary.to_csv(summary_csv, index=False)
    degrees = {c["dist"]: c["fixed_degree"] for c in chosen}
    bases = {c["dist"]: c["rollout_base"] for c in chosen}
    br = summary[summary["metric"] == "blocking_rate"].set_index(["dist", "policy"])
    dists = list(dict.fromkeys(tidy["dist"]))
    policies = list(dict.fromkeys(tidy["policy"]))
    lines = [
        "Blocking rate, mean ± 95 % CI over replicates x test seeds (n per cell in brackets).",
        "",
        "| policy | " + " | ".join(dists) + " |",
        "|---|" + "---|" * len(dists),
    ]
    for p in policies:
        cells = []
        for d in dists:
            if (d, p) in br.index:
                row = br.loc[(d, p)]
                ci = "" if np.isnan(row["ci95"]) else f" ± {row['ci95']:.3f}"
                cells.append(f"{row['mean']:.3f}{ci} ({int(row['n'])})")
            else:
                cells.append("")
        lines.append(f"| {p}{POLICY_NOTES.get(p, '')} | " + " | ".join(cells) + " |")
    if degrees:
        lines.append(
            "| best_fixed's degree (chosen on validation seeds) | "
            + " | ".join(str(degrees.get(d, "")) for d in dists)
            + " |"
        )
        lines.append("| rollout's base policy | " + " | ".join(str(bases.get(d, "")) for d in dists) + " |")
    for ref, label in (("para_max", "Para_max"), ("best_fixed", "best_fixed")):
        if ref in policies and "pacml" in policies:
            red = []
            for d in dists:
                if (d, "pacml") not in br.index or (d, ref) not in br.index:
                    red.append("")  # one of the two was not evaluated on d
                    continue
                a, b = br.loc[(d, "pacml"), "mean"], br.loc[(d, ref), "mean"]
                red.append(f"{100 * (b - a) / b:.1f} %" if b > 0 else "")
            lines.append(f"| PAC-ML vs {label} (lower by) | " + " | ".join(red) + " |")
    text = "\n".join(lines) + "\n"
    Path(summary_md).write_text(text)
    return text


def blocking_cause_shares(tidy: pd.DataFrame) -> pd.DataFrame:
    """Why jobs were blocked: per (dist, policy) and cause, the mean over episodes of the share
    of arrived jobs blocked with that cause (`pacml.sim.records.BLOCK_CAUSES`); a policy's shares
    add up to its blocking rate. Tidy: dist, policy, cause, share."""
    from pacml.sim.records import BLOCK_CAUSES

    wide = tidy.pivot_table(index=["dist", "policy", "replicate", "seed"], columns="metric", values="value")
    arrived = wide["jobs_arrived"].where(wide["jobs_arrived"] > 0)
    shares = pd.DataFrame({c: wide[f"blocked_{c}"] / arrived for c in BLOCK_CAUSES})
    shares.columns.name = "cause"
    out = shares.groupby(["dist", "policy"], sort=True).mean().stack().rename("share").reset_index()
    return out[["dist", "policy", "cause", "share"]]


BETA_BINS = (0.0, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0)


def decision_table(jobs: pd.DataFrame) -> pd.DataFrame:
    """What each policy decides, over every job given a degree (action > 0): the mean chosen
    degree and the share of jobs off the policy's usual (modal) degree in that distribution,
    by model and by beta bin. Tidy: dist, policy, by, group, mean_degree, std_degree,
    share_off_mode, n. A constant policy has share_off_mode 0 everywhere."""
    jobs = jobs[jobs["action"] > 0].copy()
    jobs["beta_bin"] = pd.cut(jobs["beta"], BETA_BINS, include_lowest=True).astype(str)
    modes = jobs.groupby(["dist", "policy"])["action"].agg(lambda a: a.mode().iloc[0]).rename("modal_degree")
    jobs = jobs.join(modes, on=["dist", "policy"])
    jobs["off_mode"] = (jobs["action"] != jobs["modal_degree"]).astype(float)
    parts = []
    for by in ("model", "beta_bin"):
        g = jobs.groupby(["dist", "policy", by], sort=True).agg(
            mean_degree=("action", "mean"),
            std_degree=("action", "std"),
            share_off_mode=("off_mode", "mean"),
            n=("action", "count"),
        )
        parts.append(g.reset_index().rename(columns={by: "group"}).assign(by=by))
    cols = ["dist", "policy", "by", "group", "mean_degree", "std_degree", "share_off_mode", "n"]
    return pd.concat(parts, ignore_index=True)[cols]
