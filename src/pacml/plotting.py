"""The paper's figures, regenerated from the workflow's tables (seaborn; PNG and PDF)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from pacml.config import Config

POLICY_LABELS = {
    "pacml": "PAC-ML",
    "para_max": "Para$_{max}$",
    "para_min": "Para$_{min}$",
    "random": "Random",
    "sequential": "Sequential",
    "oracle": "Oracle",
    "best_fixed": "Best fixed",
    "rollout": "Rollout",
    "rollout_clairvoyant": "Rollout (clairvoyant, bound)",
    "pacml_transfer": "PAC-ML (agents under test)",
}


# One colour per policy in every figure (seaborn's colour-blind palette, in POLICY_LABELS'
# order); a policy outside it (fixed-K) takes a grey of its own.
_COLORBLIND = (
    "#0173b2", "#de8f05", "#029e73", "#d55e00", "#cc78bc", "#ca9161", "#fbafe4", "#949494", "#ece133", "#56b4e9",
)  # fmt: skip
POLICY_COLORS = dict(zip(POLICY_LABELS, _COLORBLIND))


def policy_palette(labels) -> dict[str, str]:
    """{label: colour} for the policies' display labels (`POLICY_LABELS`), the same colour for a
    policy whichever others are plotted beside it."""
    by_label = {POLICY_LABELS[p]: c for p, c in POLICY_COLORS.items()}
    others = sorted({str(x) for x in labels} - set(by_label))
    greys = [f"#{v:02x}{v:02x}{v:02x}" for v in np.linspace(40, 160, max(1, len(others))).astype(int)]
    return {**by_label, **dict(zip(others, greys))}


def _hue(labels) -> dict:
    """seaborn's hue arguments: the fixed palette, in POLICY_LABELS' order."""
    present = list(dict.fromkeys(str(x) for x in labels))
    known = [lab for lab in POLICY_LABELS.values() if lab in present]
    return {"palette": policy_palette(present), "hue_order": known + sorted(set(present) - set(known))}


def _setup():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import seaborn as sns

    # TrueType (Type 42) fonts in PDFs and PostScript: venues reject Type 3
    sns.set_theme(context="paper", style="whitegrid", font_scale=1.1, rc={"pdf.fonttype": 42, "ps.fonttype": 42})
    return plt, sns


def _save(fig, stem_png: str, stem_pdf: str) -> None:
    fig.tight_layout()
    fig.savefig(stem_png, dpi=150)
    fig.savefig(stem_pdf)


def integer_locator():
    from matplotlib.ticker import MaxNLocator

    return MaxNLocator(integer=True)


def matplotlib_null_formatter():
    from matplotlib.ticker import NullFormatter

    return NullFormatter()


def _label(policy: str) -> str:
    return POLICY_LABELS.get(policy, policy)


def beta_distributions(cfg: Config, png: str, pdf: str) -> None:
    from pacml.sim.workload import episode_pmf

    plt, sns = _setup()
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.2))
    for name in cfg.workflow.distributions:
        pmf = episode_pmf(cfg.distributions, name, np.random.default_rng(0))
        label = cfg.distributions[name].label or name
        axes[0].plot(pmf.support, pmf.probs, marker=".", lw=1, label=label)
        axes[1].plot(pmf.support, np.cumsum(pmf.probs), lw=1.5, label=label)
    axes[0].set(xlabel="β", ylabel="Probability", title="JCT-requirement distributions")
    axes[1].set(xlabel="β", ylabel="Cumulative probability", title="CDF")
    axes[1].legend(fontsize=8)
    _save(fig, png, pdf)


def validation_curves(curves: list[str], tidy: pd.DataFrame, png: str, pdf: str) -> None:
    plt, sns = _setup()
    rows = []
    for f in curves:
        c = json.loads(Path(f).read_text())
        for p in c["curve"]:
            rows.append(
                {"dist": c["dist"], "seed": c["seed"], "step": p["global_step"], "blocking_rate": p["blocking_rate"]}
            )
    df = pd.DataFrame(rows)
    dists = list(dict.fromkeys(tidy["dist"]))
    fig, axes = plt.subplots(1, len(dists), figsize=(3.4 * len(dists), 3.0), squeeze=False)
    base = tidy[(tidy["metric"] == "blocking_rate") & (tidy["policy"] != "pacml")]
    for ax, d in zip(axes[0], dists):
        sub = df[df["dist"] == d]
        if len(sub):
            g = sub.groupby("step")["blocking_rate"]
            pacml = POLICY_COLORS["pacml"]
            ax.plot(g.mean().index, g.mean().values, color=pacml, label="PAC-ML (validation)")
            ax.fill_between(g.min().index, g.min().values, g.max().values, color=pacml, alpha=0.25)
        means = base[base["dist"] == d].groupby("policy")["value"].mean()
        colors = policy_palette(_label(p) for p in means.index)
        for p, v in means.items():
            ax.axhline(v, ls="--", lw=1, color=colors[_label(p)], label=_label(p))
        ax.set(title=d, xlabel="Training steps", ylabel="Blocking rate")
    axes[0][-1].legend(fontsize=7)
    _save(fig, png, pdf)


DIAGNOSTICS = (
    ("imitation", "imitation/agreement", "Agreement with the teacher"),
    ("imitation", "imitation/loss", "Imitation loss"),
    ("imitation", "charts/blocking_rate", "Validation blocking rate"),
    ("ppo", "losses/entropy", "Entropy"),
    ("ppo", "losses/approx_kl", "Approx. KL"),
    ("ppo", "losses/explained_variance", "Explained variance"),
)
"""The training diagnostics figure's panels: (phase, metric, label), drawn where logged."""


