"""Benchmark: one full paper-setting episode (1001 arrivals, 32 workers) decided by `rollout`.

Prints wall seconds of the episode (cold: empty JCT cache; warm: a second seed), planned
decisions per second, simulated continuation arrivals per second and peak memory. Target
(issue 10): K = 8, H = 150 within 60 s on one core. ``--set`` overrides config keys, e.g.
``--set cluster.servers_per_rack=8 --set workload.offered_load=0.9358`` for 128 workers at the
paper's offered load, as in the cluster_size experiment (the paper's setting holds the
interarrival time instead, so a larger cluster is nearly idle).

    python benchmarks/bench_plan.py [--graphs DIR] [--dist beta_a] [--horizon 150] [--futures 8] [--set KEY=VALUE]
"""

from __future__ import annotations

import argparse
import resource
import time
from pathlib import Path

from pacml.config import load_config
from pacml.evaluation import run_episode
from pacml.graphs.io import load_graph_dir
from pacml.policies.base import PolicyContext, make_policy
from pacml.sim.engine import ClusterModel

DEFAULT_GRAPHS = Path(__file__).resolve().parents[1].parent / "shared" / "pipedream_profiles"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graphs", default=str(DEFAULT_GRAPHS))
    ap.add_argument("--dist", default="beta_a")
    ap.add_argument("--horizon", type=int, default=150)
    ap.add_argument("--futures", type=int, default=8)
    ap.add_argument("--base", default="fixed-4")
    ap.add_argument("--policy", default="rollout", choices=["rollout", "rollout_clairvoyant"])
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="a config override (repeatable)")
    args = ap.parse_args()
    cfg = load_config(
        overrides=[
            f"planning.horizon={args.horizon}",
            f"planning.num_futures={args.futures}",
            f"planning.base_policy={args.base}",
            *args.set,
        ]
    )
    graphs = load_graph_dir(args.graphs, names=cfg.graphs.models)
    model = ClusterModel(graphs, cfg)
    for label, seed in (("cold", 100), ("warm", 101)):
        policy = make_policy(args.policy, context=PolicyContext(model, args.dist))
        t0 = time.perf_counter()
        _, met = run_episode(model, policy, args.dist, seed)
        wall = time.perf_counter() - t0
        print(
            f"{label} episode seed={seed}: {wall:.2f} s, blocking rate {met['blocking_rate']:.4f}, "
            f"{policy.decisions_planned} planned decisions ({policy.decisions_planned / wall:,.0f} per s)"
        )
    print(
        f"policy={args.policy} K={args.futures} H={args.horizon} base={args.base} dist={args.dist} "
        f"arrivals={met['jobs_arrived']} workers={model.topology.num_workers} "
        f"placements cached={len(model.cache.placements):,}"
    )
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"peak memory (process max RSS, whole run): {peak_kib / 1024:.1f} MiB")


if __name__ == "__main__":
    main()
