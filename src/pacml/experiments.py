"""Named experiments (``experiments:`` in the config; `ExperimentConfig`).

An experiment has two job pools: ``train`` (what the agents under test learn on) and
``test`` (what every policy is evaluated on). Its jobs, under ``results/experiments/<name>/``:

- the pool's graphs (built-in profiles, or ``pipedream:NAME`` files) in
  ``results/experiments/graphs/<key>/``, one folder for every pool of the same models and
  graph keys, whatever experiment or setting it is in (`graphs_key`);
- ``<pool>/<dist>/selection.json``: best_fixed's degree and the planners' base policy, chosen
  on that pool's validation seeds (the teacher of imitation reads it too; where nothing on the
  pool plans with a tuned base, it is left undecided: `plans_on`);
- ``<pool>/<dist>/train/seed<k>/``: agents trained on that pool and distribution. On
  ``train`` with the experiment's ``train_distribution`` (or each test distribution's own)
  and ``train_overrides``: the agents under test, evaluated as ``pacml_transfer`` (with
  ``train_in: main``, the main workflow's agents instead; in a sweep whose train_overrides
  set the sweep's key, the first setting's for all: `train_home`). On ``test`` with each test
  distribution: the reference, evaluated as ``pacml`` (unless ``reference: false``); reused
  from the main workflow (``results/<dist>/train/``, and its selections) when its config and
  pool are the same;
- ``test/<dist>/eval/<policy>_seed<k>.json``: every policy on the test pool's test seeds;
- ``summary.csv`` (tidy: experiment, dist, policy, metric, mean, ci_low, ci_high, n), ``summary.md``
  and ``figure.png``/``.pdf``.

A sweep (``sweep: {key: [values]}``) is one such experiment a value, ``<name>/<value>``
(`experiments`), and ``<name>/summary.csv`` (with a ``setting`` column), ``summary.md`` and
a figure across them (`summarise_sweep`). Each job's config is the workflow's, with the
experiment's ``overrides`` and the pool's models applied (`pool_config`), so the rules hash
exactly what their jobs read.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from pacml.config import Config, ExperimentConfig, config_from_dict
from pacml.config.checks import setting_label
from pacml.errors import ConfigError

PIPEDREAM_PREFIX = "pipedream:"
TRANSFER = "pacml_transfer"
"""The policy name of the agents under test in an experiment's tables."""


def plans_on(exp: ExperimentConfig, pool: str, cfg: Config) -> bool:
    """Whether anything on the pool reads a tuned planners' base: a planner among the test
    pool's baselines, or agents trained on the pool whose teacher plans with it
    (``imitation.teacher_base_policy`` tuned, or ``planning`` with ``planning.base_policy``
    tuned). Where nothing does, the pool's selection leaves it undecided (three rollouts per
    validation seed saved: `pacml.policies.planning.select`)."""
    if pool == "test" and any(p.startswith("rollout") for p in exp.baselines):
        return True
    trains_here = pool == "train" or exp.reference
    return trains_here and cfg.imitation.iterations > 0 and cfg.teacher_base == "tuned"


def tunes_base(cfg: Config, name: str, pool: str) -> bool:
    """The ``experiment_select`` rule's ``tune_base`` for experiment ``name``'s ``pool``."""
    return plans_on(experiment(cfg, name), pool, pool_config(cfg, name, pool))


def experiments(cfg: Config) -> dict[str, ExperimentConfig]:
    """Every experiment the workflow runs: each plain one by its name, each setting of a sweep
    as ``<name>/<value>`` (the sweep's key joins its overrides)."""
    out = {}
    for name, exp in cfg.experiments.items():
        if not exp.sweep:
            out[name] = exp
            continue
        ((key, values),) = exp.sweep.items()
        for value in values:
            out[f"{name}/{setting_label(value)}"] = _setting(exp, key, value)
    return out


def _setting(exp: ExperimentConfig, key: str, value) -> ExperimentConfig:
    reference = exp.reference and (
        not exp.reference_settings or setting_label(value) in {setting_label(v) for v in exp.reference_settings}
    )
    return dataclasses.replace(
        exp,
        sweep={},
        overrides={**exp.overrides, key: value},
        description=f"{exp.description} {key} = {value}.",
        reference=reference,
        reference_settings=(),
        setting_overrides={},  # `pool_config` applies the setting's own from the sweep's
    )