def training_history(curves: list[str]) -> pd.DataFrame:
    """Every agent's per-update training metrics (``history`` in curve.json), tidy: dist,
    seed, phase, step, metric, value."""
    rows = []
    for f in curves:
        c = json.loads(Path(f).read_text())
        for h in c.get("history", []):
            for k, v in h.items():
                if k not in ("phase", "step"):
                    rows.append({"dist": c["dist"], "seed": c["seed"], "phase": h["phase"], "step": h["step"],
                                 "metric": k, "value": v})  # fmt: skip
    return pd.DataFrame(rows, columns=["dist", "seed", "phase", "step", "metric", "value"])


def training_diagnostics(history: pd.DataFrame, png: str, pdf: str) -> None:
    """Per panel one diagnostic against the imitation iteration or PPO update, a line per
    agent (colour: distribution): the imitation's agreement with its teacher, loss and
    validation blocking; PPO's entropy, approximate KL and explained variance."""
    plt, _ = _setup()
    panels = [
        (phase, metric, label)
        for phase, metric, label in DIAGNOSTICS
        if ((history["phase"] == phase) & (history["metric"] == metric)).any()
    ]
    fig, axes = plt.subplots(1, max(1, len(panels)), figsize=(3.4 * max(1, len(panels)), 3.0), squeeze=False)
    if not panels:
        axes[0][0].text(
            0.5, 0.5, "no training history (agents trained before it was recorded)", ha="center", fontsize=8
        )
        axes[0][0].set_axis_off()
    dists = sorted(history["dist"].unique())
    colours = dict(zip(dists, _COLORBLIND))
    for ax, (phase, metric, label) in zip(axes[0], panels):
        sub = history[(history["phase"] == phase) & (history["metric"] == metric)]
        for (dist, seed), rows in sub.groupby(["dist", "seed"], sort=True):
            ax.plot(
                rows["step"],
                rows["value"],
                lw=1,
                alpha=0.8,
                color=colours[dist],
                label=dist if seed == min(sub[sub["dist"] == dist]["seed"]) else None,
            )
        ax.set(xlabel="Imitation iteration" if phase == "imitation" else "PPO update", ylabel=label)
        ax.xaxis.set_major_locator(integer_locator())  # iterations and updates are whole
    if panels:
        axes[0][-1].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    _save(fig, png, pdf)


