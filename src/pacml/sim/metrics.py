"""Episode metrics: pure functions of the job records.

The names below are a public interface: the same keys appear in MLflow, the JSON files
and the tidy CSVs. Times are on the simulation clock (seconds), sizes in bytes.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from pacml.sim.records import BLOCK_CAUSES, JobRecord

METRICS: dict[str, str] = {
    "jobs_arrived": "jobs that arrived (the arrival at the horizon included under paper accounting)",
    "jobs_accepted": "jobs placed within their JCT requirement at arrival",
    "jobs_completed": "accepted jobs that finished by the horizon",
    "jobs_blocked": "jobs blocked, any cause",
    **{f"blocked_{c}": f"jobs blocked with cause '{c}'" for c in BLOCK_CAUSES},
    "jobs_running_at_horizon": "accepted jobs still running at the horizon (fixed accounting only)",
    "blocking_rate": "jobs_blocked / jobs_arrived (the paper's metric)",
    "acceptance_rate": "jobs_completed / jobs_arrived",
    "mean_jct": "mean JCT of completed jobs, s",
    "mean_jct_speedup": "mean sequential JCT / JCT of completed jobs",
    "mean_requested_speedup": "mean ceil(1/beta) of completed jobs",
    "mean_degree": "mean chosen degree of accepted jobs",
    "mean_workers_per_job": "mean servers occupied by accepted jobs",
    "mean_beta_completed": "mean beta of completed jobs",
    "demand_throughput": "original job bytes (op memory + dependency size) processed per second",
    "cluster_throughput": "partitioned job bytes processed per second",
    "worker_utilisation": "fraction of worker-time spent computing over the episode",
    "worker_utilisation_ddls": "the same divided by the training steps, as ddls reported it (B16)",
    "worker_occupancy": "fraction of worker-time held by jobs",
    "mean_load_rate": "mean over arrivals of job bytes / interarrival time, B/s (a trace's simultaneous submissions, gap 0, left out)",
    "episode_return": "sum of rewards: +1 per accepted job, -1 per job blocked at its decision",
}


def episode_metrics(
    records: Sequence[JobRecord], num_workers: int, horizon_s: float, num_training_steps: int
) -> dict[str, float]:
    """Every metric of `METRICS` for one episode."""
    arrived = len(records)
    blocked = [r for r in records if r.outcome == "blocked"]
    completed = [r for r in records if r.outcome == "completed"]
    accepted = [r for r in records if r.accepted]
    out: dict[str, float] = {
        "jobs_arrived": arrived,
        "jobs_accepted": len(accepted),
        "jobs_completed": len(completed),
        "jobs_blocked": len(blocked),
    }
    for c in BLOCK_CAUSES:
        out[f"blocked_{c}"] = sum(1 for r in blocked if r.cause == c)
    out["jobs_running_at_horizon"] = sum(1 for r in records if r.outcome == "running")
    out["blocking_rate"] = len(blocked) / arrived if arrived else 0.0
    out["acceptance_rate"] = len(completed) / arrived if arrived else 0.0

    def mean(xs) -> float:
        xs = list(xs)
        return float(np.mean(xs)) if xs else float("nan")

    out["mean_jct"] = mean(r.jct_s for r in completed)
    out["mean_jct_speedup"] = mean(r.sequential_jct_s / r.jct_s for r in completed)
    out["mean_requested_speedup"] = mean(np.ceil(1.0 / r.beta) for r in completed)
    out["mean_degree"] = mean(r.action for r in accepted)
    out["mean_workers_per_job"] = mean(r.num_workers for r in accepted)
    out["mean_beta_completed"] = mean(r.beta for r in completed)
    demand = cluster = busy = held = 0.0
    for r in accepted:
        ran = min(r.finish_s, horizon_s) - r.arrival_s
        frac = ran / r.jct_s  # > 0: ClusterModel refuses a job of no time
        demand += r.job_bytes * frac
        cluster += r.partitioned_bytes * frac
        held += r.num_workers * ran
        busy += r.num_workers * ran * r.utilisation
    out["demand_throughput"] = demand / horizon_s
    out["cluster_throughput"] = cluster / horizon_s
    out["worker_utilisation"] = busy / (num_workers * horizon_s)
    out["worker_utilisation_ddls"] = out["worker_utilisation"] / num_training_steps
    out["worker_occupancy"] = held / (num_workers * horizon_s)
    out["mean_load_rate"] = mean(r.job_bytes / r.interarrival_s for r in records if r.interarrival_s > 0)
    decided_blocked = sum(1 for r in records if r.outcome == "blocked" and r.cause != "horizon")
    out["episode_return"] = len(accepted) - decided_blocked
    return out
