"""Config sections of the simulated experiment: cluster, partitioning, JCT distributions, workload, graphs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal


@dataclass(frozen=True)
class ClusterConfig:
    """RAMP topology: C communication groups x R racks x S servers, one A100 per server."""

    communication_groups: int = 4
    """C; also the number of transceivers per node (ddls.md 3.1)."""
    racks_per_group: int = 4
    """R; RAMP needs R <= C."""
    servers_per_rack: int = 2
    """S."""
    node_bandwidth_bytes_per_s: float = 1.6e12
    """Total bandwidth of one node (12.8 Tbps); a channel gets 1/C of it."""
    propagation_latency_s: float = 50e-9
    """One-hop propagation latency."""
    io_latency_s: float = 100e-9
    """Worker I/O latency, paid twice per transfer."""
    worker_memory_bytes: float = 80e9
    """A100 80 GB."""
    max_degree: int = 16
    """Largest partition degree an action may ask for (ddls max_partitions_per_op)."""
    collective_bandwidth_per_channel_divided: bool = True
    """ddls bug B11: the all-reduce model divides the (already per-channel) bandwidth by C
    again. True reproduces the paper."""
    placement: Literal["ddls", "compact"] = "ddls"
    """How a job's sub-ops find servers (pacml.cluster.placement). ddls: the authors'
    first-fit, where an op whose parent sits elsewhere may take a block outside the job's
    first one (gnmt at degree 16 takes 21 servers). compact: a job whose largest op degree is
    n takes exactly the n servers of one free block; an op of degree k sits on the block's
    first k servers."""
    reconfiguration_s: float = 0.0
    """Time the optical circuit takes to reconfigure, paid once by every point-to-point
    transfer and once per step of a collective (each reduce-scatter and all-gather step).
    ddls leaves it out (its term is commented out): 0 reproduces the paper. RAMP's switches
    reconfigure in nanoseconds (20e-9); slower optical switches take microseconds."""

    @property
    def num_workers(self) -> int:
        return self.communication_groups * self.racks_per_group * self.servers_per_rack

    @property
    def channel_bandwidth_bytes_per_s(self) -> float:
        return self.node_bandwidth_bytes_per_s / self.communication_groups


@dataclass(frozen=True)
class PartitionConfig:
    """How an action (max degree a) becomes per-op degrees (ddls.md 2.1)."""

    min_op_time_s: float = 1e-5
    """The SiP-ML quantum q on the *physical* forward time of an op: an op of time t is split
    into min(a, smallest even number >= t/q) pieces. ddls' 0.01 was in PipeDream ms,
    i.e. 1e-5 s."""
    paper_edge_sizes: bool = True
    """Reproduce ddls B7/B8: partitioned dependency sizes derive from op memory
    (activation + parameters) rather than the source's activation."""
    round_to_placeable: bool = True
    """Fix ddls B10: an op whose degree has no block shape (10, 12 or 14 on 32 workers, for
    ops of 0.08-0.14 ms at a = 16) is split by the largest placeable degree below it
    instead of making the whole job unplaceable. The paper's PipeDream graphs have no such
    op, so both settings give the paper's numbers; the built-in graphs have some."""


@dataclass(frozen=True)
class BetaDistribution:
    """A JCT-requirement distribution: beta = max acceptable JCT / sequential JCT."""

    kind: Literal["uniform", "skewnorm", "mixture"] = "uniform"
    """uniform over a grid, ddls' skew-normal recipe, or a mixture of other distributions."""
    min: float = 0.1
    """Smallest beta (0 < min <= max)."""
    max: float = 1.0
    """Largest beta (<= 1)."""
    decimals: int = 2
    """Betas are rounded to this many decimals (the uniform grid's step is 10^-decimals)."""
    skewness: float = 0.0
    """Only for kind=skewnorm: scipy's shape parameter a (+5 skews mass to small beta)."""
    samples: int = 50000
    """Only for kind=skewnorm: samples drawn to build the PMF (ddls' recipe)."""
    bins: int = 1000
    """Only for kind=skewnorm: histogram bins of the PMF."""
    label: str = ""
    """Label used in figures (e.g. the paper's beta_A)."""
    components: tuple[str, ...] = ()
    """Only for kind=mixture: the distributions mixed with equal weights (each job's beta comes
    from one of them, chosen uniformly; each component's PMF is built as its own episode would
    build it). Components are uniform or skewnorm distributions."""


def _paper_distributions() -> dict[str, BetaDistribution]:
    return {
        "beta_a": BetaDistribution("uniform", label="β_A (uniform)"),
        "beta_b": BetaDistribution("skewnorm", skewness=5.0, label="β_B (skew +5)"),
        "beta_c": BetaDistribution("skewnorm", skewness=0.0, label="β_C (skew 0)"),
        "beta_d": BetaDistribution("skewnorm", skewness=-5.0, label="β_D (skew -5)"),
    }