def ci_bars(ax, summary: pd.DataFrame, metric: str, scale: float = 1.0) -> None:
    """Grouped bars of one metric's means per distribution (x) and policy (hue, the fixed
    palette and order) with the summary's own CI as error bars (`pacml.analysis.CI_METHOD`)."""
    sub = summary[summary["metric"] == metric].copy()
    sub["label"] = sub["policy"].map(_label)
    hue = _hue(sub["label"])
    dists = list(dict.fromkeys(sub["dist"]))
    order = [lab for lab in hue["hue_order"] if lab in set(sub["label"])]
    width = 0.8 / max(1, len(order))
    for i, label in enumerate(order):
        rows = sub[sub["label"] == label].set_index("dist").reindex(dists)
        x = np.arange(len(dists)) - 0.4 + width * (i + 0.5)
        mean = rows["mean"].to_numpy(float) * scale
        low = np.nan_to_num(mean - rows["ci_low"].to_numpy(float) * scale)
        high = np.nan_to_num(rows["ci_high"].to_numpy(float) * scale - mean)
        ax.bar(x, mean, width, color=hue["palette"][label], label=label)
        ax.errorbar(x, mean, yerr=[low, high], fmt="none", ecolor="black", elinewidth=0.8, capsize=1.5)
    ax.set_xticks(range(len(dists)), dists)


def performance_bars(summary: pd.DataFrame, png: str, pdf: str) -> None:
    plt, _ = _setup()
    fig, axes = plt.subplots(1, 4, figsize=(17, 3.4))
    for ax, metric, ylabel, scale in (
        (axes[0], "blocking_rate", "Blocking rate", 1.0),
        (axes[1], "demand_throughput", "Throughput (MB/s)", 1e-6),
        (axes[2], "worker_utilisation", "Worker utilisation", 1.0),
        (axes[3], "mean_jct", "Mean JCT of completed jobs (s)", 1.0),
    ):
        ci_bars(ax, summary, metric, scale)
        ax.set(xlabel="β distribution", ylabel=ylabel)
    axes[-1].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    _save(fig, png, pdf)


REDUCTION_POLICIES = ("pacml", "best_fixed", "rollout", "rollout_clairvoyant", "oracle", "para_min")
"""The policies whose blocking reduction against Para_max the reduction figure shows (those
evaluated); random and sequential block far more and would squash the axis."""


def reduction(summary: pd.DataFrame, png: str, pdf: str) -> None:
    """The headline: how much less each policy blocks than Para_max, per distribution, in per
    cent with its paired hierarchical-bootstrap CI (`pacml.analysis.reduction_rows`)."""
    plt, _ = _setup()
    sub = summary[(summary["metric"] == "blocking_reduction_vs_para_max") & summary["policy"].isin(REDUCTION_POLICIES)]
    fig, ax = plt.subplots(figsize=(3.2 + 1.6 * max(1, sub["dist"].nunique()), 3.4))
    ci_bars(ax, sub, "blocking_reduction_vs_para_max", 100.0)
    ax.axhline(0.0, color="black", lw=0.8)
    ax.set(xlabel="β distribution", ylabel="Fewer jobs blocked than Para$_{max}$ (%)")
    ax.set_title("Blocking reduction vs Para$_{max}$ (95 % hierarchical bootstrap CI)", fontsize=9)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    _save(fig, png, pdf)


def experiment_bars(summary: pd.DataFrame, title: str, png: str, pdf: str) -> None:
    """An experiment's blocking rate per test distribution and policy with the summary's 95 %
    CI (hierarchical bootstrap over the agents' training seeds, then test seeds)."""
    plt, _ = _setup()
    fig, ax = plt.subplots(figsize=(3.2 + 1.6 * summary["dist"].nunique(), 3.4))
    ci_bars(ax, summary, "blocking_rate")
    ax.set(xlabel="β distribution (test)", ylabel="Blocking rate", title=title)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    _save(fig, png, pdf)


