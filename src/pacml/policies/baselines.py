"""Baseline partitioning policies (paper.md 6). Each picks among the mask's valid degrees."""

from __future__ import annotations

import math

import numpy as np

from pacml.sim.engine import Decision


def _valid(decision: Decision) -> np.ndarray:
    """Valid non-zero degrees, ascending."""
    return np.flatnonzero(decision.mask[1:]) + 1


class ParaMax:
    """Maximum parallelisation: the largest valid degree (0 if none)."""

    name = "para_max"

    def act(self, decision: Decision, rng: np.random.Generator) -> int:
        valid = _valid(decision)
        return int(valid[-1]) if len(valid) else 0


class ParaMin:
    """Partition just enough by the estimate k = ceil(JCT_seq / max acceptable JCT) =
    ceil(1/beta), ignoring communication: the first valid degree >= k, else the largest
    (ddls' AcceptableJCT)."""

    name = "para_min"

    def act(self, decision: Decision, rng: np.random.Generator) -> int:
        valid = _valid(decision)
        if not len(valid):
            return 0
        k = math.ceil(decision.sequential_jct_s / decision.max_acceptable_jct_s)
        at_least = valid[valid >= k]
        return int(at_least[0]) if len(at_least) else int(valid[-1])


class RandomDegree:
    """A uniformly random valid non-zero degree."""

    name = "random"

    def act(self, decision: Decision, rng: np.random.Generator) -> int:
        valid = _valid(decision)
        return int(rng.choice(valid)) if len(valid) else 0


class Fixed:
    """Always degree k, or block (0) when k is not valid now. ``sequential`` is k = 1."""

    def __init__(self, k: int, name: str | None = None):
        self.k = k
        self.name = name or ("sequential" if k == 1 else f"fixed-{k}")

    def act(self, decision: Decision, rng: np.random.Generator) -> int:
        return self.k if self.k < len(decision.mask) and decision.mask[self.k] else 0


class Oracle:
    """The smallest valid degree whose exact JCT on the current cluster meets the job's
    requirement (0 if none does): Para_min without the estimate."""

    name = "oracle"

    def act(self, decision: Decision, rng: np.random.Generator) -> int:
        for a in _valid(decision):
            if decision.meets_requirement(int(a)):
                return int(a)
        return 0
