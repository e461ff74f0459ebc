"""Figures a reviewer accepts: one colour per policy in every figure, TrueType fonts in PDFs."""

from __future__ import annotations

import pandas as pd
import pytest

from pacml.plotting import POLICY_COLORS, POLICY_LABELS, performance_bars, policy_palette


def tidy(policies: list[str]) -> pd.DataFrame:
    rows = []
    for i, p in enumerate(policies):
        for seed in range(3):
            for metric, value in (
                ("blocking_rate", 0.1 * (i + 1) + 0.01 * seed),
                ("demand_throughput", 1e6 * (i + 1)),
                ("worker_utilisation", 0.5),
                ("mean_jct", 100.0 * (i + 1)),
            ):
                rows.append(
                    {"dist": "beta_a", "policy": p, "replicate": 0, "seed": seed, "metric": metric, "value": value}
                )
    return pd.DataFrame(rows)


def test_a_policy_keeps_its_colour_whichever_policies_are_beside_it():
    alone = policy_palette([POLICY_LABELS["pacml"]])
    crowd = policy_palette([POLICY_LABELS[p] for p in ("random", "para_max", "pacml", "oracle")] + ["fixed-4"])
    assert alone["PAC-ML"] == crowd["PAC-ML"] == POLICY_COLORS["pacml"]
    assert len(set(POLICY_COLORS.values())) == len(POLICY_COLORS)  # no two policies share one
    assert crowd["fixed-4"] not in POLICY_COLORS.values()


@pytest.mark.parametrize("policies", [["pacml", "para_max"], ["oracle", "random", "pacml", "para_max"]])
def test_the_bars_use_the_fixed_colours_and_the_pdf_embeds_truetype(tmp_path, policies):
    import matplotlib.colors as mcolors
    import matplotlib.pyplot as plt

    from pacml.analysis import summarise

    performance_bars(summarise(tidy(policies)), str(tmp_path / "bars.png"), str(tmp_path / "bars.pdf"))
    fig = plt.gcf()
    legend = fig.axes[-1].get_legend()
    assert [ax.get_ylabel() for ax in fig.axes] == [
        "Blocking rate",
        "Throughput (MB/s)",
        "Worker utilisation",
        "Mean JCT of completed jobs (s)",
    ]
    shown = {t.get_text(): mcolors.to_hex(h.get_facecolor()) for t, h in zip(legend.get_texts(), legend.legend_handles)}
    assert shown == {POLICY_LABELS[p]: POLICY_COLORS[p] for p in policies}
    plt.close("all")
    pdf = (tmp_path / "bars.pdf").read_bytes()
    assert b"/FontFile2" in pdf and b"/Type3" not in pdf


def test_the_load_sweep_labels_each_swept_load_and_shows_throughput_in_mb_per_s(tmp_path):
    import matplotlib.pyplot as plt

    from pacml.plotting import performance_vs_load

    rows = [
        {"policy": p, "interarrival_s": ia, "seed": s, "blocking_rate": 0.2, "mean_jct": 10.0}
        | {"demand_throughput": 2.5e7, "cluster_throughput": 5e7}
        for p in ("para_max", "pacml")
        for ia in (700.0, 1400.0, 2800.0)
        for s in (0, 1)
    ]
    performance_vs_load(pd.DataFrame(rows), str(tmp_path / "l.png"), str(tmp_path / "l.pdf"))
    ax = plt.gcf().axes[1]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["700", "1400", "2800"]
    assert ax.get_ylabel() == "Demand throughput (MB/s)" and ax.lines[0].get_ydata()[0] == 25.0
    plt.close("all")