def sweep_lines(summary: pd.DataFrame, title: str, key: str, png: str, pdf: str) -> None:
    """A sweep's blocking rate per setting (x, in the sweep's order) and policy, one panel a
    test distribution; bands: the summaries' 95 % CI (hierarchical bootstrap over the agents'
    training seeds, then test seeds)."""
    plt, _ = _setup()
    sub = summary[summary["metric"] == "blocking_rate"]
    settings = list(dict.fromkeys(sub["setting"]))
    dists = list(dict.fromkeys(sub["dist"]))
    fig, axes = plt.subplots(1, len(dists), figsize=(1.0 + 3.2 * len(dists), 3.2), squeeze=False, sharey=True)
    colours = _hue(sub["policy"].map(_label))["palette"]
    for ax, dist in zip(axes[0], dists):
        for policy, rows in sub[sub["dist"] == dist].groupby("policy", sort=False):
            rows = rows.set_index("setting").reindex(settings)
            x = range(len(settings))
            label = _label(policy)
            ax.plot(x, rows["mean"], marker="o", ms=3, lw=1.2, label=label, color=colours[label])
            ax.fill_between(x, rows["ci_low"], rows["ci_high"], alpha=0.15, color=colours[label])
        ax.set_xticks(range(len(settings)), settings, rotation=30, fontsize=7)
        ax.set(xlabel=key, title=dist)
    axes[0][0].set_ylabel("Blocking rate")
    axes[0][-1].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.suptitle(title)
    _save(fig, png, pdf)


def completed_jobs(jobs: pd.DataFrame, png: str, pdf: str) -> None:
    plt, sns = _setup()
    jobs = jobs.assign(job_gb=jobs["job_bytes"] / 1e9)
    done = jobs[jobs["outcome"] == "completed"].copy()
    done["policy"] = done["policy"].map(_label)
    cols = [
        ("num_workers", "# workers / job"),
        ("beta", "β"),
        ("sequential_jct_s", "JCT$^{seq}$ (s)"),
        ("job_gb", "Σ op mem + Σ dep size (GB)"),
        ("action", "Degree"),
    ]
    intrinsic = {"beta", "sequential_jct_s", "job_gb"}  # defined for every arrived job
    fig, axes = plt.subplots(1, len(cols), figsize=(3.0 * len(cols), 3.0))
    for ax, (col, label) in zip(axes, cols):
        sns.pointplot(
            data=done, x="dist", y=col, hue="policy", errorbar=None, ax=ax, markersize=4, linestyle="none",
            **_hue(done["policy"]),
        )  # fmt: skip
        if col in intrinsic:
            ax.axhline(jobs[col].mean(), color="grey", lw=0.8, ls=":")
        ax.set(xlabel="", ylabel=label)
        if ax is not axes[-1] and ax.get_legend() is not None:
            ax.get_legend().remove()
    axes[-1].legend(fontsize=6)
    fig.suptitle("Completed jobs: mean characteristics (dotted: all arrived jobs)")
    _save(fig, png, pdf)


def speedup(jobs: pd.DataFrame, png: str, pdf: str) -> None:
    plt, sns = _setup()
    done = jobs[jobs["outcome"] == "completed"].copy()
    done["requested"] = np.ceil(1.0 / done["beta"])
    done["actual"] = done["sequential_jct_s"] / done["jct_s"]
    done["policy"] = done["policy"].map(_label)
    fig, ax = plt.subplots(figsize=(4.6, 3.6))
    sns.stripplot(
        data=done, x="requested", y="actual", hue="policy", dodge=True, size=2, alpha=0.5, ax=ax, native_scale=True,
        **_hue(done["policy"]),
    )  # fmt: skip
    top = max(done["requested"].max(), done["actual"].max()) if len(done) else 1
    ax.plot([0, top], [0, top], color="k", lw=0.8, ls="--", label="y = x")
    ax.set(xlabel="Requested JCT speed-up ⌈1/β⌉", ylabel="Actual JCT speed-up")
    ax.legend(fontsize=7)
    _save(fig, png, pdf)


