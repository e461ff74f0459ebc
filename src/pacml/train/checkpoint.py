"""Atomic checkpoints of the agent, optimiser, RNG and training state."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import torch

from pacml.config import Config, config_from_dict, config_hash, section_hash

RUN_SECTIONS = ("graphs", "cluster", "partition", "workload", "distributions", "agent", "ppo")
"""The config sections a training run depends on (the workflow section does not count)."""


def run_hash(cfg: Config) -> str:
    return section_hash(cfg, *RUN_SECTIONS)


def save_checkpoint(path: str | Path, net, opt, gen: torch.Generator, cfg: Config, state: dict) -> None:
    """Write atomically: a run killed mid-write leaves the previous checkpoint intact."""
    path = Path(path)
    tmp = path.with_suffix(path.suffix + ".tmp")
    torch.save(
        {
            "model": net.state_dict(),
            "optimizer": opt.state_dict(),
            "generator": gen.get_state(),
            "torch_rng": torch.get_rng_state(),
            "config": dataclasses.asdict(cfg),
            "config_hash": config_hash(cfg),
            "run_hash": run_hash(cfg),
            "state": state,
        },
        tmp,
    )
    tmp.replace(path)


def load_checkpoint(path: str | Path, net, opt=None, gen: torch.Generator | None = None) -> dict | None:
    """Restore into ``net`` (and ``opt``, ``gen``); return the training state, or None if absent."""
    path = Path(path)
    if not path.exists():
        return None
    ckpt = torch.load(path, map_location="cpu", weights_only=False)
    net.load_state_dict(ckpt["model"])
    if opt is not None:
        opt.load_state_dict(ckpt["optimizer"])
    if gen is not None:
        gen.set_state(ckpt["generator"])
        torch.set_rng_state(ckpt["torch_rng"])
    return ckpt["state"]


def checkpoint_config_data(path: str | Path) -> dict:
    """The config a checkpoint was trained with, as a plain mapping (extra sections inlined;
    re-applying its scale changes nothing)."""
    ckpt = torch.load(path, map_location="cpu", weights_only=False)
    data = dict(ckpt["config"])
    data.update(data.pop("extra", None) or {})
    return data


def checkpoint_config(path: str | Path) -> Config:
    """The validated config a checkpoint was trained with."""
    return config_from_dict(checkpoint_config_data(path), str(path))


def checkpoint_run_hash(path: str | Path) -> str | None:
    """The `run_hash` of the config a checkpoint was trained with (None for an old file)."""
    return torch.load(path, map_location="cpu", weights_only=False).get("run_hash")
