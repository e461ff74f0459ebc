"""Range and name checks of a built `Config`: every error names the dotted key."""

from __future__ import annotations

import re
from pathlib import PurePath

from pacml.config.tree import Config
from pacml.errors import ConfigError

NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
"""Names that become paths, MLflow tags and regexes (distributions, models, the experiment):
letters, digits, ``_`` and ``-``, at most 64 characters, not starting with ``-`` or ``_``."""

MAX_ARRIVALS = 1_000_000
"""Arrivals an episode may hold (horizon / interarrival + 1): memory grows with it."""
MAX_OFFERED_LOAD = 1000.0
"""The largest offered load (the paper's is 0.94; the default load sweep goes to 2)."""
MAX_REPLICATION_FACTOR = 1_000_000
"""Copies of each graph in the job pool."""
MAX_DECIMALS = 6
"""Decimals of a beta distribution's support (its PMF has up to 10**decimals points)."""
MAX_SAMPLES = 10_000_000
MAX_BINS = 1_000_000


def check_name(name: object, key: str, source: str) -> None:
    """A name that may reach a path, a tag or a regex: `NAME_PATTERN` or a named error."""
    if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
        raise ConfigError(
            key,
            name,
            "a name must be letters, digits, '_' and '-' (at most 64, starting with a letter or digit)",
            source,
        )


