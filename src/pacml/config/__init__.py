"""One tree of frozen, typed dataclasses: the whole experiment's configuration.

`load_config(path, overrides)` reads YAML, applies ``key.sub=value`` overrides and
validates everything once; errors name the dotted key, the value and the file.
Defaults are the paper's setting (``../shared/research/paper.md``, ``ddls.md``).
"""

from pacml.config.experiments import ExperimentConfig
from pacml.config.hashing import (
    EPISODE_KEYS,
    GRAPH_KEYS,
    NOT_RESULT_KEYS,
    SELECTION_KEYS,
    config_digest,
    config_hash,
    evaluation_keys,
    section_hash,
    training_keys,
)
from pacml.config.learning import AgentConfig, ImitationConfig, PlanningConfig, PPOConfig, TeacherConfig
from pacml.config.loading import (
    EXTRA_SECTIONS,
    RENAMED_KEYS,
    apply_scale,
    config_from_dict,
    leaf_keys,
    load_config,
    normalise_cli_values,
    resolve_scale,
)
from pacml.config.simulation import (
    PAPER_MODELS,
    BetaDistribution,
    ClusterConfig,
    GraphsConfig,
    PartitionConfig,
    TraceConfig,
    WorkloadConfig,
)
from pacml.config.tree import Config, FiguresConfig, TrackingConfig, WorkflowConfig

__all__ = [
    "EPISODE_KEYS",
    "ExperimentConfig",
    "EXTRA_SECTIONS",
    "GRAPH_KEYS",
    "NOT_RESULT_KEYS",
    "PAPER_MODELS",
    "RENAMED_KEYS",
    "SELECTION_KEYS",
    "AgentConfig",
    "BetaDistribution",
    "ClusterConfig",
    "Config",
    "FiguresConfig",
    "GraphsConfig",
    "ImitationConfig",
    "PPOConfig",
    "PartitionConfig",
    "PlanningConfig",
    "TeacherConfig",
    "TraceConfig",
    "TrackingConfig",
    "WorkflowConfig",
    "WorkloadConfig",
    "apply_scale",
    "config_from_dict",
    "leaf_keys",
    "resolve_scale",
    "config_hash",
    "evaluation_keys",
    "load_config",
    "normalise_cli_values",
    "section_hash",
    "config_digest",
    "training_keys",
]
