"""Benchmark: one full paper-setting episode (1001 arrivals, 32 workers) with Para_max.

Prints wall seconds with a cold and a warm JCT cache, arrivals per second and peak
memory (max RSS). Targets (issue 4): warm < 0.2 s, cold < 5 s on a 2-core machine.

    python benchmarks/bench_sim.py [--graphs DIR] [--policy para_max] [--dist beta_a]
"""

from __future__ import annotations

import argparse
import resource
import time
from pathlib import Path

from pacml.config import load_config
from pacml.evaluation import run_episode
from pacml.graphs.io import load_graph_dir
from pacml.policies.base import make_policy
from pacml.sim.engine import ClusterModel

DEFAULT_GRAPHS = Path(__file__).resolve().parents[1].parent / "shared" / "pipedream_profiles"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graphs", default=str(DEFAULT_GRAPHS))
    ap.add_argument("--policy", default="para_max")
    ap.add_argument("--dist", default="beta_a")
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    cfg = load_config()
    graphs = load_graph_dir(args.graphs, names=cfg.graphs.models)
    policy = make_policy(args.policy)

    t0 = time.perf_counter()
    model = ClusterModel(graphs, cfg)
    _, met = run_episode(model, policy, args.dist, 0)
    cold = time.perf_counter() - t0
    warm = []
    for seed in range(1, args.repeats + 1):
        t0 = time.perf_counter()
        _, met = run_episode(model, policy, args.dist, seed)
        warm.append(time.perf_counter() - t0)
    best = min(warm)
    print(f"policy={args.policy} dist={args.dist} arrivals={met['jobs_arrived']} workers={model.topology.num_workers}")
    print(f"cold episode (empty JCT cache): {cold:.3f} s  ({model.cache.step_simulations} step simulations)")
    print(f"warm episode (best of {args.repeats}): {best:.4f} s  median {sorted(warm)[len(warm) // 2]:.4f} s")
    print(f"arrivals per second (warm): {met['jobs_arrived'] / best:,.0f}")
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"peak memory (process max RSS, whole run): {peak_kib / 1024:.1f} MiB")


if __name__ == "__main__":
    main()