def _check_ranges(cfg: Config, source: str) -> None:
    _check_names_and_bounds(cfg, source)
    c = cfg.cluster
    for key in ("communication_groups", "racks_per_group", "servers_per_rack", "max_degree"):
        if getattr(c, key) < 1:
            raise ConfigError(f"cluster.{key}", getattr(c, key), "must be >= 1", source)
    if c.racks_per_group > c.communication_groups:
        raise ConfigError(
            "cluster.racks_per_group",
            c.racks_per_group,
            f"RAMP needs racks_per_group <= communication_groups ({c.communication_groups})",
            source,
        )
    for key in ("node_bandwidth_bytes_per_s", "worker_memory_bytes"):
        if not getattr(c, key) > 0:
            raise ConfigError(f"cluster.{key}", getattr(c, key), "must be > 0", source)
    for key in ("propagation_latency_s", "io_latency_s", "reconfiguration_s"):
        if not getattr(c, key) >= 0:
            raise ConfigError(f"cluster.{key}", getattr(c, key), "must be >= 0", source)
    if not cfg.partition.min_op_time_s > 0:
        raise ConfigError("partition.min_op_time_s", cfg.partition.min_op_time_s, "must be > 0", source)
    w = cfg.workload
    for key in ("num_training_steps", "replication_factor"):
        if getattr(w, key) < 1:
            raise ConfigError(f"workload.{key}", getattr(w, key), "must be >= 1", source)
    for key in ("compute_time_scale", "interarrival_s", "horizon_s"):
        if not getattr(w, key) > 0:
            raise ConfigError(f"workload.{key}", getattr(w, key), "must be > 0", source)
    if w.offered_load is not None and not w.offered_load > 0:
        raise ConfigError("workload.offered_load", w.offered_load, "must be > 0 or null", source)
    if not cfg.distributions:
        raise ConfigError("distributions", {}, "define at least one distribution", source)
    for name, d in cfg.distributions.items():
        key = f"distributions.{name}"
        if not 0 < d.min <= d.max <= 1:
            raise ConfigError(f"{key}.min", (d.min, d.max), "need 0 < min <= max <= 1", source)
        if d.decimals < 0:
            raise ConfigError(f"{key}.decimals", d.decimals, "must be >= 0", source)
        for bound in ("min", "max"):  # betas are rounded to decimals: a bound off that grid would
            value = getattr(d, bound)  # round to a beta outside [min, max] (min 0.05, 1 decimal: 0)
            if round(value, d.decimals) != value:
                raise ConfigError(
                    f"{key}.{bound}", value, f"must have at most {d.decimals} decimals ({key}.decimals)", source
                )
        if d.samples < 1 or d.bins < 1:
            raise ConfigError(f"{key}.samples", (d.samples, d.bins), "samples and bins must be >= 1", source)
        if (d.kind == "mixture") != bool(d.components):
            raise ConfigError(
                f"{key}.components", list(d.components), "a mixture (and only a mixture) has components", source
            )
        for i, c in enumerate(d.components):
            if c not in cfg.distributions or cfg.distributions[c].kind == "mixture":
                raise ConfigError(
                    f"{key}.components[{i}]", c, "must name a uniform or skewnorm distribution of this config", source
                )
    a = cfg.agent
    for key in ("message_dim", "hidden_dim", "node_dim", "graph_dim"):
        if getattr(a, key) < 1:
            raise ConfigError(f"agent.{key}", getattr(a, key), "must be >= 1", source)
    if a.message_dim % 2:
        raise ConfigError("agent.message_dim", a.message_dim, "must be even (half node, half edge)", source)
    if a.num_rounds < 2:
        raise ConfigError("agent.num_rounds", a.num_rounds, "must be >= 2", source)
    for key in ("log10_seconds", "log10_bytes", "log10_counts"):
        lo_hi = getattr(a, key)
        if len(lo_hi) != 2 or not lo_hi[0] < lo_hi[1]:
            raise ConfigError(f"agent.{key}", list(lo_hi), "needs [low, high] with low < high", source)
    p = cfg.ppo
    if p.total_timesteps < (0 if cfg.imitation.iterations else 1):
        raise ConfigError("ppo.total_timesteps", p.total_timesteps, "must be >= 1 (>= 0 after imitation)", source)
    for key in (
        "num_envs",
        "num_steps",
        "num_minibatches",
        "update_epochs",
        "validation_interval",
        "torch_threads",
    ):
        if getattr(p, key) < 1:
            raise ConfigError(f"ppo.{key}", getattr(p, key), "must be >= 1", source)
    if (p.num_envs * p.num_steps) % p.num_minibatches:
        raise ConfigError(
            "ppo.num_minibatches",
            p.num_minibatches,
            f"must divide num_envs x num_steps = {p.num_envs * p.num_steps}",
            source,
        )
    if not (0 < p.gamma <= 1 and 0 <= p.gae_lambda <= 1):
        raise ConfigError("ppo.gamma", (p.gamma, p.gae_lambda), "need 0 < gamma <= 1 and 0 <= gae_lambda <= 1", source)
    for i, name in enumerate(cfg.workflow.baselines):
        _check_policy_name(name, cfg.cluster.max_degree, f"workflow.baselines[{i}]", source)
    for i, name in enumerate(cfg.figures.load_sweep_policies):
        _check_policy_name(name, cfg.cluster.max_degree, f"figures.load_sweep_policies[{i}]", source)
    _check_experiments(cfg, source)
    if cfg.planning.base_policy not in ("best_fixed", "tuned"):
        _check_policy_name(
            cfg.planning.base_policy,
            cfg.cluster.max_degree,
            "planning.base_policy",
            source,
            ("para_max", "para_min", "sequential"),
        )
    for i, name in enumerate(cfg.planning.extra_bases):
        _check_policy_name(
            name, cfg.cluster.max_degree, f"planning.extra_bases[{i}]", source, ("para_max", "para_min", "sequential")
        )
    im = cfg.imitation
    if a.actor_ensemble < 1:
        raise ConfigError("agent.actor_ensemble", a.actor_ensemble, "must be >= 1", source)
    if a.actor_ensemble > max(1, im.iterations):
        raise ConfigError(
            "agent.actor_ensemble",
            a.actor_ensemble,
            f"needs as many imitation iterations (its actors are their weights; imitation.iterations is {im.iterations})",
            source,
        )
    if a.actor_ensemble > 1 and p.total_timesteps:
        raise ConfigError(
            "agent.actor_ensemble",
            a.actor_ensemble,
            "needs ppo.total_timesteps: 0 (PPO fine-tunes one actor, not an ensemble)",
            source,
        )
    for key in ("iterations",):
        if getattr(im, key) < 0:
            raise ConfigError(f"imitation.{key}", getattr(im, key), "must be >= 0", source)
    for key in ("episodes_per_iteration", "epochs", "minibatch_size"):
        if getattr(im, key) < 1:
            raise ConfigError(f"imitation.{key}", getattr(im, key), "must be >= 1", source)
    if im.temperature < 0:
        raise ConfigError("imitation.temperature", im.temperature, "must be >= 0", source)
    if not (0 <= im.teacher_share_decay <= 1 and im.learning_rate > 0):
        raise ConfigError(
            "imitation.teacher_share_decay",
            im.teacher_share_decay,
            "need 0 <= teacher_share_decay <= 1 and learning_rate > 0",
            source,
        )
    _check_teacher(
        (im.teacher_base_policy, im.teacher_horizon, im.teacher_futures),
        ("imitation.teacher_base_policy", "imitation.teacher_horizon", "imitation.teacher_futures"),
        cfg.cluster.max_degree,
        source,
    )
    if im.alternative_teachers and im.iterations == 0:
        raise ConfigError(
            "imitation.alternative_teachers",
            [t.base_policy for t in im.alternative_teachers],
            "needs imitation.iterations >= 1 (teachers teach by imitation)",
            source,
        )
    if im.alternative_teachers and len(cfg.agent.init_degree_biases) > 1:
        raise ConfigError(
            "imitation.alternative_teachers",
            [t.base_policy for t in im.alternative_teachers],
            "and several agent.init_degree_biases would multiply the starts: give one or the other",
            source,
        )
    if not 0 <= im.alternative_margin <= 1:
        raise ConfigError("imitation.alternative_margin", im.alternative_margin, "must be in [0, 1]", source)
    for i, t in enumerate(im.alternative_teachers):
        key = f"imitation.alternative_teachers[{i}]"
        _check_teacher(
            (t.base_policy, t.horizon, t.futures),
            (f"{key}.base_policy", f"{key}.horizon", f"{key}.futures"),
            cfg.cluster.max_degree,
            source,
        )
    pl = cfg.planning
    for key in ("horizon", "num_futures"):
        if getattr(pl, key) < 1:
            raise ConfigError(f"planning.{key}", getattr(pl, key), "must be >= 1", source)
    clash = sorted(set(cfg.workflow.validation_seeds) & set(cfg.workflow.test_seeds))
    if clash:
        raise ConfigError(
            "workflow.validation_seeds",
            list(cfg.workflow.validation_seeds),
            f"must not contain test seeds {clash}",
            source,
        )
    for i, name in enumerate(cfg.workflow.distributions):
        if name not in cfg.distributions:
            raise ConfigError(
                f"workflow.distributions[{i}]",
                name,
                f"unknown distribution; defined: {sorted(cfg.distributions)}",
                source,
            )


