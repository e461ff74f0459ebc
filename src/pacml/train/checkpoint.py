"""Atomic checkpoints of the agent, optimiser, RNG and training state.

A checkpoint holds tensors and plain data only, and is read with ``weights_only=True``: a file
that holds anything else (a crafted pickle, say) is refused before any of it runs, and a
truncated or foreign file is named in a `CheckpointError` instead of an unpickling traceback.
"""

from __future__ import annotations

import dataclasses
import pickle
from pathlib import Path

import torch

from pacml.config import Config, config_from_dict, config_hash, section_hash, training_keys
from pacml.errors import CheckpointError


def read_checkpoint(path: str | Path) -> dict:
    """The checkpoint's contents, read safely (see the module doc)."""
    path = Path(path)
    try:
        ckpt = torch.load(path, map_location="cpu", weights_only=True)
    except FileNotFoundError:
        raise CheckpointError(path, "no such checkpoint") from None
    except pickle.UnpicklingError as exc:
        reason = str(exc).strip().splitlines()[-1][:200] if str(exc).strip() else "not a checkpoint"
        raise CheckpointError(
            path, f"refused: not a pacml checkpoint of tensors and plain data, nothing in it was run ({reason})"
        ) from None
    except (RuntimeError, EOFError, OSError, ValueError) as exc:
        raise CheckpointError(
            path, f"cannot be read, truncated or not a torch file ({type(exc).__name__}); delete it or train again"
        ) from None
    if not isinstance(ckpt, dict) or not {"model", "config", "state"} <= set(ckpt):
        raise CheckpointError(path, "not a pacml checkpoint (no model, config and training state)")
    return ckpt


def run_hash(cfg: Config) -> str:
    """The hash of what training depends on (`training_keys`); a ``last.pt`` with another one
    is not resumed."""
    return section_hash(cfg, *training_keys(cfg))


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
    ckpt = read_checkpoint(path)
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
    data = dict(read_checkpoint(path)["config"])
    data.update(data.pop("extra", None) or {})
    return data


def checkpoint_config(path: str | Path) -> Config:
    """The validated config a checkpoint was trained with."""
    return config_from_dict(checkpoint_config_data(path), str(path))


def checkpoint_run_hash(path: str | Path) -> str | None:
    """The `run_hash` of the config a checkpoint was trained with (None for an old file)."""
    return read_checkpoint(path).get("run_hash")