@dataclass(frozen=True)
class WorkloadConfig:
    """Job arrivals, the job pool and the simulation clock."""

    num_training_steps: int = 50
    """Training steps per job; the JCT is one simulated step times this."""
    compute_time_scale: float = 1000.0
    """Multiplies every op's physical compute time on the simulation clock. 1000 is the
    paper's setting (ddls bug B1: PipeDream ms on the same clock as communication in s, so
    the network is 1000x cheaper than physical); 1 is physical."""
    interarrival: Literal["fixed", "exponential"] = "fixed"
    """Interarrival time distribution; the paper uses fixed."""
    interarrival_s: float = 1000.0
    """Mean interarrival time on the simulation clock (ignored when offered_load is set)."""
    offered_load: float | None = None
    """If set, interarrival_s = mean sequential JCT of the pool / (offered_load x workers).
    The paper's 1000 s with PipeDream's graphs is an offered load of about 0.94."""
    offered_load_range: tuple[float, ...] | None = None
    """(low, high): each episode draws its own offered load, log-uniform on [low, high], from
    its generator (training an agent over many loads, with ``agent.load_feature``); the
    episode's interarrival follows from it as from offered_load, which it replaces. null:
    every episode at offered_load (or interarrival_s). Not with a trace (trace.path)."""
    horizon_s: float = 1e6
    """Simulated time of one episode; arrivals at 0, 1000, ..., 1e6 give 1001 jobs."""
    replication_factor: int = 1000
    """Copies of each graph in the pool, drawn without replacement and refilled."""
    horizon_accounting: Literal["paper", "fixed"] = "paper"
    """paper: jobs still running at the horizon count as blocked and the arrival at the
    horizon counts as arrived but undecided (ddls B17). fixed: neither is counted."""


@dataclass(frozen=True)
class TraceConfig:
    """Arrivals replayed from a cluster trace instead of drawn (``path`` set): a CSV with one
    row a job, a submit-time column and a duration column (pacml.trace_csv reads it).

    An episode starts at a random row of [first_row, last_row) (the episode's generator
    picks it) and takes the consecutive jobs submitted within workload.horizon_s of it. Times
    are rescaled by one factor over that range so that its mean gap is the interarrival the
    offered load asks for (workload.offered_load, else workload.interarrival_s): the trace's
    bursts and lulls are kept. A job trains for round(N x duration / reference) steps, N =
    workload.num_training_steps, clipped to [min_steps, max_steps], so its sequential JCT
    follows the trace; its model is drawn from the pool and its β from the distribution."""

    path: str | None = None
    """The trace CSV; None: synthetic arrivals (the paper)."""
    submit_column: str = "timestamp"
    """Column of submit times: seconds (a number) or a date-time (``YYYY-MM-DD HH:MM:SS``)."""
    duration_column: str = "duration"
    """Column of run times in seconds (> 0)."""
    filter: dict[str, str] = field(default_factory=dict)
    """Keep only rows whose column equals the value, e.g. {cluster: 6214e9} (a virtual cluster)."""
    sort: bool = False
    """Sort the kept rows by submit time; False: rows out of order are an error (Philly's CSV
    is not sorted: set true)."""
    first_row: int = 0
    """First row (0-based, of the kept, sorted jobs) an episode may start at."""
    last_row: int | None = None
    """End (exclusive) of the rows episodes are drawn from; None: the last row. A held-out
    window for evaluation is another [first_row, last_row)."""
    reference_duration_s: float | None = None
    """The duration that trains for workload.num_training_steps; None: the median duration
    over [first_row, last_row)."""
    min_steps: int = 5
    """Fewest training steps of a job (0.1 x N by default: the trace's 1-second jobs)."""
    max_steps: int = 500
    """Most training steps of a job (10 x N by default: Philly's jobs of weeks)."""


PAPER_MODELS = ("alexnet", "gnmt", "resnet18", "squeezenet1_0", "vgg16")


@dataclass(frozen=True)
class GraphsConfig:
    """Which job graphs make up the pool."""

    source: Literal["builtin", "pipedream"] = "builtin"
    """builtin: pacml's own deterministic profiles of the models; pipedream: read
    PipeDream graph.txt profiles from pipedream_dir (the paper's exact graphs)."""
    pipedream_dir: str = "../shared/pipedream_profiles"
    """Directory of PipeDream profiles (*.txt or */graph.txt), for source=pipedream."""
    models: tuple[str, ...] = PAPER_MODELS
    """Models in the pool; an empty list takes every graph file in the directory."""