def _check_experiments(cfg: Config, source: str) -> None:
    """What an experiment names that the config itself defines (its models and overrides are
    checked by `pacml.experiments.check_experiments` before the workflow runs)."""
    for name, exp in cfg.experiments.items():
        key = f"experiments.{name}"
        check_name(name, key, source)
        own = [k.split(".")[1] for k in exp.overrides if k.startswith("distributions.") and k.count(".") == 1]
        defined = sorted({*cfg.distributions, *own})
        if not exp.distributions:
            raise ConfigError(f"{key}.distributions", [], "name at least one test distribution", source)
        for i, d in enumerate(exp.distributions):
            if d not in defined:
                raise ConfigError(f"{key}.distributions[{i}]", d, f"no such distribution; defined: {defined}", source)
        if exp.train_distribution is not None and exp.train_distribution not in defined:
            raise ConfigError(
                f"{key}.train_distribution", exp.train_distribution, f"no such distribution; defined: {defined}", source
            )
        for i, policy in enumerate(exp.baselines):
            _check_policy_name(policy, cfg.cluster.max_degree, f"{key}.baselines[{i}]", source)
        if len(exp.sweep) > 1:
            raise ConfigError(f"{key}.sweep", list(exp.sweep), "sweep one key at a time", source)
        for swept, values in exp.sweep.items():
            labels = [setting_label(v) for v in values]
            if not values or len(set(labels)) != len(labels):
                raise ConfigError(f"{key}.sweep.{swept}", list(values), "give distinct values, at least one", source)
            if swept in exp.overrides:
                raise ConfigError(f"{key}.sweep.{swept}", list(values), "the key is in the overrides too", source)
            for i, v in enumerate(exp.reference_settings):
                if setting_label(v) not in labels:
                    raise ConfigError(
                        f"{key}.reference_settings[{i}]", v, f"not a value of the sweep: {labels}", source
                    )
        labels = [setting_label(v) for values in exp.sweep.values() for v in values]
        for label, keys in exp.setting_overrides.items():
            where = f"{key}.setting_overrides.{label}"
            if not exp.sweep:
                raise ConfigError(f"{key}.setting_overrides", dict(exp.setting_overrides), "needs a sweep", source)
            if label not in labels:
                raise ConfigError(where, keys, f"not a value of the sweep: {labels}", source)
            if not isinstance(keys, dict):
                raise ConfigError(where, keys, "give a mapping of dotted keys to values", source)
            for swept in exp.sweep:
                if swept in keys:
                    raise ConfigError(f"{where}.{swept}", keys[swept], "the sweep sets this key", source)
        if exp.reference_settings and not (exp.sweep and exp.reference):
            raise ConfigError(
                f"{key}.reference_settings", list(exp.reference_settings), "needs a sweep and reference: true", source
            )
        if exp.train_in == "main" and exp.train_overrides:
            raise ConfigError(
                f"{key}.train_overrides",
                dict(exp.train_overrides),
                "the main workflow's agents take no overrides",
                source,
            )
        if exp.train_in == "main" and exp.train_models:  # its distributions: `experiments.transfer_checkpoint`
            raise ConfigError(
                f"{key}.train_in",
                exp.train_in,
                "the main workflow's agents learnt on its own pool: drop train_models",
                source,
            )
        if not exp.reference and not (
            exp.train_in == "main" or exp.train_models or exp.train_distribution or exp.train_overrides
        ):
            raise ConfigError(
                f"{key}.reference", False, "without reference agents the experiment has no PAC-ML", source
            )


