"""Range and name checks of a built `Config`: every error names the dotted key."""

from __future__ import annotations

from pacml.config.tree import Config
from pacml.errors import ConfigError


def _check_ranges(cfg: Config, source: str) -> None:
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
    for key in ("propagation_latency_s", "io_latency_s"):
        if getattr(c, key) < 0:
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
        if d.samples < 1 or d.bins < 1:
            raise ConfigError(f"{key}.samples", (d.samples, d.bins), "samples and bins must be >= 1", source)
    a = cfg.agent
    for key in ("message_dim", "hidden_dim", "node_dim", "graph_dim"):
        if getattr(a, key) < 1:
            raise ConfigError(f"agent.{key}", getattr(a, key), "must be >= 1", source)
    if a.message_dim % 2:
        raise ConfigError("agent.message_dim", a.message_dim, "must be even (half node, half edge)", source)
    if a.num_rounds < 2:
        raise ConfigError("agent.num_rounds", a.num_rounds, "must be >= 2", source)
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
    if cfg.imitation.teacher_base_policy not in ("best_fixed", "tuned", "planning"):
        _check_policy_name(
            cfg.imitation.teacher_base_policy,
            cfg.cluster.max_degree,
            "imitation.teacher_base_policy",
            source,
            ("para_max", "para_min", "sequential"),
        )
    if cfg.planning.base_policy not in ("best_fixed", "tuned"):
        _check_policy_name(
            cfg.planning.base_policy,
            cfg.cluster.max_degree,
            "planning.base_policy",
            source,
            ("para_max", "para_min", "sequential"),
        )
    im = cfg.imitation
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
