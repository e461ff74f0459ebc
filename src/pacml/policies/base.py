"""The policy protocol and the registry of user-facing policy names."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Protocol

import numpy as np

from pacml.errors import UnknownNameError

if TYPE_CHECKING:
    from pacml.sim.engine import Decision

BASELINE_NAMES = ("para_max", "para_min", "random", "sequential", "oracle")
"""Fixed-degree policies are named ``fixed-K``; a trained agent is ``pacml``."""


class Policy(Protocol):
    """Anything that picks a partition degree for an arriving job."""

    name: str

    def act(self, decision: Decision, rng: np.random.Generator) -> int:
        """The degree (0 = do not place) for ``decision``'s job."""
        ...


def make_policy(name: str, checkpoint: str | None = None, max_degree: int | None = None) -> Policy:
    """A policy by its user-facing name: para_max, para_min, random, sequential, oracle,
    fixed-K (e.g. fixed-4) or pacml (needs ``checkpoint``; imports torch and dgl)."""
    from pacml.policies import baselines

    simple = {
        "para_max": baselines.ParaMax,
        "para_min": baselines.ParaMin,
        "random": baselines.RandomDegree,
        "oracle": baselines.Oracle,
    }
    if name in simple:
        return simple[name]()
    if name == "sequential":
        return baselines.Fixed(1)
    m = re.fullmatch(r"fixed-(\d+)", name)
    if m:
        k = int(m.group(1))
        if k < 1 or (max_degree is not None and k > max_degree):
            raise UnknownNameError(f"policy {name!r}: degree {k} must be in 1..{max_degree or 'max_degree'}")
        return baselines.Fixed(k)
    if name == "pacml":
        if checkpoint is None:
            raise UnknownNameError("policy 'pacml' needs a checkpoint (--checkpoint FILE)")
        from pacml.agent.policy import load_agent_policy

        return load_agent_policy(checkpoint)
    raise UnknownNameError(
        f"unknown policy {name!r}; known: {', '.join(BASELINE_NAMES)}, fixed-K (e.g. fixed-4), pacml")