def setting_label(value: object) -> str:
    """The folder name of a sweep's setting: the value as YAML writes it, path-safe."""
    import re

    text = str(value).lower() if isinstance(value, bool) or value is None else str(value)
    return re.sub(r"[^A-Za-z0-9._+-]", "_", text)


def _check_teacher(values: tuple, keys: tuple[str, str, str], max_degree: int, source: str) -> None:
    """A teacher's base policy (best_fixed, tuned, planning or a base rule), H and K (>= 1 or null)."""
    base, *sizes = values
    if base not in ("best_fixed", "tuned", "planning"):
        _check_policy_name(base, max_degree, keys[0], source, ("para_max", "para_min", "sequential"))
    for key, value in zip(keys[1:], sizes):
        if value is not None and value < 1:
            raise ConfigError(key, value, "must be >= 1 (or null)", source)


def _check_policy_name(name: str, max_degree: int, key: str, source: str, known: tuple[str, ...] | None = None) -> None:
    """A policy name the registry knows (``fixed-K`` with 1 <= K <= max_degree)."""
    import re

    from pacml.policies.base import POLICY_NAMES

    known = POLICY_NAMES if known is None else known
    m = re.fullmatch(r"fixed-(\d+)", name)
    if m and 1 <= int(m.group(1)) <= max_degree:
        return
    if name in known:
        return
    raise ConfigError(
        key, name, f"unknown policy; known: {', '.join(known)}, fixed-K with 1 <= K <= {max_degree}", source
    )


