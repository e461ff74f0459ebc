"""Stable hashes of a config or of named parts of it (what reruns and resumes key on)."""

from __future__ import annotations

import dataclasses

from pacml.config.tree import Config


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
