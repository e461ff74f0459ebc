"""One tree of frozen, typed dataclasses: the whole experiment's configuration.

`load_config(path, overrides)` reads YAML, applies ``key.sub=value`` overrides and
validates everything once; errors name the dotted key, the value and the file.
Defaults are the paper's setting (``../shared/research/paper.md``, ``ddls.md``).
"""

from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pacml.errors import ConfigError


@dataclass(frozen=True)
class ClusterConfig:
    """RAMP topology: C communication groups x R racks x S servers, one A100 per server."""

    communication_groups: int = 4
    """C; also the number of transceivers per node (ddls.md 3.1)."""
    racks_per_group: int = 4
    """R; RAMP needs R <= C."""
    servers_per_rack: int = 2
    """S."""
    node_bandwidth_bytes_per_s: float = 1.6e12
    """Total bandwidth of one node (12.8 Tbps); a channel gets 1/C of it."""
    propagation_latency_s: float = 50e-9
    """One-hop propagation latency."""
    io_latency_s: float = 100e-9
    """Worker I/O latency, paid twice per transfer."""
    worker_memory_bytes: float = 80e9
    """A100 80 GB."""
    max_degree: int = 16
    """Largest partition degree an action may ask for (ddls max_partitions_per_op)."""
    collective_bandwidth_per_channel_divided: bool = True
    """ddls bug B11: the all-reduce model divides the (already per-channel) bandwidth by C
    again. True reproduces the paper."""

    @property
    def num_workers(self) -> int:
        return self.communication_groups * self.racks_per_group * self.servers_per_rack

    @property
    def channel_bandwidth_bytes_per_s(self) -> float:
        return self.node_bandwidth_bytes_per_s / self.communication_groups


@dataclass(frozen=True)
class PartitionConfig:
    """How an action (max degree a) becomes per-op degrees (ddls.md 2.1)."""

    min_op_time_s: float = 1e-5
    """The SiP-ML quantum q on the *physical* forward time of an op: an op of time t is split
    into min(a, smallest even number >= t/q) pieces. ddls' 0.01 was in PipeDream ms,
    i.e. 1e-5 s."""
    paper_edge_sizes: bool = True
    """Reproduce ddls B7/B8: partitioned dependency sizes derive from op memory
    (activation + parameters) rather than the source's activation."""
    round_to_placeable: bool = True
    """Fix ddls B10: an op whose degree has no block shape (10, 12 or 14 on 32 workers, for
    ops of 0.08-0.14 ms at a = 16) is split by the largest placeable degree below it
    instead of making the whole job unplaceable. The paper's PipeDream graphs have no such
    op, so both settings give the paper's numbers; the built-in graphs have some."""


@dataclass(frozen=True)
class BetaDistribution:
    """A JCT-requirement distribution: beta = max acceptable JCT / sequential JCT."""

    kind: Literal["uniform", "skewnorm"] = "uniform"
    """uniform over a grid, or ddls' skew-normal recipe."""
    min: float = 0.1
    """Smallest beta (0 < min <= max)."""
    max: float = 1.0
    """Largest beta (<= 1)."""
    decimals: int = 2
    """Betas are rounded to this many decimals (the uniform grid's step is 10^-decimals)."""
    skewness: float = 0.0
    """Only for kind=skewnorm: scipy's shape parameter a (+5 skews mass to small beta)."""
    samples: int = 50000
    """Only for kind=skewnorm: samples drawn to build the PMF (ddls' recipe)."""
    bins: int = 1000
    """Only for kind=skewnorm: histogram bins of the PMF."""
    label: str = ""
    """Label used in figures (e.g. the paper's beta_A)."""


def _paper_distributions() -> dict[str, BetaDistribution]:
    return {
        "beta_a": BetaDistribution("uniform", label="β_A (uniform)"),
        "beta_b": BetaDistribution("skewnorm", skewness=5.0, label="β_B (skew +5)"),
        "beta_c": BetaDistribution("skewnorm", skewness=0.0, label="β_C (skew 0)"),
        "beta_d": BetaDistribution("skewnorm", skewness=-5.0, label="β_D (skew -5)"),
    }


