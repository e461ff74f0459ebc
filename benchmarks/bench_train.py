"""Benchmark: PPO training speed of PAC-ML on one core, and where the time goes.

Trains for --steps environment decisions on the paper's setting (the five PipeDream graphs,
beta_a) and prints environment steps per second and the share of wall time spent: while
collecting rollouts, in the simulation (Episode.step), featurisation
(FeatureSpace.decision_vector) and the network's forward passes; then in PPO updates; the rest
is validation and checkpoints. Targets: >= 2,000 steps per second (issue 5), then >= 6,000
(issue 13; measured in docs/timings.md: the config's 8 environments cannot reach it, their
updates alone allow about 7,000-8,000, and `--set ppo.num_envs=32` gave 4,700-5,900). It
trains the agent config.yaml describes (today the per-job agent, whose per-degree look-ahead
features place the job at every degree), PPO alone.

    python benchmarks/bench_train.py [--graphs DIR] [--steps 100000] [--dist beta_a] [--set KEY=VALUE ...]
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

import torch

from pacml.config import load_config
from pacml.env.features import FeatureSpace
from pacml.graphs.io import load_graph_dir
from pacml.sim import engine
from pacml.sim.engine import ClusterModel
from pacml.train import ppo

DEFAULT_GRAPHS = Path(__file__).resolve().parents[1].parent / "shared" / "pipedream_profiles"
TIMERS = {"simulation": 0.0, "featurisation": 0.0}


def timed(name, fn):
    def wrapper(*args, **kwargs):
        t0 = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            TIMERS[name] += time.perf_counter() - t0

    return wrapper


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graphs", default=str(DEFAULT_GRAPHS))
    ap.add_argument("--steps", type=int, default=100_000)
    ap.add_argument("--dist", default="beta_a")
    ap.add_argument("--config", default=str(Path(__file__).resolve().parents[1] / "config.yaml"))
    ap.add_argument("--set", nargs="*", default=[], metavar="KEY=VALUE", help="config overrides, e.g. ppo.num_envs=32")
    args = ap.parse_args()
    torch.set_num_threads(1)
    # PPO alone (no imitation phase), the paper's 1000 s interarrival
    overrides = [f"ppo.total_timesteps={args.steps}", "ppo.torch_threads=1", "workload.offered_load=null"]
    cfg = load_config(args.config, [*overrides, "imitation.iterations=0", *args.set])
    model = ClusterModel(load_graph_dir(args.graphs, names=cfg.graphs.models), cfg)
    engine.Episode.step = timed("simulation", engine.Episode.step)
    FeatureSpace.decision_vector = timed("featurisation", FeatureSpace.decision_vector)
    inside = {"rollout": 0.0, "simulation": 0.0, "featurisation": 0.0}  # within collect_rollout
    collect = ppo.collect_rollout

    def counted_collect(*a, **kw):
        before = dict(TIMERS)
        t0 = time.perf_counter()
        try:
            return collect(*a, **kw)
        finally:
            inside["rollout"] += time.perf_counter() - t0
            for k in ("simulation", "featurisation"):
                inside[k] += TIMERS[k] - before[k]

    ppo.collect_rollout = counted_collect
    update_s = 0.0

    def log(metrics, step):
        nonlocal update_s
        update_s += metrics["perf/update_s"]

    out = Path(tempfile.mkdtemp())
    try:
        t0 = time.perf_counter()
        result = ppo.train(cfg, model, args.dist, 0, out, log=log)
        wall = time.perf_counter() - t0
    finally:
        shutil.rmtree(out)
    sim, feat = inside["simulation"], inside["featurisation"]
    forward = inside["rollout"] - sim - feat
    print(
        f"steps={result.global_step} updates={result.updates} wall={wall:.1f} s (one torch thread, "
        f"{torch.backends.cpu.get_cpu_capability()} kernels: pacml.kernels)"
    )
    print(f"environment steps per second: {result.global_step / wall:,.0f}")
    rows = (
        ("rollouts: simulation", sim),
        ("rollouts: featurisation", feat),
        ("rollouts: network forward passes", forward),
        ("PPO updates", update_s),
        ("other (validation, checkpoints)", wall - inside["rollout"] - update_s),
    )
    for name, t in rows:
        print(f"  {name:34s} {t:7.1f} s  {100 * t / wall:5.1f} %")
    # what the PPO settings alone allow: the updates' gradient steps per decision, with the
    # environments, acting and validation free
    print(f"ceiling of these PPO settings (updates alone): {result.global_step / update_s:,.0f} decisions per second")
    print(f"best validation blocking rate: {result.best_blocking_rate:.4f} at update {result.best_update}")


if __name__ == "__main__":
    main()
