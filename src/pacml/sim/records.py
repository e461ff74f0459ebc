"""Immutable records: what the engine hands out. Metrics are pure functions of these."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Outcome = Literal["completed", "blocked", "running", "undecided"]
BlockCause = Literal["rejected", "invalid", "placement", "jct", "horizon"]

BLOCK_CAUSES: tuple[str, ...] = ("rejected", "invalid", "placement", "jct", "horizon")
"""Why a job was blocked:

- ``rejected``: the policy chose degree 0 (do not place);
- ``invalid``: the policy chose a degree the action mask forbids;
- ``placement``: the first-fit placer found no room for the partitioned job;
- ``jct``: its simulated JCT exceeds beta x sequential JCT;
- ``horizon``: accepted but still running at the horizon (paper accounting, ddls B17).
"""


@dataclass(frozen=True)
class JobRecord:
    """One arrived job and what became of it (simulation-clock seconds, bytes)."""

    job_idx: int
    model: str
    arrival_s: float
    interarrival_s: float
    beta: float
    sequential_jct_s: float
    max_acceptable_jct_s: float
    job_bytes: float
    """Original job's total op memory + dependency size (the demand it brings)."""
    outcome: Outcome
    action: int = 0
    cause: BlockCause | None = None
    jct_s: float | None = None
    """Simulated JCT of an accepted job (= finish - arrival)."""
    finish_s: float | None = None
    num_workers: int = 0
    utilisation: float = 0.0
    """Fraction of the job's worker-time spent computing."""
    partitioned_bytes: float = 0.0
    """Partitioned job's total op memory + dependency size."""

    def but(self, **changes) -> JobRecord:
        """A copy with ``changes``: `dataclasses.replace` without its per-call checks of the
        field names (the engine's hot path; its callers name fields that exist)."""
        new = object.__new__(JobRecord)
        new.__dict__.update(self.__dict__)
        new.__dict__.update(changes)
        return new

    @property
    def accepted(self) -> bool:
        """Placed and within its JCT requirement at its arrival."""
        return self.jct_s is not None