@dataclass(frozen=True)
class WorkloadConfig:
    """Job arrivals, the job pool and the simulation clock."""

    num_training_steps: int = 50
    """Training steps per job; the JCT is one simulated step times this."""
    compute_time_scale: float = 1000.0
    """Multiplies every op's physical compute time on the simulation clock. 1000 is the
    paper's setting (ddls bug B1: PipeDream ms on the same clock as communication in s, so
    the network is 1000x cheaper than physical); 1 is physical."""
    interarrival: Literal["fixed", "exponential"] = "fixed"
    """Interarrival time distribution; the paper uses fixed."""
    interarrival_s: float = 1000.0
    """Mean interarrival time on the simulation clock (ignored when offered_load is set)."""
    offered_load: float | None = None
    """If set, interarrival_s = mean sequential JCT of the pool / (offered_load x workers).
    The paper's 1000 s with PipeDream's graphs is an offered load of about 0.94."""
    horizon_s: float = 1e6
    """Simulated time of one episode; arrivals at 0, 1000, ..., 1e6 give 1001 jobs."""
    replication_factor: int = 1000
    """Copies of each graph in the pool, drawn without replacement and refilled."""
    horizon_accounting: Literal["paper", "fixed"] = "paper"
    """paper: jobs still running at the horizon count as blocked and the arrival at the
    horizon counts as arrived but undecided (ddls B17). fixed: neither is counted."""


@dataclass(frozen=True)
class AgentConfig:
    """The PAC-ML graph network (paper.md 5; defaults are the paper's tuned sizes)."""

    message_dim: int = 32
    """out_features_msg: size of a message (half from the sender, half from the edge)."""
    hidden_dim: int = 64
    """out_features_hidden: node embedding after message-passing round 1."""
    node_dim: int = 16
    """out_features_node: node embedding after the last round."""
    graph_dim: int = 8
    """out_features_graph: embedding of the global (job, cluster, mask) features."""
    num_rounds: int = 2
    """Message-passing rounds (>= 2)."""
    activation: Literal["relu", "tanh", "elu", "leaky_relu"] = "relu"
    """aggregator_activation and the head's activation."""
    head_hiddens: tuple[int, ...] = (64, 64)
    """Hidden layers of the logit and value heads. The paper's PPO used one layer of 17;
    two of 64 train faster here (documented deviation)."""
    edge_layernorm: bool = True
    """LayerNorm over the 2 edge features, as ddls (B24: it washes most edge information
    out)."""
    separate_critic: bool = True
    """The critic has its own graph network (RLlib vf_share_layers=False)."""
    init_degree_biases: tuple[float, ...] = (0.0,)
    """Starts of training: with bias b, degree a's initial logit is b x a / max_degree (0: no
    preference; positive: near maximum parallelisation, the canonical default). Several values
    train one agent from each and keep the best by validation (the test seeds never choose):
    the PPO-only policies have more than one local optimum here (docs/agent.md), e.g. [0.0, 3.0]."""
    lookahead_features: bool = False
    """Extension beyond the paper: also show, per degree, whether the first-fit placer can
    place the job now and whether its exact JCT then meets the requirement (the paper's
    agent sees only the optimistic mask, ddls B9). false reproduces the paper's inputs."""
    shape_features: bool = False
    """Extension: also show what a planner reads off the cluster (per-degree JCT over the
    requirement, free fraction per communication group and rack, workers freed soon by
    pending departures, episode time left; `pacml.env.features`). false: the paper's inputs."""


