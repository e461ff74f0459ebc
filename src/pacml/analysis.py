"""Aggregate evaluation rows: tidy tables, means and 95 % confidence intervals over trained
agents and test seeds (a hierarchical bootstrap, `CI_METHOD`)."""

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
    "blocking_reduction_vs_para_max",
    "blocking_reduction_vs_best_fixed",
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


BOOTSTRAP_RESAMPLES = 10_000
"""Resamples of the hierarchical bootstrap: each 2.5 % tail of the interval rests on 250 of them."""
BOOTSTRAP_SEED = 0
"""The bootstrap's seed: the same rows give the same interval, to the last digit."""
CI_METHOD = (
    "95 % CI by hierarchical bootstrap (trained agents resampled, then test seeds within each agent; "
    f"{BOOTSTRAP_RESAMPLES:,} resamples, percentile interval)"
)
"""How every interval in the summaries, tables and figures is made; named wherever one is shown."""


def seed_grid(cell: pd.DataFrame, replicates=None, seeds=None) -> np.ndarray:
    """One cell's values (rows with replicate, seed, value) as a replicates x test seeds array,
    NaN where an episode is missing or has no value; ``replicates``/``seeds`` fix the axes, so
    two policies' grids line up episode by episode."""
    wide = cell.set_index(["replicate", "seed"])["value"].unstack("seed")
    if replicates is not None:
        wide = wide.reindex(index=replicates, columns=seeds)
    return wide.to_numpy(dtype=float)


def bootstrap_draws(shape: tuple[int, int], resamples: int = BOOTSTRAP_RESAMPLES, seed: int = BOOTSTRAP_SEED):
    """The hierarchical bootstrap's indices for a replicates x seeds grid: per resample, the
    replicates drawn with replacement, then within each drawn replicate its test seeds drawn
    with replacement. Grids of one shape get the same draws (paired comparisons)."""
    rng = np.random.default_rng(seed)
    n_rep, n_seed = shape
    reps = rng.integers(0, n_rep, size=(resamples, n_rep))
    seeds = rng.integers(0, n_seed, size=(resamples, n_rep, n_seed))
    return reps[:, :, None], seeds


def resampled_means(grid: np.ndarray, draws) -> np.ndarray:
    """The mean of each resample's episodes, NaNs left out (NaN where a resample has none)."""
    values = grid[draws]
    seen = ~np.isnan(values)
    total = np.where(seen, values, 0.0).sum(axis=(1, 2))
    count = seen.sum(axis=(1, 2))
    return np.divide(total, count, out=np.full(len(total), np.nan), where=count > 0)


def percentile_interval(estimates: np.ndarray) -> tuple[float, float]:
    """The 2.5 % and 97.5 % quantiles of the resampled estimates (NaN resamples left out)."""
    kept = estimates[~np.isnan(estimates)]
    if not len(kept):
        return float("nan"), float("nan")
    low, high = np.quantile(kept, [0.025, 0.975])
    return float(low), float(high)


def mean_ci(cell: pd.DataFrame) -> pd.Series:
    """Mean over a cell's episodes (rows with replicate, seed, value) and its 95 % CI by
    hierarchical bootstrap (`CI_METHOD`; NaN for fewer than 2 values). Resampling the trained
    agents first keeps the spread between agents, which pooling 3 agents x 3 seeds as 9
    independent samples hides."""
    values = cell["value"].dropna()
    n = len(values)
    mean = float(values.mean()) if n else float("nan")
    low = high = float("nan")
    if n > 1:
        grid = seed_grid(cell)
        low, high = percentile_interval(resampled_means(grid, bootstrap_draws(grid.shape)))
    return pd.Series({"mean": mean, "ci_low": low, "ci_high": high, "n": n})


SUMMARY_COLUMNS = ["dist", "policy", "metric", "mean", "ci_low", "ci_high", "n"]


def summarise(tidy: pd.DataFrame) -> pd.DataFrame:
    """Mean and CI per (dist, policy, metric), over every replicate x test seed."""
    out = tidy.groupby(["dist", "policy", "metric"])[["replicate", "seed", "value"]].apply(mean_ci)
    return out.reset_index()[SUMMARY_COLUMNS]


REDUCTION_REFERENCES = ("para_max", "best_fixed")
"""The policies every other one's blocking reduction is measured against."""


def reduction_rows(tidy: pd.DataFrame, references=REDUCTION_REFERENCES) -> pd.DataFrame:
    """How much less each policy blocks than a reference, per distribution: metric
    ``blocking_reduction_vs_<ref>`` = 1 - blocking(policy) / blocking(ref), the ratio of the
    means, with its 95 % CI from the same hierarchical bootstrap drawn paired (both policies
    resample the same agents and test seeds). NaN where the reference blocks nothing."""
    rates = tidy[tidy["metric"] == "blocking_rate"]
    rows = []
    for (dist, ref), ref_cell in rates.groupby(["dist", "policy"]):
        if ref not in references:
            continue
        for policy, cell in rates[rates["dist"] == dist].groupby("policy"):
            if policy == ref:
                continue
            both = pd.concat([cell, ref_cell])
            reps, seeds = sorted(set(both["replicate"])), sorted(set(both["seed"]))
            a, b = seed_grid(cell, reps, seeds), seed_grid(ref_cell, reps, seeds)
            paired = ~(np.isnan(a) | np.isnan(b))  # only episodes both policies ran
            a, b = np.where(paired, a, np.nan), np.where(paired, b, np.nan)
            n = int(paired.sum())
            mean = _reduction(np.nanmean(a), np.nanmean(b)) if n else float("nan")
            low = high = float("nan")
            if n > 1:
                draws = bootstrap_draws(a.shape)
                low, high = percentile_interval(_reduction(resampled_means(a, draws), resampled_means(b, draws)))
            rows.append(
                {
                    "dist": dist,
                    "policy": policy,
                    "metric": f"blocking_reduction_vs_{ref}",
                    "mean": mean,
                    "ci_low": low,
                    "ci_high": high,
                    "n": n,
                }
            )
    return pd.DataFrame(rows, columns=SUMMARY_COLUMNS)