def experiment(cfg: Config, name: str) -> ExperimentConfig:
    """One experiment (or a sweep's setting, ``<name>/<value>``) by name."""
    parent, _, label = name.partition("/")
    exp = cfg.experiments.get(parent)
    if exp is not None and bool(label) == bool(exp.sweep):
        if not label:
            return exp
        ((key, values),) = exp.sweep.items()
        for value in values:
            if setting_label(value) == label:
                return _setting(exp, key, value)
    raise KeyError(name)


def sweep_settings(cfg: Config) -> dict[str, list[str]]:
    """Each sweep's settings, ``{name: [name/value, ...]}``, in the order of its values."""
    return {
        name: [f"{name}/{setting_label(v)}" for v in next(iter(exp.sweep.values()))]
        for name, exp in cfg.experiments.items()
        if exp.sweep
    }


def has_transfer(exp: ExperimentConfig) -> bool:
    """Whether the agents under test differ from the reference: they learnt in the main
    workflow, on another pool or distribution, or with their own ``train_overrides``."""
    return (
        exp.train_in == "main"
        or bool(exp.train_models)
        or exp.train_distribution is not None
        or bool(exp.train_overrides)
    )


def experiment_policies(cfg: Config, name: str) -> list[str]:
    """The policies an experiment evaluates: the agents under test, the reference, the baselines."""
    exp = experiment(cfg, name)
    agents = ([TRANSFER] if has_transfer(exp) else []) + (["pacml"] if exp.reference else [])
    return [*agents, *exp.baselines]


def model_specs(cfg: Config, exp: ExperimentConfig, pool: str) -> tuple[str, ...]:
    """The pool's model names as the experiment gives them (``pipedream:NAME`` or built-in);
    an empty ``train_models`` is the workflow's pool, an empty ``test_models`` the training pool."""
    main = tuple(f"{PIPEDREAM_PREFIX}{m}" if cfg.graphs.source == "pipedream" else m for m in cfg.graphs.models)
    train = exp.train_models or main
    return train if pool == "train" else (exp.test_models or train)


def graph_name(spec: str) -> str:
    return spec.removeprefix(PIPEDREAM_PREFIX)


def pool_config(cfg: Config, name: str, pool: str, source: str = "config.yaml") -> Config:
    """The config of experiment ``name``'s jobs on ``pool``: the workflow's (its scale applied),
    the experiment's overrides, and ``graphs.models`` set to the pool's graph names."""
    exp = experiment(cfg, name)
    data = dataclasses.asdict(cfg)
    data.pop("extra")
    data["experiments"] = {}
    data["workflow"]["scale"] = "default"  # applied already: the overrides must win over it
    parent, _, setting = name.partition("/")
    where = f"experiments.{parent}.sweep ({setting})" if setting else f"experiments.{name}.overrides"
    _set_keys(data, exp.overrides, where, source)
    own = cfg.experiments[parent].setting_overrides.get(setting) if setting else None
    if own:
        where = f"experiments.{parent}.setting_overrides.{setting}"
        _set_keys(data, own, where, source)
    if pool == "train" and exp.train_overrides:
        where = f"experiments.{parent}.train_overrides"
        _set_keys(data, exp.train_overrides, where, source)
    data["graphs"]["models"] = [graph_name(s) for s in model_specs(cfg, exp, pool)]
    data["figures"]["load_sweep_dist"] = None  # the experiments draw no load sweep
    data["workflow"]["distributions"] = list(
        dict.fromkeys([*exp.distributions, *([exp.train_distribution] if exp.train_distribution else [])])
    )
    try:
        return config_from_dict(data, f"{source} ({where})")
    except ConfigError as exc:
        raise ConfigError(f"{where}: {exc.key}", exc.value, exc.problem, source) from None


def _set_keys(data: dict, overrides: dict, where: str, source: str) -> None:
    for dotted, value in overrides.items():
        keys = str(dotted).split(".")
        node = data
        for k in keys[:-1]:
            node = node.get(k) if isinstance(node, dict) else None
        new_distribution = keys[0] == "distributions" and len(keys) == 2
        if not isinstance(node, dict) or keys[0] in ("experiments", "workflow", "tracking"):
            raise ConfigError(f"{where}.{dotted}", value, "not a key an experiment can set", source)
        if keys[-1] not in node and not new_distribution:
            raise ConfigError(f"{where}.{dotted}", value, "no such config key", source)
        node[keys[-1]] = value