@dataclass(frozen=True)
class PPOConfig:
    """Masked PPO, CleanRL-style (paper.md 5 gives the tuned RLlib values)."""

    total_timesteps: int = 400_000
    """Environment decisions over the whole training run (after imitation: of fine-tuning;
    0 keeps the imitated agent)."""
    num_envs: int = 8
    """Synchronous environments, each its own seeded episode stream."""
    num_steps: int = 250
    """Decisions per environment per rollout (250 divides the 1000-decision episode, so
    checkpoints fall on episode boundaries and resume exactly)."""
    learning_rate: float = 2.785e-4
    """Adam step size (paper's tuned PPO value)."""
    anneal_lr: bool = True
    """Linearly anneal the learning rate to 0 over training."""
    gamma: float = 0.997
    """Discount (paper's tuned value)."""
    gae_lambda: float = 0.95
    """GAE lambda (RLlib's default 1.0 in the paper; 0.95 is CleanRL's and trains steadier)."""
    num_minibatches: int = 8
    """Minibatches per epoch."""
    update_epochs: int = 4
    """Epochs over each rollout (the paper's RLlib used 50 SGD iterations)."""
    norm_adv: bool = True
    """Normalise advantages per minibatch."""
    clip_coef: float = 0.18
    """Policy ratio clip (paper's clip_param)."""
    clip_vloss: bool = True
    """Clip the value update around the old values."""
    vf_clip_coef: float = 10.0
    """Value clip range (the paper's vf_clip_param 128.8 is in return units; returns here
    are scaled by reward_scale)."""
    ent_coef: float = 0.003
    """Entropy bonus (paper's tuned value)."""
    vf_coef: float = 0.5
    """Value loss weight (paper's value)."""
    max_grad_norm: float = 1.5
    """Global gradient-norm clip (paper's grad_clip)."""
    target_kl: float | None = None
    """Stop an update's epochs early when the approximate KL exceeds this (None: never)."""
    reward_scale: float = 0.1
    """Rewards (+1 accepted, -1 blocked) are multiplied by this before learning."""
    validation_interval: int = 10
    """Run one greedy validation episode every this many updates (and after the last)."""
    validation_seed: int = 1799
    """Episode seed of validation (the paper's test_seed); never a training or test seed.
    After imitation, validation is the mean over workflow.validation_seeds instead."""
    torch_threads: int = 1
    """torch.set_num_threads for training."""


@dataclass(frozen=True)
class PlanningConfig:
    """Look-ahead policies over a forked simulator (``rollout``, ``rollout_clairvoyant``) and
    the planner that teaches the agent (``agent.imitation``)."""

    horizon: int = 150
    """H: later arrivals simulated after each candidate degree."""
    num_futures: int = 8
    """K: futures sampled from the workload per decision (common to every candidate degree);
    ``rollout_clairvoyant`` uses the one true future instead."""
    base_policy: str = "best_fixed"
    """Policy of the later arrivals in a continuation: para_max, para_min, sequential, fixed-K,
    best_fixed (the distribution's best fixed degree, chosen on workflow.validation_seeds), or
    tuned (of best_fixed's three best degrees, the one whose rollout blocks fewest jobs on
    workflow.validation_seeds)."""
    tie_break: Literal["smaller", "base"] = "base"
    """Among degrees with equally few blocked jobs: the smaller degree, or the base policy's
    degree when it is among them (the rollout-improvement guarantee needs ``base``)."""


@dataclass(frozen=True)
class ImitationConfig:
    """DAgger from the ``rollout`` planner before PPO (`pacml.train.imitation`)."""

    iterations: int = 0
    """DAgger iterations before PPO; 0 trains with PPO alone (the paper's method)."""
    episodes_per_iteration: int = 2
    """Training episodes played and labelled by the teacher per iteration."""
    teacher_share_decay: float = 0.5
    """The teacher plays the first iteration; its share of the degrees played is then
    multiplied by this each iteration (the student plays the rest)."""
    epochs: int = 4
    """Passes over the aggregated labels per iteration."""
    minibatch_size: int = 256
    """Labels per gradient step."""
    learning_rate: float = 1e-3
    """Adam step size of the imitation phase (the actor only)."""
    temperature: float = 0.0
    """The student's target over the valid degrees is softmax(-score / temperature), a score
    being the teacher's mean blocked jobs over its futures: degrees near-tied to the best keep
    most of its weight, so the student is taught the teacher's clear preferences and pays
    little for confusing near-equal degrees. 0: uniform over the exactly tied best degrees."""
    teacher_base_policy: str = "best_fixed"
    """The teacher's base policy: as planning.base_policy (best_fixed, tuned, fixed-K, ...), or
    planning (whatever the evaluated rollout uses). best_fixed by default: a student imitates a
    planner that continues with the best constant degree more faithfully (docs/agent.md)."""
    teacher_horizon: int | None = None
    """The teacher's H (None: planning.horizon)."""
    teacher_futures: int | None = None
    """The teacher's K (None: planning.num_futures)."""


PAPER_MODELS = ("alexnet", "gnmt", "resnet18", "squeezenet1_0", "vgg16")