def _reduction(a, b):
    """1 - a / b, NaN where b is 0 (or NaN)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    out = np.divide(b - a, b, out=np.full(np.shape(b), np.nan), where=b > 0)
    return float(out) if out.ndim == 0 else out


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
                "ci_low": float("nan"),
                "ci_high": float("nan"),
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
    summary = pd.concat([summarise(tidy), reduction_rows(tidy), best_fixed_rows(chosen)], ignore_index=True)
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
    summary = pd.concat([summarise(tidy), reduction_rows(tidy), best_fixed_rows(chosen)], ignore_index=True)
    summary.to_csv(summary_csv, index=False)
    degrees = {c["dist"]: c["fixed_degree"] for c in chosen}
    bases = {c["dist"]: c["rollout_base"] for c in chosen}
    cells = summary.set_index(["dist", "policy", "metric"])
    dists = list(dict.fromkeys(tidy["dist"]))
    policies = list(dict.fromkeys(tidy["policy"]))

    def row(label: str, policy: str, metric: str, fmt) -> str:
        out = []
        for d in dists:
            key = (d, policy, metric)
            out.append(fmt(cells.loc[key]) if key in cells.index and not np.isnan(cells.loc[key, "mean"]) else "")
        return f"| {label} | " + " | ".join(out) + " |"

    lines = [
        f"Blocking rate, mean and {CI_METHOD}; episodes per cell in brackets.",
        "",
        "| policy | " + " | ".join(dists) + " |",
        "|---|" + "---|" * len(dists),
    ]
    lines += [row(f"{p}{POLICY_NOTES.get(p, '')}", p, "blocking_rate", _rate_cell) for p in policies]
    if degrees:
        lines.append(
            "| best_fixed's degree (chosen on validation seeds) | "
            + " | ".join(str(degrees.get(d, "")) for d in dists)
            + " |"
        )
        lines.append("| rollout's base policy | " + " | ".join(str(bases.get(d, "")) for d in dists) + " |")
    for ref, label in (("para_max", "Para_max"), ("best_fixed", "best_fixed")):
        if ref in policies and "pacml" in policies:
            lines.append(row(f"PAC-ML vs {label} (lower by)", "pacml", f"blocking_reduction_vs_{ref}", _percent_cell))
    text = "\n".join(lines) + "\n"
    Path(summary_md).write_text(text)
    return text


def _rate_cell(r) -> str:
    """``0.180 [0.171, 0.189] (9)``: mean, CI where there is one, episodes."""
    ci = "" if np.isnan(r["ci_low"]) else f" [{r['ci_low']:.3f}, {r['ci_high']:.3f}]"
    return f"{r['mean']:.3f}{ci} ({int(r['n'])})"


def _percent_cell(r) -> str:
    """``41.7 % [38.0, 45.1]``: a reduction and its CI in per cent."""
    ci = "" if np.isnan(r["ci_low"]) else f" [{100 * r['ci_low']:.1f}, {100 * r['ci_high']:.1f}]"
    return f"{100 * r['mean']:.1f} %{ci}"


def blocking_cause_shares(tidy: pd.DataFrame) -> pd.DataFrame:
    """Why jobs were blocked: per (dist, policy) and cause, the mean over episodes of the share
    of arrived jobs blocked with that cause (`pacml.sim.records.BLOCK_CAUSES`); a policy's shares
    add up to its blocking rate. Tidy: dist, policy, cause, share."""
    from pacml.sim.records import BLOCK_CAUSES

    wide = tidy.pivot_table(index=["dist", "policy", "replicate", "seed"], columns="metric", values="value")
    arrived = wide["jobs_arrived"].where(wide["jobs_arrived"] > 0)
    shares = pd.DataFrame({c: wide[f"blocked_{c}"] / arrived for c in BLOCK_CAUSES})
    shares.columns.name = "cause"
    out = shares.groupby(["dist", "policy"]).mean().stack().rename("share").reset_index()
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
        g = jobs.groupby(["dist", "policy", by]).agg(
            mean_degree=("action", "mean"),
            std_degree=("action", "std"),
            share_off_mode=("off_mode", "mean"),
            n=("action", "count"),
        )
        parts.append(g.reset_index().rename(columns={by: "group"}).assign(by=by))
    cols = ["dist", "policy", "by", "group", "mean_degree", "std_degree", "share_off_mode", "n"]
    return pd.concat(parts, ignore_index=True)[cols]