def check_experiments(cfg: Config, source: str = "config.yaml") -> dict[tuple[str, str], Config]:
    """What the workflow checks of every experiment when it starts (its distributions and
    baselines are checked with the config): no pool names one graph twice, and each pool's
    config builds (the overrides name real keys with valid values); returns those configs by
    (experiment, pool). The models themselves are checked by `pool_inputs` when an experiment
    is asked for."""
    configs = {}
    for name, exp in experiments(cfg).items():
        for pool, field_name in (("train", "train_models"), ("test", "test_models")):
            specs = model_specs(cfg, exp, pool)
            if len({graph_name(s) for s in specs}) != len(specs):
                raise ConfigError(
                    f"experiments.{name}.{field_name}", list(specs), "two models of one pool share a name", source
                )
            configs[(name, pool)] = pool_config(cfg, name, pool, source)
    return configs


def pool_inputs(cfg: Config, name: str, pool: str, source: str = "config.yaml") -> list[str]:
    """The files a pool's jobs read (its ``pipedream:`` models' profiles, its arrival trace), for
    the workflow to require, after checking that every other model has a built-in profile; a
    ConfigError names the key of a model that is neither."""
    from pacml.graphs.models import is_known_model
    from pacml.graphs.pipedream import pipedream_file

    exp = experiment(cfg, name)
    field_name = "train_models" if pool == "train" or not exp.test_models else "test_models"
    files = []
    for i, spec in enumerate(model_specs(cfg, exp, pool)):
        key = f"experiments.{name}.{field_name}[{i}]"
        if spec.startswith(PIPEDREAM_PREFIX):
            path = pipedream_file(cfg.graphs.pipedream_dir, graph_name(spec))
            files.append(str(path or Path(cfg.graphs.pipedream_dir) / f"{graph_name(spec)}.txt"))
        elif not is_known_model(spec):
            raise ConfigError(key, spec, "no built-in profile of that name (or pipedream:NAME for a file)", source)
    trace = pool_config(cfg, name, pool, source).trace.path
    return files + ([trace] if trace is not None else [])


def graphs_key(cfg: Config, name: str, pool: str, pool_cfg: Config | None = None) -> str:
    """The name of the folder that holds a pool's graphs: a short hash of its model specs (a
    ``pipedream:`` file and a built-in profile of one name differ) and of what the graphs are
    built from (`GRAPH_KEYS` in the pool's config, ``pool_cfg`` where the caller has it), so that
    pools which would write the same files share one folder and one job (the offered loads,
    placers and cluster sizes of a sweep profile their models once)."""
    from pacml.config import GRAPH_KEYS, config_digest, section_hash

    specs = model_specs(cfg, experiment(cfg, name), pool)
    graphs = section_hash(pool_cfg or pool_config(cfg, name, pool), *GRAPH_KEYS)
    return config_digest({"models": list(specs), "graphs": graphs})


def build_pool_graphs(cfg: Config, name: str, pool: str, out_dir: str | Path) -> list[Path]:
    """The ``experiment_graphs`` rule: one canonical JSON per model of the pool."""
    from pacml.graphs.io import write_graph
    from pacml.graphs.pipedream import pipedream_file, read_pipedream
    from pacml.graphs.profiler import profile_model

    exp = experiment(cfg, name)
    steps = pool_config(cfg, name, pool).workload.num_training_steps
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for spec in model_specs(cfg, exp, pool):
        if spec.startswith(PIPEDREAM_PREFIX):
            graph = read_pipedream(pipedream_file(cfg.graphs.pipedream_dir, graph_name(spec)), steps)
        else:
            graph = profile_model(spec, steps)
        target = out_dir / f"{graph_name(spec)}.json"
        write_graph(graph, target)
        written.append(target)
    return written


def train_distribution(exp: ExperimentConfig, dist: str) -> str:
    """What the agents under test for test distribution ``dist`` learn on."""
    return exp.train_distribution or dist


def train_home(cfg: Config, name: str) -> str:
    """Where experiment ``name``'s agents under test learn: its own ``train`` pool, except in a
    sweep whose ``train_overrides`` set the sweep's key: there every setting's training pool is
    the same, so one set of agents (the first setting's) serves them all."""
    parent, _, label = name.partition("/")
    exp = cfg.experiments.get(parent)
    if not label or exp is None:
        return name
    ((key, values),) = exp.sweep.items()
    return f"{parent}/{setting_label(values[0])}" if key in exp.train_overrides else name


