"""The whole configuration tree (`Config`) and the workflow, tracking and figures sections."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pacml.config.experiments import ExperimentConfig
from pacml.config.learning import AgentConfig, ImitationConfig, PlanningConfig, PPOConfig
from pacml.config.simulation import (
    BetaDistribution,
    ClusterConfig,
    GraphsConfig,
    PartitionConfig,
    TraceConfig,
    WorkloadConfig,
    _paper_distributions,
)


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
    uri: str | None = None
    """Any MLflow tracking URI instead of ``db`` (e.g. ``http://127.0.0.1:5000``, an ``mlflow
    server``: what many nodes of a cluster should write to); None: the SQLite file ``db``."""

    @property
    def store(self) -> str:
        """What the workflow's jobs write to: the URI when one is set, else the SQLite path."""
        return self.uri or self.db


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
    trace: TraceConfig = field(default_factory=TraceConfig)
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
    experiments: dict[str, ExperimentConfig] = field(default_factory=dict)
    """Named generalisation experiments (`snakemake experiments`), by name."""
    extra: dict[str, Any] = field(default_factory=dict)
    """The ``scales`` section, kept verbatim (it is applied before validation)."""

    @property
    def load_sweep_dist(self) -> str:
        return self.figures.load_sweep_dist or self.workflow.distributions[0]

    @property
    def teacher_base(self) -> str:
        """The base policy the imitation teacher continues with: ``imitation.teacher_base_policy``,
        or ``planning.base_policy`` where that says ``planning``."""
        own = self.imitation.teacher_base_policy
        return self.planning.base_policy if own == "planning" else own


# Sections kept verbatim; registered here so unknown top-level keys still fail.