def _check_names_and_bounds(cfg: Config, source: str) -> None:
    """Names that reach paths, tags and regexes; values whose memory grows without bound."""
    for name in cfg.distributions:
        check_name(name, f"distributions.{name}", source)
    for i, name in enumerate(cfg.graphs.models):
        check_name(name, f"graphs.models[{i}]", source)
    check_name(cfg.tracking.experiment, "tracking.experiment", source)
    db = PurePath(cfg.tracking.db)
    if not db.is_absolute() and ".." in db.parts:
        raise ConfigError(
            "tracking.db",
            cfg.tracking.db,
            "a relative store stays under the project (no '..'); give an absolute path",
            source,
        )
    uri = cfg.tracking.uri
    if uri is not None and not re.fullmatch(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"]+", uri):
        raise ConfigError(
            "tracking.uri", uri, "an MLflow tracking URI, scheme://..., e.g. http://127.0.0.1:5000", source
        )
    if cfg.figures.load_sweep_dist is not None and cfg.figures.load_sweep_dist not in cfg.distributions:
        raise ConfigError(
            "figures.load_sweep_dist",
            cfg.figures.load_sweep_dist,
            f"unknown distribution; defined: {sorted(cfg.distributions)}",
            source,
        )
    for i, load in enumerate(cfg.figures.load_sweep_offered_loads):
        if not 0 < load <= MAX_OFFERED_LOAD:
            raise ConfigError(
                f"figures.load_sweep_offered_loads[{i}]", load, f"need 0 < load <= {MAX_OFFERED_LOAD:g}", source
            )
    w = cfg.workload
    if w.offered_load is not None and not w.offered_load <= MAX_OFFERED_LOAD:
        raise ConfigError("workload.offered_load", w.offered_load, f"must be <= {MAX_OFFERED_LOAD:g}", source)
    if w.offered_load_range is not None:
        lo_hi = w.offered_load_range
        if not (len(lo_hi) == 2 and 0 < lo_hi[0] < lo_hi[1] <= MAX_OFFERED_LOAD):
            raise ConfigError(
                "workload.offered_load_range", list(lo_hi), f"need [low, high], 0 < low < high <= {MAX_OFFERED_LOAD:g}",
                source,
            )  # fmt: skip
        if cfg.trace.path is not None:
            raise ConfigError(
                "workload.offered_load_range", list(lo_hi), "a trace (trace.path) sets its own load: use offered_load",
                source,
            )  # fmt: skip
    if w.offered_load is None and w.interarrival_s > 0 and w.horizon_s / w.interarrival_s + 1 > MAX_ARRIVALS:
        raise ConfigError(
            "workload.horizon_s",
            w.horizon_s,
            f"horizon_s / interarrival_s ({w.interarrival_s:g}) gives over {MAX_ARRIVALS} arrivals an episode",
            source,
        )
    if w.replication_factor > MAX_REPLICATION_FACTOR:
        raise ConfigError(
            "workload.replication_factor", w.replication_factor, f"must be <= {MAX_REPLICATION_FACTOR}", source
        )
    for name, d in cfg.distributions.items():
        for key, value, limit in (
            ("decimals", d.decimals, MAX_DECIMALS),
            ("samples", d.samples, MAX_SAMPLES),
            ("bins", d.bins, MAX_BINS),
        ):
            if value > limit:
                raise ConfigError(f"distributions.{name}.{key}", value, f"must be <= {limit}", source)
    seeds = {
        "workflow.train_seeds": cfg.workflow.train_seeds,
        "workflow.test_seeds": cfg.workflow.test_seeds,
        "workflow.validation_seeds": cfg.workflow.validation_seeds,
        "ppo.validation_seed": (cfg.ppo.validation_seed,),
    }
    for key, values in seeds.items():
        for i, seed in enumerate(values):
            if not 0 <= seed < 2**63:
                raise ConfigError(key if key.startswith("ppo.") else f"{key}[{i}]", seed, "a seed must be >= 0", source)
    for key in ("train_seeds", "test_seeds", "validation_seeds", "distributions"):
        if not getattr(cfg.workflow, key):
            raise ConfigError(f"workflow.{key}", [], "must not be empty", source)