@dataclass(frozen=True)
class GraphsConfig:
    """Which job graphs make up the pool."""

    source: Literal["builtin", "pipedream"] = "builtin"
    """builtin: pacml's own deterministic profiles of the models; pipedream: read
    PipeDream graph.txt profiles from pipedream_dir (the paper's exact graphs)."""
    pipedream_dir: str = "../shared/pipedream_profiles"
    """Directory of PipeDream profiles (*.txt or */graph.txt), for source=pipedream."""
    models: tuple[str, ...] = PAPER_MODELS
    """Models in the pool; an empty list takes every graph file in the directory."""


@dataclass(frozen=True)
class WorkflowConfig:
    """What the Snakemake workflow runs (the workflow reads these; pacml validates them)."""

    scale: str = "default"
    """Scale of the run: smoke, default or paper (the overrides under ``scales:``)."""
    distributions: tuple[str, ...] = ("beta_a", "beta_b", "beta_c", "beta_d")
    """JCT-requirement distributions to run (names under ``distributions:``)."""
    train_seeds: tuple[int, ...] = (0, 1, 2)
    """One agent per (distribution, training seed); also the replicates of every baseline."""
    test_seeds: tuple[int, ...] = (100, 101, 102)
    """Evaluation episodes; never used for training, validation or selection."""
    baselines: tuple[str, ...] = ("para_max", "para_min", "random", "sequential", "oracle", "best_fixed")
    """Policies compared with PAC-ML (fixed-K too; rollout and rollout_clairvoyant plan)."""
    validation_seeds: tuple[int, ...] = (1799, 1800, 1801)
    """Episodes that choose among candidates (best_fixed's degree); never test seeds."""


@dataclass(frozen=True)
class TrackingConfig:
    """Where the workflow's MLflow runs go."""

    experiment: str = "pacml"
    """MLflow experiment name."""
    db: str = "results/mlflow/mlflow.db"
    """SQLite store; open with ``mlflow ui --backend-store-uri sqlite:///results/mlflow/mlflow.db``."""


@dataclass(frozen=True)
class FiguresConfig:
    """What the figures that are not per distribution show."""

    load_sweep_dist: str | None = None
    """Distribution of the performance-vs-load figure (default: the first of workflow.distributions)."""
    load_sweep_offered_loads: tuple[float, ...] = (0.25, 0.5, 0.75, 0.94, 1.25, 1.5, 2.0)
    """Offered loads of the load sweep."""
    load_sweep_policies: tuple[str, ...] = ("para_max", "para_min", "oracle", "pacml")
    """Policies of the load sweep (pacml: the agent trained at the configured load)."""


@dataclass(frozen=True)
class Config:
    """The whole experiment."""

    cluster: ClusterConfig = field(default_factory=ClusterConfig)
    """The RAMP cluster."""
    partition: PartitionConfig = field(default_factory=PartitionConfig)
    """How a degree splits a job's ops."""
    workload: WorkloadConfig = field(default_factory=WorkloadConfig)
    """Arrivals, the job pool and the simulation clock."""
    distributions: dict[str, BetaDistribution] = field(default_factory=_paper_distributions)
    """JCT-requirement distributions by name; the paper's beta_a..beta_d are built in."""
    graphs: GraphsConfig = field(default_factory=GraphsConfig)
    """Which job graphs make up the pool."""
    agent: AgentConfig = field(default_factory=AgentConfig)
    """The PAC-ML network and its inputs."""
    ppo: PPOConfig = field(default_factory=PPOConfig)
    """Masked PPO."""
    workflow: WorkflowConfig = field(default_factory=WorkflowConfig)
    """What the Snakemake workflow runs."""
    planning: PlanningConfig = field(default_factory=PlanningConfig)
    """Look-ahead policies over a copy of the simulator."""
    imitation: ImitationConfig = field(default_factory=ImitationConfig)
    """Learning from the planner before PPO."""
    tracking: TrackingConfig = field(default_factory=TrackingConfig)
    """MLflow."""
    figures: FiguresConfig = field(default_factory=FiguresConfig)
    """Figures that are not per distribution."""
    extra: dict[str, Any] = field(default_factory=dict)
    """The ``scales`` section, kept verbatim (it is applied before validation)."""

    @property
    def load_sweep_dist(self) -> str:
        return self.figures.load_sweep_dist or self.workflow.distributions[0]


# Sections kept verbatim; registered here so unknown top-level keys still fail.
EXTRA_SECTIONS = ("scales",)