def transfer_checkpoint(cfg: Config, name: str, dist: str, seed) -> str:
    """Where the agents under test for test distribution ``dist`` and training seed ``seed``
    are: the experiment's training pool's, or (``train_in: main``) the main workflow's, which
    must train on that distribution (checked when the job is asked for, so a scale with fewer
    distributions still runs everything else)."""
    exp = experiment(cfg, name)
    trained_on = train_distribution(exp, dist)
    if exp.train_in != "main":
        return f"results/experiments/{train_home(cfg, name)}/train/{trained_on}/train/seed{seed}/best.pt"
    if trained_on not in cfg.workflow.distributions:
        raise ConfigError(
            f"experiments.{name.partition('/')[0]}.train_in",
            exp.train_in,
            f"the main workflow trains no agents on {trained_on} (workflow.distributions = "
            f"{list(cfg.workflow.distributions)}): add it there, or train the agents in the experiment",
        )
    return f"results/{trained_on}/train/seed{seed}/best.pt"


def reuses_main(cfg: Config, name: str, what: str = "agents") -> bool:
    """The experiment's test pool jobs are the main workflow's (``results/<dist>/``) when the
    test pool is the workflow's pool and every key they read is the same: ``agents``, the
    reference agents (what training reads); ``selection``, best_fixed's and the planners'
    choices (what selection reads). Only the test distributions count: a job reads its own."""
    from pacml.config import SELECTION_KEYS, section_hash, training_keys

    exp = experiment(cfg, name)
    test = pool_config(cfg, name, "test")
    if model_specs(cfg, exp, "test") != model_specs(cfg, ExperimentConfig(), "train"):
        return False
    if any(d not in cfg.workflow.distributions for d in exp.distributions):
        return False
    keys = {"agents": training_keys, "selection": lambda c: SELECTION_KEYS}[what]
    return section_hash(test, *keys(test), dists=exp.distributions) == section_hash(
        cfg, *keys(cfg), dists=exp.distributions
    )


def evaluate_replicates(
    cfg: Config,
    name: str,
    graphs_dir,
    policy: str,
    dist: str,
    replicates,
    outs,
    records_csvs,
    checkpoints=(),
    selection=None,
) -> list[dict]:
    """The ``experiment_evaluate`` rule: ``policy`` on the test pool's test seeds, once per
    replicate (an agent from that replicate's checkpoint, ``pacml_transfer`` being the agents
    under test; a stochastic policy with that replicate's generator). A policy that never
    draws from its generator (`pacml.policies.base.is_seedless`) plays once, and each
    replicate's files are that run labelled with its number: what separate runs write, to the
    last digit."""
    from pacml.policies.base import PolicyContext, is_seedless, make_policy
    from pacml.runs import build_model, play, write_evaluation
    from pacml.sim.workload import get_distribution

    test = pool_config(cfg, name, "test")
    get_distribution(test.distributions, dist)
    model = build_model(graphs_dir, test)
    context = PolicyContext(model, dist, selection)
    runs_as = "pacml" if policy == TRANSFER else policy
    seeds, max_degree = test.workflow.test_seeds, test.cluster.max_degree
    once = (
        play(model, make_policy(runs_as, None, max_degree, context), dist, seeds, 0) if is_seedless(runs_as) else None
    )
    out_rows = []
    for i, (r, out, csv) in enumerate(zip(replicates, outs, records_csvs, strict=True)):
        if once is not None:
            rows, records = ([{**x, "replicate": r} for x in part] for part in once)
        else:
            checkpoint = checkpoints[i] if checkpoints else None
            rows, records = play(model, make_policy(runs_as, checkpoint, max_degree, context), dist, seeds, r)
        rows = [{**row, "policy": policy, "experiment": name} for row in rows]
        write_evaluation(rows, records, out, csv)
        out_rows += rows
    return out_rows


def summarise_experiment(name: str, eval_files, cfg: Config, out_csv, out_md, png, pdf) -> pd.DataFrame:  # noqa: F821
    """The ``experiment_summary`` rule: mean and 95 % CI (hierarchical bootstrap over the agents'
    training seeds, then test seeds, as the workflow's summaries) of every metric per (dist, policy), tidy with the
    experiment's name; the Markdown table of blocking rates; the figure."""
    from pacml.analysis import summarise, tidy_rows
    from pacml.plotting import experiment_bars

    tidy = tidy_rows(eval_files)
    summary = summarise(tidy)
    summary.insert(0, "experiment", name)
    Path(out_csv).parent.mkdir(parents=True, exist_ok=True)
    summary.to_csv(out_csv, index=False)
    Path(out_md).write_text(blocking_table(summary, experiment(cfg, name), name))
    experiment_bars(summary, name, png, pdf)
    return summary


