"""Benchmark: simulator seconds per episode against cluster size (the cost curve of the
``cluster_size`` experiment: 4 x 4 racks of 1 to 16 servers, 16 to 256 workers, at the
paper's offered load, so arrivals grow with the workers).

For each size prints the workers, the arrivals, the seconds of a cold episode (empty JCT
cache: every placement's step simulated), of a warm one (the next seed, cache kept), the step
simulations run and peak memory, for ``para_max`` and ``fixed-4``.

    python benchmarks/bench_cluster_size.py [--servers 1 2 4 8 16] [--dist beta_a] [--graphs DIR]
"""

from __future__ import annotations

import argparse
import resource
import time

from pacml.config import load_config
from pacml.evaluation import run_episode
from pacml.graphs.io import load_graph_dir
from pacml.graphs.profiler import profile_model
from pacml.policies.base import make_policy
from pacml.sim.engine import ClusterModel


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--servers", type=int, nargs="+", default=[1, 2, 4, 8, 16])
    ap.add_argument("--dist", default="beta_a")
    ap.add_argument("--graphs", default=None, help="a directory of graphs (default: the built-in profiles)")
    ap.add_argument("--policies", nargs="+", default=["para_max", "fixed-4"])
    args = ap.parse_args()
    base = load_config("config.yaml")
    if args.graphs:
        graphs = load_graph_dir(args.graphs, names=base.graphs.models)
    else:
        graphs = [profile_model(m, base.workload.num_training_steps) for m in base.graphs.models]
    print("servers/rack workers policy arrivals cold_s warm_s step_sims blocking")
    for s in args.servers:
        cfg = load_config("config.yaml", [f"cluster.servers_per_rack={s}"])
        for name in args.policies:
            model = ClusterModel(graphs, cfg)  # a cold cache per policy
            t0 = time.perf_counter()
            _, met = run_episode(model, make_policy(name), args.dist, 100)
            cold = time.perf_counter() - t0
            t0 = time.perf_counter()
            run_episode(model, make_policy(name), args.dist, 101)
            warm = time.perf_counter() - t0
            print(
                f"{s:12d} {model.topology.num_workers:7d} {name:8s} {met['jobs_arrived']:8d} {cold:6.2f} "
                f"{warm:6.2f} {model.cache.step_simulations:9d} {met['blocking_rate']:.4f}",
                flush=True,
            )
    print(f"peak memory: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")


if __name__ == "__main__":
    main()
