"""What arrives: the job pool, interarrival times and JCT-requirement (beta) distributions.

Every draw takes an explicit ``numpy.random.Generator``; nothing here touches global state.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pacml.config import BetaDistribution, WorkloadConfig
from pacml.errors import UnknownNameError


@dataclass(frozen=True, eq=False)
class BetaPMF:
    """A probability mass function over beta values."""

    support: np.ndarray
    probs: np.ndarray

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        return rng.choice(self.support, size=size, p=self.probs)

    @property
    def mean(self) -> float:
        return float(np.dot(self.support, self.probs))


def skewnorm_samples(skewness: float, loc: float, size: int, rng: np.random.Generator) -> np.ndarray:
    """Samples of scipy's skewnorm(a=skewness, loc, scale=1), by the standard construction
    delta|u0| + sqrt(1 - delta^2) u1 with delta = a / sqrt(1 + a^2)."""
    delta = skewness / np.sqrt(1.0 + skewness**2)
    u0 = rng.standard_normal(size)
    u1 = rng.standard_normal(size)
    return loc + delta * np.abs(u0) + np.sqrt(1.0 - delta**2) * u1


def build_pmf(dist: BetaDistribution, rng: np.random.Generator) -> BetaPMF:
    """The beta PMF of one episode (ddls.md 8).

    uniform: equal mass on ``round(arange(min, max + 10^-d, 10^-d), d)`` (91 values for
    0.1..1). skewnorm (ddls' CustomSkewNorm): draw ``samples`` from skewnorm(a, loc=max),
    shift to min 0, divide by the max, times ``max``, clamp values below ``min`` to ``min``
    (ddls' "resample" is a clamp, B25), histogram into ``bins`` bins and put each bin's
    mass on its right edge rounded to ``decimals``. The skewnorm PMF is rebuilt from the
    episode's generator at every reset, as ddls does.
    """
    step = 10.0**-dist.decimals
    if dist.kind == "uniform":
        support = np.unique(np.round(np.arange(dist.min, dist.max + step / 2, step), dist.decimals))
        return BetaPMF(support, np.full(len(support), 1.0 / len(support)))
    x = skewnorm_samples(dist.skewness, dist.max, dist.samples, rng)
    x = x - x.min()
    x = x / x.max() * dist.max
    x = np.maximum(x, dist.min)
    counts, edges = np.histogram(x, bins=dist.bins)
    values = np.round(edges[1:], dist.decimals)
    support, inverse = np.unique(values, return_inverse=True)
    probs = np.bincount(inverse, weights=counts).astype(np.float64)
    keep = probs > 0
    probs = probs[keep] / probs[keep].sum()
    return BetaPMF(support[keep], probs)


def episode_pmf(distributions: dict[str, BetaDistribution], name: str, rng: np.random.Generator) -> BetaPMF:
    """The beta PMF of one episode of distribution ``name`` (`build_pmf`); a mixture averages
    its components' PMFs, built in their listed order from the same generator."""
    dist = get_distribution(distributions, name)
    if dist.kind != "mixture":
        return build_pmf(dist, rng)
    parts = [build_pmf(get_distribution(distributions, c), rng) for c in dist.components]
    support, inverse = np.unique(np.concatenate([p.support for p in parts]), return_inverse=True)
    probs = np.bincount(inverse, weights=np.concatenate([p.probs for p in parts])) / len(parts)
    return BetaPMF(support, probs)


def get_distribution(distributions: dict[str, BetaDistribution], name: str) -> BetaDistribution:
    """A distribution by its user-facing name, with a clear error for an unknown one."""
    try:
        return distributions[name]
    except KeyError:
        raise UnknownNameError(f"unknown distribution {name!r}; defined in config: {sorted(distributions)}") from None


@dataclass(frozen=True, eq=False)
class Arrivals:
    """One episode's arrivals: times (simulation clock), graph indices and betas."""

    time_s: np.ndarray
    interarrival_s: np.ndarray
    graph: np.ndarray
    beta: np.ndarray
    steps: np.ndarray | None = None
    """Training steps of each job (a trace's); None: each graph's own."""


def sample_arrivals(
    cfg: WorkloadConfig, num_graphs: int, interarrival_s: float, pmf: BetaPMF, rng: np.random.Generator
) -> Arrivals:
    """Arrivals at 0, then every interarrival (fixed or exponential) while <= the horizon.

    Graphs are drawn without replacement from ``replication_factor`` copies of each graph
    and the pool is refilled when empty (ddls' remove_and_repeat); beta is drawn per job.
    """
    if cfg.interarrival == "fixed":
        count = int(np.floor(cfg.horizon_s / interarrival_s + 1e-9)) + 1
        times = np.arange(count) * interarrival_s
        gaps = np.full(count, interarrival_s)
    else:
        chunks, total = [], 0.0
        while total <= cfg.horizon_s:
            gap = rng.exponential(interarrival_s, size=1024)
            chunks.append(gap)
            total += gap.sum()
        gaps = np.concatenate(chunks)
        times = np.concatenate([[0.0], np.cumsum(gaps)[:-1]])
        keep = times <= cfg.horizon_s
        times, gaps = times[keep], gaps[keep]
        count = len(times)
    graph, beta = draw_jobs(cfg, num_graphs, pmf, count, rng)
    return Arrivals(times, gaps, graph, beta)


def draw_jobs(
    cfg: WorkloadConfig, num_graphs: int, pmf: BetaPMF, count: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """The graphs (without replacement from ``replication_factor`` copies of each, refilled
    when empty: ddls' remove_and_repeat) and betas of ``count`` jobs."""
    pool = np.repeat(np.arange(num_graphs), cfg.replication_factor)
    draws = []
    while sum(len(d) for d in draws) < count:
        draws.append(rng.permutation(pool))
    graph = np.concatenate(draws)[:count]
    beta = pmf.sample(rng, count)
    return graph, beta