def summarise_sweep(name: str, setting_csvs, cfg: Config, out_csv, out_md, png, pdf) -> pd.DataFrame:  # noqa: F821
    """The ``experiment_sweep`` rule: the settings' summaries in one tidy table (experiment,
    setting, dist, policy, metric, mean, ci_low, ci_high, n), a Markdown table of blocking rates with a
    column per setting, and the figure across settings."""
    import pandas as pd

    from pacml.plotting import sweep_lines

    exp = cfg.experiments[name]
    ((key, values),) = exp.sweep.items()
    frames = []
    for value, path in zip(values, setting_csvs, strict=True):
        frame = pd.read_csv(path)
        frame["experiment"] = name
        frame.insert(1, "setting", setting_label(value))
        frames.append(frame)
    summary = pd.concat(frames, ignore_index=True)
    Path(out_csv).parent.mkdir(parents=True, exist_ok=True)
    summary.to_csv(out_csv, index=False)
    Path(out_md).write_text(sweep_table(summary, exp, name, key))
    sweep_lines(summary, name, key, png, pdf)
    return summary


def sweep_table(summary, exp: ExperimentConfig, name: str, key: str) -> str:
    """Blocking rate (mean [95 % CI, hierarchical bootstrap]) per policy and setting, a table a test distribution,
    and each setting's best policy."""
    rates = summary[summary["metric"] == "blocking_rate"]
    settings = list(dict.fromkeys(rates["setting"]))
    lines = [f"### {name}", "", exp.description, ""]
    for dist in dict.fromkeys(rates["dist"]):
        sub = rates[rates["dist"] == dist]
        cell = {(r.setting, r.policy): r for r in sub.itertuples()}
        lines += [f"{dist}, blocking rate by `{key}`:", "", "| policy | " + " | ".join(settings) + " |"]
        lines.append("|---" * (len(settings) + 1) + "|")
        for policy in policy_order(set(sub["policy"])):
            row = [_cell(cell.get((s, policy))) for s in settings]
            lines.append(f"| {POLICY_TEXT.get(policy, policy)} | " + " | ".join(row) + " |")
        best = [min((r for (s2, _), r in cell.items() if s2 == s), key=lambda r: r.mean) for s in settings]
        lines += ["", "Lowest: " + "; ".join(f"{s}: {b.policy} ({b.mean:.3f})" for s, b in zip(settings, best))]
        lines += [*agent_lines(cell, settings, set(sub["policy"])), ""]
    return "\n".join(lines)


def policy_order(policies) -> list[str]:
    first = [TRANSFER, "pacml"]
    return [p for p in first if p in policies] + sorted(set(policies) - set(first))


def blocking_table(summary, exp: ExperimentConfig, name: str) -> str:
    """Blocking rate (mean [95 % CI, hierarchical bootstrap]) per policy and test distribution, and the agents under
    test against the reference and the best baseline."""
    rates = summary[summary["metric"] == "blocking_rate"]
    dists = list(dict.fromkeys(rates["dist"]))
    cell = {(r.dist, r.policy): r for r in rates.itertuples()}
    lines = [f"### {name}", "", exp.description, "", "| policy | " + " | ".join(dists) + " |"]
    lines.append("|---" * (len(dists) + 1) + "|")
    for policy in policy_order(set(rates["policy"])):
        row = [_cell(cell.get((d, policy))) for d in dists]
        lines.append(f"| {POLICY_TEXT.get(policy, policy)} | " + " | ".join(row) + " |")
    lines += ["", *agent_lines(cell, dists, set(rates["policy"]))]
    return "\n".join(lines).rstrip("\n") + "\n"