def performance_vs_load(sweep: pd.DataFrame, png: str, pdf: str) -> None:
    plt, sns = _setup()
    sweep = sweep.copy()
    sweep["policy"] = sweep["policy"].map(_label)
    for col in ("demand_throughput", "cluster_throughput"):
        sweep[col] = sweep[col] / 1e6
    panels = [
        ("blocking_rate", "Blocking rate"),
        ("demand_throughput", "Demand throughput (MB/s)"),
        ("cluster_throughput", "Cluster throughput (MB/s)"),
        ("mean_jct", "JCT (s)"),
    ]
    loads = sorted(sweep["interarrival_s"].unique())
    fig, axes = plt.subplots(1, len(panels), figsize=(3.4 * len(panels), 3.0))
    for ax, (col, label) in zip(axes, panels):
        sns.lineplot(
            data=sweep,
            x="interarrival_s",
            y=col,
            hue="policy",
            style="policy",
            markers=True,
            errorbar=("ci", 95),
            ax=ax,
            **_hue(sweep["policy"]),
        )
        ax.set(xscale="log", xlabel="Interarrival time (s)", ylabel=label)
        ax.set_xticks(loads, [f"{v:.0f}" for v in loads], rotation=60, fontsize=7)  # the swept points
        ax.xaxis.set_minor_formatter(matplotlib_null_formatter())
        if ax is not axes[-1] and ax.get_legend() is not None:
            ax.get_legend().remove()
    if ax.get_legend() is not None:
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.suptitle("PAC-ML: the agents trained at the configured load, evaluated at every load", fontsize=9)
    _save(fig, png, pdf)


def graph_characterisation(summary: pd.DataFrame, png: str, pdf: str) -> None:
    plt, sns = _setup()
    cols = [
        ("num_ops", "# ops"),
        ("num_deps", "# deps"),
        ("depth", "Depth"),
        ("sequential_jct_s", "JCT$^{seq}$ (s)"),
        ("total_op_memory_gb", "Σ op mem (GB)"),
        ("total_dep_size_gb", "Σ dep size (GB)"),
    ]
    summary = summary.assign(
        total_op_memory_gb=summary["total_op_memory_bytes"] / 1e9,
        total_dep_size_gb=summary["total_dep_size_bytes"] / 1e9,
    )
    fig, axes = plt.subplots(1, len(cols), figsize=(2.6 * len(cols), 3.0))
    for ax, (col, label) in zip(axes, cols):
        sns.barplot(data=summary, x="model", y=col, ax=ax, color=POLICY_COLORS["pacml"])
        ax.set(xlabel="", ylabel=label)
        ax.tick_params(axis="x", rotation=60)
    _save(fig, png, pdf)


CAUSE_COLORS = {
    "jct": "#d55e00",
    "placement": "#0173b2",
    "horizon": "#949494",
    "rejected": "#029e73",
    "invalid": "#cc78bc",
}
"""One colour per block cause (`pacml.sim.records.BLOCK_CAUSES`), in every figure."""


def blocking_causes(shares: pd.DataFrame, png: str, pdf: str) -> None:
    """Per distribution (panels): each policy's blocking rate as a stacked bar of its causes
    (`pacml.analysis.blocking_cause_shares`)."""
    plt, _ = _setup()
    dists = list(dict.fromkeys(shares["dist"]))
    fig, axes = plt.subplots(1, len(dists), figsize=(3.6 * len(dists), 3.2), squeeze=False, sharey=True)
    for ax, d in zip(axes[0], dists):
        wide = shares[shares["dist"] == d].pivot(index="policy", columns="cause", values="share")
        order = [p for p in POLICY_LABELS if p in wide.index] + sorted(set(wide.index) - set(POLICY_LABELS))
        wide = wide.loc[order[::-1]]  # the first policy on top
        left = np.zeros(len(wide))
        for cause, color in CAUSE_COLORS.items():
            if cause in wide.columns and wide[cause].sum() > 0:
                ax.barh([_label(p) for p in wide.index], wide[cause], left=left, color=color, label=cause)
                left += wide[cause].to_numpy()
        ax.set(title=d, xlabel="Share of arrived jobs blocked")
    handles = {h.get_label(): h for ax in axes[0] for h in ax.containers}
    fig.legend(handles.values(), handles.keys(), fontsize=8, loc="upper center", ncol=len(handles), frameon=False)
    fig.tight_layout(rect=(0, 0, 1, 0.9))  # the legend above the panels, off the bars
    fig.savefig(png, dpi=150)
    fig.savefig(pdf)


