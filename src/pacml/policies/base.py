"""The policy protocol and the registry of user-facing policy names."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import numpy as np

from pacml.errors import UnknownNameError

if TYPE_CHECKING:
    from pacml.sim.engine import ClusterModel, Decision

BASELINE_NAMES = ("para_max", "para_min", "random", "sequential", "oracle", "best_fixed")
"""Fixed-degree policies are named ``fixed-K``; a trained agent is ``pacml``."""
PLANNER_NAMES = ("rollout", "rollout_clairvoyant")
"""Look-ahead policies over a forked simulator (`pacml.policies.planning`)."""
POLICY_NAMES = (*BASELINE_NAMES, *PLANNER_NAMES, "pacml")
CLAIRVOYANT = frozenset({"rollout_clairvoyant"})
"""Policies that read the episode's true future: upper bounds, never deployable."""
SEEDLESS = frozenset({"para_max", "para_min", "sequential", "oracle", "best_fixed"})
"""Baselines (and every ``fixed-K``) that never draw from the policy's generator: their
replicates are the same episodes to the last digit, so one run serves them all."""


def is_seedless(name: str) -> bool:
    """Whether ``name``'s decisions ignore the policy generator (`SEEDLESS` or ``fixed-K``)."""
    return name in SEEDLESS or re.fullmatch(r"fixed-\d+", name) is not None


class Policy(Protocol):
    """Anything that picks a partition degree for an arriving job."""

    name: str

    def act(self, decision: Decision, rng: np.random.Generator) -> int:
        """The degree (0 = do not place) for ``decision``'s job."""
        ...


@dataclass(frozen=True)
class Selection:
    """Choices made on the validation seeds (never the test seeds) for one distribution."""

    fixed_degree: int
    """best_fixed's degree."""
    rollout_base: str | None
    """The planners' base policy (a `pacml.sim.lookahead.base_rule` name, e.g. fixed-4); None
    where the selection left a ``tuned`` base undecided, as nothing there plans with it."""


@dataclass(frozen=True)
class PolicyContext:
    """What the policies that choose or plan with the simulator are built from: the
    experiment, the distribution, and (if already made) the validation-seed `Selection`."""

    model: ClusterModel
    dist: str
    selection: Selection | None = None

    def chosen(self) -> Selection:
        """The selection: given, or made now on ``workflow.validation_seeds``."""
        if self.selection is not None:
            return self.selection
        from pacml.policies.planning import select

        return select(self.model, self.dist, self.model.cfg.workflow.validation_seeds)[0]


def make_policy(
    name: str, checkpoint: str | None = None, max_degree: int | None = None, context: PolicyContext | None = None
) -> Policy:
    """A policy by its user-facing name: para_max, para_min, random, sequential, oracle,
    fixed-K (e.g. fixed-4), pacml (needs ``checkpoint``; imports torch and dgl), and, with a
    ``context``, best_fixed, rollout and rollout_clairvoyant."""
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
    if name in ("best_fixed", *PLANNER_NAMES):
        if context is None:
            raise UnknownNameError(f"policy {name!r} needs the experiment (a PolicyContext)")
        chosen = context.chosen()
        if name == "best_fixed":
            return baselines.Fixed(chosen.fixed_degree, name="best_fixed")
        from pacml.policies.planning import Rollout

        cfg = context.model.cfg.planning
        if chosen.rollout_base is None:
            raise UnknownNameError(
                f"policy {name!r}: its selection left the planners' tuned base undecided "
                "(select with tune_base=True: an experiment tunes it where a planner is among its baselines)"
            )
        return Rollout(context.model, context.dist, cfg, chosen.rollout_base, clairvoyant=name == "rollout_clairvoyant")
    if name == "pacml":
        if checkpoint is None:
            raise UnknownNameError("policy 'pacml' needs a checkpoint (--checkpoint FILE)")
        from pacml.agent.policy import AgentPolicy

        return AgentPolicy(checkpoint)
    raise UnknownNameError(f"unknown policy {name!r}; known: {', '.join(POLICY_NAMES)}, fixed-K (e.g. fixed-4)")