def agent_lines(cell: dict, columns, policies) -> list[str]:
    """One line a column (distribution or setting): the agents under test (else the reference)
    against the reference, Para_max and the best baseline there."""
    agent = TRANSFER if TRANSFER in policies else "pacml" if "pacml" in policies else None
    if agent is None:
        return []
    out = []
    for c in columns:
        a = cell.get((c, agent))
        base = [cell[(c, p)] for p in sorted(policies - {TRANSFER, "pacml"}) if (c, p) in cell]
        if a is None or not base:
            continue
        best = min(base, key=lambda r: r.mean)
        parts = [f"- {c}: {'agents under test' if agent == TRANSFER else 'PAC-ML'} {a.mean:.3f}"]
        ref = cell.get((c, "pacml")) if agent == TRANSFER else None
        if ref is not None:
            parts.append(f"{a.mean - ref.mean:+.3f} against agents trained here ({ref.mean:.3f})")
        if (c, "para_max") in cell:
            parts.append(f"{a.mean - cell[(c, 'para_max')].mean:+.3f} against para_max")
        parts.append(f"{a.mean - best.mean:+.3f} against the best baseline ({best.policy}, {best.mean:.3f})")
        out.append(", ".join(parts))
    return out


POLICY_TEXT = {TRANSFER: "PAC-ML, agents under test", "pacml": "PAC-ML trained here (reference)"}


def _cell(r) -> str:
    if r is None:
        return "-"
    return f"{r.mean:.3f}" if r.n < 2 else f"{r.mean:.3f} [{r.ci_low:.3f}, {r.ci_high:.3f}]"


def join_tables(tables, out) -> None:
    """The ``experiments_table`` rule: every experiment's Markdown table in one file."""
    Path(out).write_text("\n".join(Path(t).read_text() for t in tables))


README_BEGIN = "<!-- experiments: generated by tools/sync_readme.py from results/published/experiments; do not edit -->"
README_END = "<!-- experiments: end -->"


def readme_block(published: str | Path, names, link_prefix: str = "results/published/experiments") -> str:
    """The README's experiments block: each published experiment's own ``summary.md`` (table and
    lines generated from its ``summary.csv``), in ``names``' order, with its figure linked;
    names not published yet are listed as such."""
    published = Path(published)
    parts, missing = [README_BEGIN, ""], []
    for name in names:
        table = published / name / "summary.md"
        if not table.is_file():
            missing.append(name)
            continue
        parts += [table.read_text().rstrip("\n"), "", f"![{name}]({link_prefix}/{name}/figure.png)", ""]
    if missing:
        parts += [f"Not run at the default scale yet: {', '.join(missing)}.", ""]
    parts.append(README_END)
    return "\n".join(parts)


def sync_readme(readme: str | Path, published: str | Path, names, write: bool = True) -> bool:
    """Replace the README's experiments block with `readme_block`; True if it was current."""
    return sync_block(readme, README_BEGIN, README_END, readme_block(published, names), write)


RESULTS_BEGIN = "<!-- results: generated by tools/sync_readme.py from results/published/*/summary.md; do not edit -->"
RESULTS_END = "<!-- results: end -->"
RESULTS_RUNS = {
    "builtin": "Built-in graphs, `make results`",
    "pipedream": "The paper's PipeDream graphs",
    "builtin_paper": "Built-in graphs at the `paper` scale",
}
"""The published main-workflow runs whose tables the README shows, with their headings."""


def results_block(published: str | Path, runs: dict[str, str] = RESULTS_RUNS) -> str:
    """The README's results block: each published run's ``summary.md`` (the workflow's
    ``summary`` rule wrote it) under its heading, with its headline figure (the blocking
    reduction against Para_max)."""
    published = Path(published)
    parts = [RESULTS_BEGIN, ""]
    for name, heading in runs.items():
        table = published / name / "summary.md"
        if not table.is_file():
            continue
        figure = f"results/published/{name}/figures/reduction.png"
        parts += [f"### {heading} (`results/published/{name}/`)", "", table.read_text().rstrip("\n"), ""]
        if (published / name / "figures" / "reduction.png").is_file():
            parts += [f"![Blocking reduction vs Para_max, {name}]({figure})", ""]
    parts.append(RESULTS_END)
    return "\n".join(parts)


def sync_block(readme: str | Path, begin: str, end: str, block: str, write: bool = True) -> bool:
    """Replace the README's text from ``begin`` to ``end`` with ``block``; True if it was current."""
    readme = Path(readme)
    text = readme.read_text()
    start, stop = text.index(begin), text.index(end) + len(end)
    current = text[start:stop] == block
    if write and not current:
        readme.write_text(text[:start] + block + text[stop:])
    return current