DECISION_POLICIES = ("pacml", "best_fixed", "rollout", "rollout_clairvoyant", "para_max")


def decisions(table: pd.DataFrame, png: str, pdf: str) -> None:
    """Per distribution (columns): mean chosen degree by model and by beta bin, and the share
    of jobs off the policy's usual degree by beta bin (0 for a constant policy)."""
    plt, sns = _setup()
    table = table[table["policy"].isin(DECISION_POLICIES)].copy()
    order = [p for p in DECISION_POLICIES if p in set(table["policy"])]
    table["policy"] = pd.Categorical(table["policy"].map(_label), [_label(p) for p in order])
    dists = list(dict.fromkeys(table["dist"]))
    rows = (
        ("model", "mean_degree", "Mean chosen degree"),
        ("beta_bin", "mean_degree", "Mean chosen degree"),
        ("beta_bin", "share_off_mode", "Share off the usual degree"),
    )
    fig, axes = plt.subplots(len(rows), max(1, len(dists)), figsize=(3.6 * max(1, len(dists)), 9.0), squeeze=False)
    for j, d in enumerate(dists):
        for i, (by, col, ylabel) in enumerate(rows):
            ax = axes[i][j]
            sub = table[(table["dist"] == d) & (table["by"] == by)]
            sns.pointplot(
                data=sub, x="group", y=col, hue="policy", dodge=0.3, ax=ax, markersize=4, linestyle="-", linewidth=1,
                palette=policy_palette(table["policy"].cat.categories),
            )  # fmt: skip
            ax.set(
                title=d if i == 0 else "", xlabel="Model" if by == "model" else "β bin", ylabel=ylabel, ylim=(0, None)
            )
            ax.tick_params(axis="x", rotation=45, labelsize=7)
            if ax.get_legend() is not None and (i, j) != (0, len(dists) - 1):
                ax.get_legend().remove()
    if dists:
        axes[0][-1].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.suptitle("What each policy decides: one constant degree, or one per job?")
    _save(fig, png, pdf)


def degree_distribution(jobs: pd.DataFrame, png: str, pdf: str) -> None:
    """Per distribution (panels): each policy's share of placed jobs by chosen degree, stacked;
    one colour a degree. A constant policy is one block; a per-job policy several."""
    plt, _ = _setup()
    import matplotlib

    placed = jobs[jobs["action"] > 0]
    dists = list(dict.fromkeys(placed["dist"]))
    degrees = sorted(int(d) for d in placed["action"].unique())
    cmap = matplotlib.colormaps["viridis"]
    colours = {d: cmap(i / max(1, len(degrees) - 1)) for i, d in enumerate(degrees)}
    fig, axes = plt.subplots(1, max(1, len(dists)), figsize=(3.6 * max(1, len(dists)), 3.4), squeeze=False, sharey=True)
    for ax, d in zip(axes[0], dists):
        shares = (
            placed[placed["dist"] == d].groupby("policy")["action"].value_counts(normalize=True).unstack(fill_value=0)
        )
        order = [p for p in POLICY_LABELS if p in shares.index] + sorted(set(shares.index) - set(POLICY_LABELS))
        shares = shares.loc[order[::-1]]  # the first policy on top
        left = np.zeros(len(shares))
        for degree in degrees:
            if degree in shares.columns:
                ax.barh(
                    [_label(p) for p in shares.index],
                    shares[degree],
                    left=left,
                    color=colours[degree],
                    label=str(degree),
                )
                left += shares[degree].to_numpy()
        ax.set(title=d, xlabel="Share of placed jobs", xlim=(0, 1))
    handles = {h.get_label(): h for ax in axes[0] for h in ax.containers}
    fig.legend(handles.values(), handles.keys(), title="Degree", fontsize=8, loc="center right", frameon=False)
    fig.tight_layout(rect=(0, 0, 0.93, 1))  # the legend right of the panels, off the bars
    fig.savefig(png, dpi=150)
    fig.savefig(pdf)