RENAMED_KEYS = {
    "profiles": "scales",
    "workflow.profile": "workflow.scale",
    "agent.init_degree_bias": "agent.init_degree_biases (a list, e.g. [3.0])",
}
"""Old keys and their new names: an old key is refused with a message naming the new one."""


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


def _type_name(tp: Any) -> str:
    return getattr(tp, "__name__", str(tp))


def _coerce(tp: Any, value: Any, key: str, source: str) -> Any:
    """Check ``value`` against the annotation ``tp``; return it in the annotated type."""
    origin = typing.get_origin(tp)
    if dataclasses.is_dataclass(tp):
        return _build(tp, value, key, source)
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(tp)
        if value is None and type(None) in args:
            return None
        for arg in args:
            if arg is type(None):
                continue
            try:
                return _coerce(arg, value, key, source)
            except ConfigError:
                continue
        raise ConfigError(key, value, f"expected {' or '.join(_type_name(a) for a in args)}", source)
    if origin is Literal:
        allowed = typing.get_args(tp)
        if value not in allowed:
            raise ConfigError(key, value, f"must be one of {list(allowed)}", source)
        return value
    if origin is tuple:
        (elem, _ellipsis) = typing.get_args(tp)
        if not isinstance(value, (list, tuple)):
            raise ConfigError(key, value, "expected a list", source)
        return tuple(_coerce(elem, v, f"{key}[{i}]", source) for i, v in enumerate(value))
    if origin is dict:
        _k, vt = typing.get_args(tp)
        if not isinstance(value, dict):
            raise ConfigError(key, value, "expected a mapping", source)
        return {str(k): _coerce(vt, v, f"{key}.{k}", source) for k, v in value.items()}
    if tp is Any:
        return value
    if tp is bool:
        if not isinstance(value, bool):
            raise ConfigError(key, value, "expected true or false", source)
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(key, value, "expected an integer", source)
        return value
    if tp is float:
        if isinstance(value, str):
            # PyYAML reads 1e6 (no dot) as a string: accept plain numeric text
            try:
                value = float(value)
            except ValueError:
                pass
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(key, value, "expected a number", source)
        return float(value)
    if tp is str:
        if not isinstance(value, str):
            raise ConfigError(key, value, "expected a string", source)
        return value
    raise TypeError(f"unsupported config annotation {tp!r} at {key}")  # a programming error


def _build(cls: type, data: Any, prefix: str, source: str) -> Any:
    if isinstance(data, cls):
        return data
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(prefix or "<root>", data, "expected a mapping", source)
    hints = typing.get_type_hints(cls)
    names = {f.name for f in dataclasses.fields(cls)}
    kwargs = {}
    for k, v in data.items():
        key = f"{prefix}.{k}" if prefix else str(k)
        if k not in names:
            import difflib

            close = difflib.get_close_matches(str(k), sorted(names), n=1)
            hint = f"did you mean '{close[0]}'? " if close else ""
            raise ConfigError(key, v, f"unknown key; {hint}known keys here: {sorted(names)}", source)
        kwargs[k] = _coerce(hints[k], v, key, source)
    return cls(**kwargs)


def _parse_override(text: str) -> tuple[list[str], Any]:
    import yaml

    if "=" not in text:
        raise ConfigError(text, None, "an override must look like key.sub=value", "--set")
    key, raw = text.split("=", 1)
    return key.strip().split("."), yaml.safe_load(raw)


def normalise_cli_values(data: Any) -> Any:
    """Snakemake's ``--config key='{a: 1}'`` leaves nested values as text ('1'): turn text
    that YAML reads as a number, boolean or null back into that value, recursively."""
    import yaml

    if isinstance(data, dict):
        return {k: normalise_cli_values(v) for k, v in data.items()}
    if isinstance(data, list):
        return [normalise_cli_values(v) for v in data]
    if isinstance(data, str):
        try:
            value = yaml.safe_load(data)
        except yaml.YAMLError:
            return data
        if value is None or isinstance(value, (bool, int, float)):
            return value
        if isinstance(value, str):
            try:
                return float(value) if value.strip().lower() not in ("nan", "inf", "-inf") else value
            except ValueError:
                return value
    return data


def _refuse_renamed(data: dict[str, Any], source: str) -> None:
    for old, new in RENAMED_KEYS.items():
        node: Any = data
        *path, last = old.split(".")
        for k in path:
            node = node.get(k) if isinstance(node, dict) else None
        if isinstance(node, dict) and last in node:
            raise ConfigError(old, node[last], f"renamed: use {new}", source)


