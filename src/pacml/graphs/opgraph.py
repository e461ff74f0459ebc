"""The job graph: one training step as a DAG of forward and backward ops.

An `OpGraph` is immutable and array-based. Op ``i < n`` is the i-th forward op (in the
order the source file first names it); op ``n + i`` is its backward twin. Every
forward dependency u -> v has a backward twin (n+v) -> (n+u), and one join edge runs
from the last forward op to its backward twin (ddls.md 1.2). SI units throughout.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np


@dataclass(frozen=True, eq=False)
class OpGraph:
    """A training-step DAG.

    Parameters
    ----------
    name : str
        The job's model name (e.g. ``alexnet``).
    op_names : tuple of str
        One name per op; backward ops end in ``:bwd``.
    descriptions : tuple of str
        Layer description per op (e.g. ``Conv2d(3, 64, ...)``); informational.
    compute_time_s : (n_ops,) float64
        Physical compute time of each op on an A100, seconds.
    activation_bytes, parameter_bytes : (n_ops,) float64
        Output activation and parameter size of each op (both twins carry the layer's).
    src, dst : (n_deps,) int64
        Dependency endpoints (op indices).
    size_bytes : (n_deps,) float64
        Bytes each dependency carries.
    num_forward : int
        n, the number of forward ops; op ``i`` and ``n+i`` are twins.
    num_training_steps : int
        Training steps of the job; its JCT is one step's time times this.
    """

    name: str
    op_names: tuple[str, ...]
    descriptions: tuple[str, ...]
    compute_time_s: np.ndarray
    activation_bytes: np.ndarray
    parameter_bytes: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    size_bytes: np.ndarray
    num_forward: int
    num_training_steps: int = 50

    def __post_init__(self) -> None:
        n_ops = len(self.op_names)
        assert n_ops == 2 * self.num_forward, "ops must be n forward followed by n backward"
        for arr_name in ("compute_time_s", "activation_bytes", "parameter_bytes"):
            arr = np.asarray(getattr(self, arr_name), dtype=np.float64)
            assert arr.shape == (n_ops,), f"{arr_name} has shape {arr.shape}, expected ({n_ops},)"
            arr.setflags(write=False)
            object.__setattr__(self, arr_name, arr)
        for arr_name, dtype in (("src", np.int64), ("dst", np.int64), ("size_bytes", np.float64)):
            arr = np.asarray(getattr(self, arr_name), dtype=dtype)
            assert arr.shape == (len(self.src),), f"{arr_name} length differs from src"
            arr.setflags(write=False)
            object.__setattr__(self, arr_name, arr)
        assert len(self.descriptions) == n_ops

    # ---- sizes -------------------------------------------------------------------------
    @property
    def num_ops(self) -> int:
        return len(self.op_names)

    @property
    def num_deps(self) -> int:
        return len(self.src)

    @cached_property
    def memory_bytes(self) -> np.ndarray:
        """Op memory = activation + parameter bytes (both twins, ddls.md 1.2)."""
        m = self.activation_bytes + self.parameter_bytes
        m.setflags(write=False)
        return m

    # ---- structure ---------------------------------------------------------------------
    @cached_property
    def parents(self) -> tuple[tuple[int, ...], ...]:
        """In-neighbours of each op, in dependency order."""
        out: list[list[int]] = [[] for _ in range(self.num_ops)]
        for u, v in zip(self.src.tolist(), self.dst.tolist()):
            out[v].append(u)
        return tuple(tuple(p) for p in out)

    @cached_property
    def children(self) -> tuple[tuple[int, ...], ...]:
        """Out-neighbours of each op, in dependency order."""
        out: list[list[int]] = [[] for _ in range(self.num_ops)]
        for u, v in zip(self.src.tolist(), self.dst.tolist()):
            out[u].append(v)
        return tuple(tuple(c) for c in out)

    @cached_property
    def topological_order(self) -> tuple[int, ...]:
        """Kahn's order: sources in op order, then children in dependency order.

        Raises ValueError on a cycle (the importers turn it into a GraphFormatError).
        """
        return kahn_order(self.num_ops, self.parents, self.children, range(self.num_ops))

    @cached_property
    def forward_topological_order(self) -> tuple[int, ...]:
        """Kahn's order over the forward ops only (what the placer walks, ddls.md 3.4)."""
        n = self.num_forward
        parents = tuple(tuple(p for p in ps if p < n) for ps in self.parents[:n])
        children = tuple(tuple(c for c in cs if c < n) for cs in self.children[:n])
        return kahn_order(n, parents, children, range(n))

    @cached_property
    def depth(self) -> int:
        """Number of dependencies on the longest path of the DAG."""
        return int(self.op_depth.max()) if self.num_ops else 0

    @cached_property
    def op_depth(self) -> np.ndarray:
        """Per op: number of dependencies on the longest path from any source to it."""
        longest = np.zeros(self.num_ops, dtype=np.int64)
        for v in self.topological_order:
            for p in self.parents[v]:
                longest[v] = max(longest[v], longest[p] + 1)
        longest.setflags(write=False)
        return longest

    @cached_property
    def depth_ddls(self) -> int:
        """ddls' depth (ddls.md 1.3), the paper's table's: the most nodes on a *shortest* path
        from the first source op to any op (the source counts 1). pacml's `depth` (longest
        path, in dependencies) is the node feature; this one is reported beside it."""
        if not self.num_ops:
            return 0
        source = next(v for v in range(self.num_ops) if not self.parents[v])
        nodes = {source: 1}
        frontier = [source]
        while frontier:
            nxt = []
            for u in frontier:
                for v in self.children[u]:
                    if v not in nodes:
                        nodes[v] = nodes[u] + 1
                        nxt.append(v)
            frontier = nxt
        return max(nodes.values())

    # ---- characterisation ----------------------------------------------------------------
    @property
    def step_time_s(self) -> float:
        """Sum of op compute times of one training step (physical seconds)."""
        return float(self.compute_time_s.sum())

    @property
    def sequential_jct_s(self) -> float:
        """Physical time to train the job on one worker: steps x sum of op times."""
        return self.num_training_steps * self.step_time_s

    def equals(self, other: OpGraph) -> bool:
        """Exact equality of every field (used by round-trip tests)."""
        return (
            self.name == other.name
            and self.op_names == other.op_names
            and self.descriptions == other.descriptions
            and self.num_forward == other.num_forward
            and self.num_training_steps == other.num_training_steps
            and all(
                np.array_equal(getattr(self, a), getattr(other, a))
                for a in ("compute_time_s", "activation_bytes", "parameter_bytes", "src", "dst", "size_bytes")
            )
        )


def kahn_order(n: int, parents, children, seeds) -> tuple[int, ...]:
    """Kahn's topological sort, FIFO; raises ValueError naming an op on a cycle."""
    indeg = [len(p) for p in parents]
    queue = [v for v in seeds if indeg[v] == 0]
    order: list[int] = []
    head = 0
    while head < len(queue):
        v = queue[head]
        head += 1
        order.append(v)
        for c in children[v]:
            indeg[c] -= 1
            if indeg[c] == 0:
                queue.append(c)
    if len(order) != n:
        stuck = next(v for v in range(n) if indeg[v] > 0)
        raise ValueError(f"the graph has a cycle through op {stuck}")
    return tuple(order)


def training_graph(
    name: str,
    forward_names: list[str],
    descriptions: list[str],
    forward_time_s: np.ndarray,
    backward_time_s: np.ndarray,
    activation_bytes: np.ndarray,
    parameter_bytes: np.ndarray,
    forward_edges: list[tuple[int, int]],
    last_forward: int,
    num_training_steps: int = 50,
) -> OpGraph:
    """Build the training DAG from a forward graph (ddls.md 1.2).

    The backward twin of forward op i is op n+i, carrying the backward time and the same
    activation and parameter bytes. Forward edge u->v carries A(u); its backward twin
    (n+v)->(n+u) carries A(v); the join edge last_forward -> n+last_forward carries
    A(last_forward).
    """
    n = len(forward_names)
    act = np.asarray(activation_bytes, dtype=np.float64)
    src = [u for u, _ in forward_edges] + [n + v for _, v in forward_edges] + [last_forward]
    dst = [v for _, v in forward_edges] + [n + u for u, _ in forward_edges] + [n + last_forward]
    size = [act[u] for u, _ in forward_edges] + [act[v] for _, v in forward_edges] + [act[last_forward]]
    return OpGraph(
        name=name,
        op_names=tuple(forward_names) + tuple(f"{x}:bwd" for x in forward_names),
        descriptions=tuple(descriptions) * 2,
        compute_time_s=np.concatenate([forward_time_s, backward_time_s]),
        activation_bytes=np.concatenate([act, act]),
        parameter_bytes=np.concatenate([parameter_bytes, parameter_bytes]),
        src=np.asarray(src, dtype=np.int64),
        dst=np.asarray(dst, dtype=np.int64),
        size_bytes=np.asarray(size, dtype=np.float64),
        num_forward=n,
        num_training_steps=num_training_steps,
    )