def network_overhead(table: pd.DataFrame, png: str, pdf: str) -> None:
    """The paper's first figure: the share of a training step the network costs, per model, as
    the degree grows (`pacml.sim.overhead`); the job alone on an empty cluster."""
    plt, _ = _setup()
    fig, ax = plt.subplots(figsize=(5.0, 3.4))
    for model, rows in table.groupby("model", sort=True):
        ax.plot(rows["degree"], 100 * rows["network_overhead"], marker="o", ms=3, lw=1.2, label=model)
    degrees = sorted(table["degree"].unique())
    ax.set_xscale("log", base=2)
    ax.set_xticks(degrees, [str(d) for d in degrees])
    ax.xaxis.set_minor_formatter(matplotlib_null_formatter())
    ax.set(xlabel="Partition degree (the job alone on an empty cluster)", ylabel="Network overhead (%)")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    _save(fig, png, pdf)


def make_figures(cfg: Config, inputs, outputs: list[str], decisions_csv: str | Path, overhead_csv: str | Path) -> None:
    """Every figure; ``outputs`` are (png, pdf) pairs in the workflow's FIGURE_NAMES order."""
    tidy = pd.concat([pd.read_csv(f) for f in inputs.tidy], ignore_index=True)
    jobs = pd.concat([pd.read_csv(f) for f in inputs.jobs], ignore_index=True)
    pairs = dict(zip([Path(p).stem for p in outputs[::2]], zip(outputs[::2], outputs[1::2])))
    beta_distributions(cfg, *pairs["beta_distributions"])
    validation_curves(list(inputs.curves), tidy, *pairs["validation_curves"])
    training_diagnostics(training_history(list(inputs.curves)), *pairs["training_diagnostics"])
    summary = pd.concat([pd.read_csv(f) for f in inputs.summaries], ignore_index=True)
    performance_bars(summary, *pairs["performance_bars"])
    reduction(summary, *pairs["reduction"])
    degree_distribution(jobs, *pairs["degree_distribution"])
    completed_jobs(jobs, *pairs["completed_jobs"])
    speedup(jobs, *pairs["speedup"])
    performance_vs_load(pd.read_csv(inputs.load_sweep[0]), *pairs["performance_vs_load"])
    graph_characterisation(pd.read_csv(inputs.graph_summary[0]), *pairs["graph_characterisation"])
    from pacml.analysis import decision_table

    table = decision_table(jobs)
    table.to_csv(decisions_csv, index=False)
    decisions(table, *pairs["decisions"])
    from pacml.analysis import blocking_cause_shares

    blocking_causes(blocking_cause_shares(tidy), *pairs["blocking_causes"])
    from pacml.graphs import load_graph_dir
    from pacml.sim.overhead import OVERHEAD_COLUMNS
    from pacml.sim.overhead import network_overhead as overhead_rows

    graphs = load_graph_dir(
        Path(inputs.graphs[0]).parent,
        names=[Path(f).stem for f in inputs.graphs],
        num_training_steps=cfg.workload.num_training_steps,
    )
    overhead = pd.DataFrame(overhead_rows(graphs, cfg), columns=list(OVERHEAD_COLUMNS))
    overhead.to_csv(overhead_csv, index=False)
    network_overhead(overhead, *pairs["network_overhead"])