def test_the_blocking_causes_figure_stacks_each_policys_causes(tmp_path):
    from pacml.plotting import CAUSE_COLORS, blocking_causes
    from pacml.sim.records import BLOCK_CAUSES

    assert set(CAUSE_COLORS) == set(BLOCK_CAUSES)  # every cause has its colour
    shares = pd.DataFrame(
        [
            {"dist": d, "policy": p, "cause": c, "share": s}
            for d in ("beta_a", "beta_b")
            for p, per_cause in (("pacml", {"jct": 0.1, "placement": 0.05}), ("para_max", {"horizon": 0.3}))
            for c in BLOCK_CAUSES
            for s in [per_cause.get(c, 0.0)]
        ]
    )
    blocking_causes(shares, str(tmp_path / "c.png"), str(tmp_path / "c.pdf"))
    assert (tmp_path / "c.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (tmp_path / "c.pdf").read_bytes()[:5] == b"%PDF-"


def test_the_degree_distribution_stacks_each_policys_shares_of_placed_jobs(tmp_path):
    import matplotlib.pyplot as plt

    from pacml.plotting import degree_distribution

    jobs = pd.DataFrame(
        [
            {"dist": "beta_a", "policy": "pacml", "action": a}
            for a in (4, 4, 8, 2, 0)  # the rejected job (degree 0) is not placed: left out
        ]
        + [{"dist": "beta_a", "policy": "para_max", "action": 16}] * 3
    )
    degree_distribution(jobs, str(tmp_path / "d.png"), str(tmp_path / "d.pdf"))
    (ax,) = plt.gcf().axes
    widths: dict[str, dict[str, float]] = {}
    for container in ax.containers:
        for patch, label in zip(container.patches, [t.get_text() for t in ax.get_yticklabels()]):
            widths.setdefault(label, {})[container.get_label()] = patch.get_width()
    plt.close("all")
    assert widths["PAC-ML"] == {"2": 0.25, "4": 0.5, "8": 0.25, "16": 0.0}
    assert widths["Para$_{max}$"] == {"2": 0.0, "4": 0.0, "8": 0.0, "16": 1.0}


def test_the_reduction_figure_shows_the_summarys_reduction_and_interval(tmp_path):
    import matplotlib.pyplot as plt

    from pacml.plotting import reduction

    summary = pd.DataFrame(
        [
            {"dist": "beta_a", "policy": p, "metric": "blocking_reduction_vs_para_max", "mean": m, "ci_low": lo,
             "ci_high": hi, "n": 9}
            for p, m, lo, hi in (("pacml", 0.4, 0.3, 0.45), ("random", -1.0, -1.2, -0.8))
        ]
    )  # fmt: skip
    reduction(summary, str(tmp_path / "r.png"), str(tmp_path / "r.pdf"))
    (ax,) = plt.gcf().axes
    bars = [p for c in ax.containers if hasattr(c, "patches") for p in c.patches]
    (line,) = [c for c in ax.containers if not hasattr(c, "patches")][0].lines[2]  # the error bar's segments
    plt.close("all")
    assert [round(b.get_height(), 9) for b in bars] == [40.0]  # random is off the figure
    assert line.get_segments()[0][:, 1].tolist() == pytest.approx([30.0, 45.0])


def test_the_network_overhead_figure_draws_a_line_per_model_in_per_cent(tmp_path):
    import matplotlib.pyplot as plt

    from pacml.plotting import network_overhead

    table = pd.DataFrame(
        [
            {"model": m, "degree": d, "network_overhead": o}
            for m, rows in (("alexnet", ((1, 0.0), (2, 0.001))), ("gnmt", ((1, 0.0), (4, 0.02))))
            for d, o in rows
        ]
    )
    network_overhead(table, str(tmp_path / "o.png"), str(tmp_path / "o.pdf"))
    (ax,) = plt.gcf().axes
    lines = {line.get_label(): line.get_ydata().tolist() for line in ax.get_lines()}
    plt.close("all")
    assert lines == {"alexnet": [0.0, 0.1], "gnmt": [0.0, 2.0]}


def test_training_diagnostics_draw_the_logged_metrics_one_line_an_agent(tmp_path):
    import json

    import matplotlib.pyplot as plt

    from pacml.plotting import training_diagnostics, training_history

    curves = []
    for dist, seed in (("beta_a", 0), ("beta_a", 1), ("beta_d", 0)):
        history = [
            {
                "phase": "imitation",
                "step": it,
                "imitation/agreement": 0.5 + 0.1 * it + seed / 100,
                "imitation/loss": 1.0,
            }
            for it in (1, 2, 3)
        ]
        path = tmp_path / f"{dist}{seed}.json"
        path.write_text(json.dumps({"dist": dist, "seed": seed, "curve": [], "history": history}))
        curves.append(str(path))
    table = training_history(curves)
    assert len(table) == 3 * 3 * 2 and set(table["metric"]) == {"imitation/agreement", "imitation/loss"}
    training_diagnostics(table, str(tmp_path / "t.png"), str(tmp_path / "t.pdf"))
    axes = plt.gcf().axes
    assert [ax.get_ylabel() for ax in axes] == ["Agreement with the teacher", "Imitation loss"]  # only what was logged
    agreement = [line.get_ydata().tolist() for line in axes[0].get_lines()]
    plt.close("all")
    assert agreement == [
        pytest.approx([0.6, 0.7, 0.8]),
        pytest.approx([0.61, 0.71, 0.81]),
        pytest.approx([0.6, 0.7, 0.8]),
    ]