def apply_scale(data: dict[str, Any], source: str = "<dict>") -> dict[str, Any]:
    """Apply the scale named by ``workflow.scale``: its dotted keys under ``scales.<name>``
    override the tree (``default`` needs no entry)."""
    import copy

    data = copy.deepcopy(data or {})
    _refuse_renamed(data, source)
    name = (data.get("workflow") or {}).get("scale", "default")
    scales = data.get("scales") or {}
    if name not in scales:
        if name != "default":
            raise ConfigError("workflow.scale", name, f"no such scale; defined: {sorted(scales) + ['default']}", source)
        return data
    for dotted, value in (scales[name] or {}).items():
        keys = str(dotted).split(".")
        node = data
        for k in keys[:-1]:
            node = node.setdefault(k, {})
            if not isinstance(node, dict):
                raise ConfigError(f"scales.{name}.{dotted}", value, f"'{k}' is not a section", source)
        node[keys[-1]] = value
    return data


def config_from_dict(data: dict[str, Any], source: str = "<dict>") -> Config:
    """Validate a plain mapping (e.g. Snakemake's ``config``) into a `Config`, after applying
    its scale."""
    data = apply_scale(data, source)
    extra = {k: data.pop(k) for k in list(data) if k in EXTRA_SECTIONS}
    if "distributions" in data and isinstance(data["distributions"], dict):
        # user distributions extend (and may replace) the paper's four
        merged: dict[str, Any] = {k: dataclasses.asdict(v) for k, v in _paper_distributions().items()}
        for k, v in data["distributions"].items():
            merged[k] = {**merged.get(k, {}), **(v or {})} if isinstance(v, dict) else v
        data["distributions"] = merged
    cfg = _build(Config, data, "", source)
    cfg = dataclasses.replace(cfg, extra=extra)
    _check_ranges(cfg, source)
    return cfg


def load_config(
    path: str | Path | None = None,
    overrides: list[str] | tuple[str, ...] = (),
    base: dict[str, Any] | None = None,
    base_source: str = "<defaults>",
) -> Config:
    """Read a YAML config (or start from the mapping ``base``, or the defaults), apply
    ``key.sub=value`` overrides, validate once."""
    import copy

    import yaml

    source = str(path) if path is not None else base_source
    data: dict[str, Any] = copy.deepcopy(base) if base is not None else {}
    if path is not None:
        try:
            text = Path(path).read_text()
        except OSError as exc:
            raise ConfigError("<file>", str(path), f"cannot read: {exc.strerror}", source) from exc
        try:
            data = yaml.safe_load(text) or {}
        except yaml.YAMLError as exc:
            raise ConfigError("<file>", str(path), f"not valid YAML: {exc}", source) from exc
        if not isinstance(data, dict):
            raise ConfigError("<root>", data, "expected a mapping at the top level", source)
    for text in overrides:
        keys, value = _parse_override(text)
        node = data
        for k in keys[:-1]:
            node = node.setdefault(k, {})
            if not isinstance(node, dict):
                raise ConfigError(".".join(keys), value, f"'{k}' is not a section", source)
        node[keys[-1]] = value
    if overrides:
        source = f"{source} (with --set {' '.join(overrides)})"
    return config_from_dict(data, source)


def config_hash(cfg: Config) -> str:
    """A short stable hash of the validated config (recorded with every run)."""
    import hashlib
    import json

    blob = json.dumps(dataclasses.asdict(cfg), sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


NOT_RESULT_KEYS = ("ppo.torch_threads",)
"""Keys that change how fast a run goes, never its numbers: left out of every run hash."""


def section_hash(cfg: Config, *keys: str) -> str:
    """A short hash of the named (dotted) parts of the config, e.g. ``section_hash(cfg,
    "cluster", "workload.num_training_steps")``; `NOT_RESULT_KEYS` never count."""
    import hashlib
    import json

    tree = dataclasses.asdict(cfg)
    for dotted in NOT_RESULT_KEYS:
        *path, last = dotted.split(".")
        node = tree
        for k in path:
            node = node[k]
        node.pop(last, None)
    parts = {}
    for key in keys:
        node = tree
        for k in key.split("."):
            node = node[k]
        parts[key] = node
    blob = json.dumps(parts, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:12]
