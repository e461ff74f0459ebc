"""Arrivals replayed from a cluster trace (config section ``trace``), rescaled to an offered load.

Pure: a `Trace` is two arrays already read and checked (`pacml.trace_csv` reads files). An
episode starts at a random row of the configured range and takes the consecutive jobs
submitted within the horizon. One time factor over the whole range maps the trace's mean gap
to the interarrival the offered load asks for, so bursts and lulls keep their shape. A job's
training steps follow its duration: round(N x duration / reference), clipped.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pacml.config import TraceConfig, WorkloadConfig
from pacml.errors import ConfigError
from pacml.sim.workload import Arrivals, BetaPMF, draw_jobs


@dataclass(frozen=True, eq=False)
class Trace:
    """Jobs of a trace in submit order: submit times and run times, both in seconds."""

    submit_s: np.ndarray
    duration_s: np.ndarray
    source: str = "<trace>"
    """The file it came from (for errors)."""


@dataclass(frozen=True, eq=False)
class TraceWorkload:
    """The configured range of a trace, ready to cut episodes from."""

    offset_s: np.ndarray
    """Submit times of the range's jobs, from its first job, before rescaling."""
    steps: np.ndarray
    """Training steps of each of the range's jobs."""
    time_factor: float
    """Simulation seconds per trace second."""

    @property
    def mean_steps(self) -> float:
        return float(self.steps.mean())


def job_steps(duration_s: np.ndarray, cfg: TraceConfig, num_training_steps: int, reference_s: float) -> np.ndarray:
    """round(N x duration / reference), clipped to [min_steps, max_steps]."""
    raw = np.rint(num_training_steps * duration_s / reference_s)
    return np.clip(raw, cfg.min_steps, cfg.max_steps).astype(np.int64)


def trace_rows(trace: Trace, cfg: TraceConfig) -> slice:
    """The configured rows [first_row, last_row), checked against the trace's length."""
    n = len(trace.submit_s)
    last = n if cfg.last_row is None else cfg.last_row
    if not 0 <= last <= n:
        raise ConfigError("trace.last_row", cfg.last_row, f"must lie within the {n} jobs of {trace.source}")
    if not 0 <= cfg.first_row < last:
        raise ConfigError("trace.first_row", cfg.first_row, f"must lie in [0, last_row = {last}) ({trace.source})")
    if last - cfg.first_row < 2:
        raise ConfigError("trace.last_row", cfg.last_row, f"the range holds {last - cfg.first_row} job; need 2 or more")
    return slice(cfg.first_row, last)


def trace_workload(
    trace: Trace,
    cfg: TraceConfig,
    num_training_steps: int,
    mean_step_s: float,
    num_workers: int,
    load_gap_s: tuple[float | None, float | None],
    horizon_s: float,
) -> TraceWorkload:
    """The range's jobs with their steps and the time factor; raises if the range, rescaled,
    is shorter than one horizon.

    ``mean_step_s`` is the pool's mean sequential step time (simulation clock). With
    ``load_gap_s`` = (load, gap) the mean gap becomes mean_step_s x mean steps / (load x
    workers), i.e. that offered load, or ``gap`` where the load is None (the workload's
    ``offered_load`` and ``interarrival_s``).
    """
    rows = trace_rows(trace, cfg)
    submit, duration = trace.submit_s[rows], trace.duration_s[rows]
    reference = float(np.median(duration)) if cfg.reference_duration_s is None else cfg.reference_duration_s
    steps = job_steps(duration, cfg, num_training_steps, reference)
    offset = submit - submit[0]
    span = float(offset[-1])
    if not span > 0:
        raise ConfigError(
            "trace.last_row", cfg.last_row, f"every job of the range was submitted at one instant ({trace.source})"
        )
    mean_gap = span / (len(offset) - 1)
    load, gap = load_gap_s
    target = mean_step_s * float(steps.mean()) / (load * num_workers) if load is not None else gap
    factor = target / mean_gap
    if span * factor < horizon_s:
        raise ConfigError(
            "trace.last_row",
            cfg.last_row,
            f"rows [{rows.start}, {rows.stop}) of {trace.source} span {span * factor:.6g} s once rescaled, "
            f"shorter than workload.horizon_s = {horizon_s:.6g}",
        )
    return TraceWorkload(offset, steps, factor)


def trace_window(workload: TraceWorkload, horizon_s: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """One episode's arrival times (from 0, simulation clock) and steps: the jobs from a random
    start row of the range whose rescaled times fall within the horizon (`trace_workload`
    made sure the range holds one horizon)."""
    times = workload.offset_s * workload.time_factor
    # the latest start whose horizon still ends inside the range
    last_start = int(np.searchsorted(times, times[-1] - horizon_s, side="right")) - 1
    start = int(rng.integers(0, last_start + 1))
    stop = int(np.searchsorted(times, times[start] + horizon_s, side="right"))
    return times[start:stop] - times[start], workload.steps[start:stop]


def trace_arrivals(
    workload: TraceWorkload, cfg: WorkloadConfig, num_graphs: int, pmf: BetaPMF, rng: np.random.Generator
) -> Arrivals:
    """One episode's arrivals from the trace: `trace_window`'s times and steps, graphs and
    betas drawn as for synthetic arrivals. A job's gap is the time to the next arrival (the
    last one's: the range's mean gap)."""
    times, steps = trace_window(workload, cfg.horizon_s, rng)
    mean_gap = workload.offset_s[-1] * workload.time_factor / (len(workload.offset_s) - 1)
    gaps = np.append(np.diff(times), mean_gap)
    graph, beta = draw_jobs(cfg, num_graphs, pmf, len(times), rng)
    return Arrivals(times, gaps, graph, beta, steps)
