"""Benchmark: one agent's training as the workflow trains it (DAgger from the planner), on one
core, and where its CPU time goes.

Trains the agent config.yaml describes (built-in graphs of the paper's five models unless
--graphs names a folder of graph JSONs or PipeDream profiles) and prints the CPU seconds of:
the teacher's scores (the planner's look-ahead), the rest of collecting (environment steps,
features, the student's greedy degree), fitting (the gradient steps, with their count and
milliseconds each) and the rest (validation episodes, checkpoints). Then the optimiser alone,
`FlatAdam` against `torch.optim.Adam`, on the agent's actor.

    python benchmarks/bench_imitation.py [--graphs DIR] [--dist beta_a] [--iterations 12]
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

import torch

from pacml.config import load_config
from pacml.graphs.io import load_graph_dir
from pacml.graphs.profiler import profile_model
from pacml.policies.planning import Rollout
from pacml.sim.engine import ClusterModel
from pacml.train import imitation, ppo
from pacml.train.optimiser import FlatAdam

CPU_S = {"teacher": 0.0, "collect": 0.0, "fit": 0.0}
FIT_STEPS = [0]


def cpu_timed(name, fn):
    def wrapper(*args, **kwargs):
        t0 = time.process_time()
        try:
            return fn(*args, **kwargs)
        finally:
            CPU_S[name] += time.process_time() - t0

    return wrapper


def optimiser_ms(optimiser, cfg, model, steps: int = 300) -> float:
    """Milliseconds of one optimiser step over a fresh agent's actor, its gradients random."""
    net, _ = ppo.build_agent(cfg, model)
    opt = optimiser(net.actor.parameters(), lr=1e-3, foreach=True)
    for p in net.actor.parameters():
        if p.grad is None:  # torch's Adam; FlatAdam has made every gradient a slice of its buffer
            p.grad = torch.zeros_like(p)
        p.grad.normal_()
    opt.step()
    t0 = time.perf_counter()
    for _ in range(steps):
        opt.step()
    return (time.perf_counter() - t0) / steps * 1e3


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graphs", default=None, help="a folder of graphs (default: the built-in five)")
    ap.add_argument("--dist", default="beta_a")
    ap.add_argument("--iterations", type=int, default=None, help="DAgger iterations (default: config.yaml's)")
    ap.add_argument("--config", default=str(Path(__file__).resolve().parents[1] / "config.yaml"))
    args = ap.parse_args()
    torch.set_num_threads(1)
    overrides = ["ppo.torch_threads=1"]
    if args.iterations is not None:
        overrides.append(f"imitation.iterations={args.iterations}")
    cfg = load_config(args.config, overrides)
    graphs = (
        load_graph_dir(args.graphs, names=cfg.graphs.models)
        if args.graphs
        else [profile_model(name) for name in cfg.graphs.models]
    )
    model = ClusterModel(graphs, cfg)
    Rollout.scores = cpu_timed("teacher", Rollout.scores)
    imitation.collect = cpu_timed("collect", imitation.collect)
    fit = imitation.fit

    def counted_fit(net, opt, graphs, data, epochs, minibatch_size, gen):
        FIT_STEPS[0] += epochs * -(-len(data) // minibatch_size)
        return fit(net, opt, graphs, data, epochs, minibatch_size, gen)

    imitation.fit = cpu_timed("fit", counted_fit)
    out = Path(tempfile.mkdtemp())
    try:
        t0 = time.process_time()
        result = ppo.train(cfg, model, args.dist, 0, out)
        total = time.process_time() - t0
    finally:
        shutil.rmtree(out)
    rows = (
        ("teacher's scores (look-ahead)", CPU_S["teacher"]),
        ("collecting, the rest", CPU_S["collect"] - CPU_S["teacher"]),
        (f"fitting: {FIT_STEPS[0]:,} steps, {1e3 * CPU_S['fit'] / FIT_STEPS[0]:.2f} ms each", CPU_S["fit"]),
        ("the rest (validation, checkpoints)", total - CPU_S["collect"] - CPU_S["fit"]),
    )
    print(f"{cfg.imitation.iterations} DAgger iterations on {args.dist}: {total:.1f} s of CPU (one torch thread)")
    for name, t in rows:
        print(f"  {name:42s} {t:7.1f} s  {100 * t / total:5.1f} %")
    print(f"best validation blocking rate: {result.best_blocking_rate:.6f}")
    flat, plain = optimiser_ms(FlatAdam, cfg, model), optimiser_ms(torch.optim.Adam, cfg, model)
    print(f"optimiser step over the actor: FlatAdam {flat:.2f} ms, torch.optim.Adam {plain:.2f} ms")


if __name__ == "__main__":
    main()
