"""Stable hashes of a config or of named parts of it (what reruns and resumes key on)."""

from __future__ import annotations

import dataclasses

from pacml.config.tree import Config


def config_hash(cfg: Config) -> str:
    """A short stable hash of the validated config that makes a run's numbers (recorded with
    every run); where they are recorded (``tracking``), `NOT_RESULT_KEYS`, the experiments
    (each experiment's jobs run in a config of their own) and the ``scales`` section (``extra``:
    the chosen scale is already applied to the tree) do not count, so a job has one hash in
    every store, and editing another scale changes no run's hash."""
    import hashlib
    import json

    tree = _result_tree(cfg)
    tree.pop("tracking")
    tree.pop("experiments")
    tree.pop("extra")
    blob = json.dumps(tree, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


NOT_RESULT_KEYS = ("ppo.torch_threads",)
"""Keys that change how fast a run goes, never its numbers: left out of every run hash."""


INERT_KEYS = {
    ("agent.feature_scales", "pool"): ("agent.log10_seconds", "agent.log10_bytes", "agent.log10_counts"),
    ("cluster.placement", "ddls"): (),
    ("cluster.reconfiguration_s", 0.0): (),
    ("trace.path", None): ("trace",),
    ("workload.offered_load_range", None): (),
    ("agent.load_feature", False): (),
    ("planning.extra_bases", ()): (),
    ("agent.job_length_features", False): (),
    ("agent.feasible_mask", False): (),
    ("imitation.alternative_teachers", ()): ("imitation.alternative_margin",),
    ("agent.actor_ensemble", 1): (),
    ("imitation.loss", "cross_entropy"): (),
}
"""Keys added after results were published, left out of every hash while the first holds the
value that reproduces the earlier behaviour (then the others are read by nothing): finished
runs and their checkpoints stay current. Likewise a distribution's ``components`` while empty."""


def _result_tree(cfg: Config) -> dict:
    """The config as a nested dict without `NOT_RESULT_KEYS` and inert `INERT_KEYS`."""
    tree = dataclasses.asdict(cfg)
    drop = list(NOT_RESULT_KEYS)
    for (key, inert_value), readers in INERT_KEYS.items():
        if _get(tree, key) == inert_value:
            drop += [key, *readers]
    for dotted in drop:
        *path, last = dotted.split(".")
        node = tree
        for k in path:
            node = node[k]
        node.pop(last, None)
    for dist in tree["distributions"].values():  # added with mixtures; read only by them
        if not dist["components"]:
            dist.pop("components")
    return tree


_INERT = object()


def _get(tree: dict, dotted: str):
    for k in dotted.split("."):
        tree = tree[k]
    return tree


GRAPH_KEYS = ("graphs", "workload.num_training_steps")
"""What the graphs rule writes depends on: the models and the steps a job trains for."""
EPISODE_KEYS = ("graphs", "cluster", "partition", "workload", "trace", "distributions")
"""What every episode depends on: the job pool, the cluster, the partitioner, arrivals and β."""
SELECTION_KEYS = (*EPISODE_KEYS, "planning", "workflow.validation_seeds")
"""best_fixed's degree and the planners' base policy are chosen on the validation seeds."""
NEEDS_SELECTION = ("best_fixed", "rollout", "rollout_clairvoyant")
"""The policies whose evaluation reads the selection."""


def training_keys(cfg: Config) -> tuple[str, ...]:
    """What a training run depends on: its episodes, the agent and PPO, the imitation, and,
    when it imitates the planner (``imitation.iterations`` > 0), the planner and the
    validation seeds that chose the planner's base policy."""
    episodes = SELECTION_KEYS if cfg.imitation.iterations else EPISODE_KEYS
    return (*episodes, "agent", "ppo", "imitation")


def evaluation_keys(cfg: Config, policy: str) -> tuple[str, ...]:
    """What one policy's evaluation depends on: its test episodes and what made the policy
    (a baseline reads no agent or PPO key, so a PPO edit reruns only PAC-ML's evaluations)."""
    if policy == "pacml":
        made_by = training_keys(cfg)
    elif policy in NEEDS_SELECTION:
        made_by = SELECTION_KEYS
    else:
        made_by = EPISODE_KEYS
    return (*made_by, "workflow.test_seeds")


def config_digest(raw: dict) -> str:
    """A short hash of the config exactly as written (every key, threads and paths too): what a
    job that prints the whole config, such as the report, reruns on."""
    import hashlib
    import json

    return hashlib.sha256(json.dumps(raw, sort_keys=True, default=str).encode()).hexdigest()[:12]


def section_hash(cfg: Config, *keys: str, dists: tuple[str, ...] | None = None) -> str:
    """A short hash of the named (dotted) parts of the config, e.g. ``section_hash(cfg,
    "cluster", "workload.num_training_steps")``; `NOT_RESULT_KEYS` never count. With ``dists``,
    the ``distributions`` section holds only those (and their mixtures' components)."""
    import hashlib
    import json

    tree = _result_tree(cfg)
    if dists is not None:
        used = set(dists) | {c for d in dists for c in cfg.distributions[d].components}
        tree["distributions"] = {k: v for k, v in tree["distributions"].items() if k in used}
    parts = {}
    for key in keys:
        node = tree
        for k in key.split("."):
            node = node.get(k, _INERT) if isinstance(node, dict) else _INERT
        if node is not _INERT:  # a section left out while inert (`INERT_KEYS`) hashes as before it existed
            parts[key] = node
    blob = json.dumps(parts, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:12]
