"""Read and write PipeDream per-layer profiles (``graph.txt``).

Format (``../shared/pipedream_profiles/README.md``)::

    node4 -- Conv2d(3, 64, kernel_size=(11, 11)) -- forward_compute_time=1.2, backward_compute_time=2.0, activation_size=[1.0; 2.0], parameter_size=3.0
    <TAB>node4 -- node5

Times are milliseconds; this module is the one place they become seconds (`ms_to_s`).
Nodes may appear in any order; ops keep the order of their node lines. A list-valued
activation size is summed. Numbers are plain decimals (``12``, ``0.5``, ``1.5e-3``; no ``_``,
``inf``, ``nan`` or hex), at most `MAX_TIME_MS` for a time and `MAX_BYTES` for a size, and a
graph whose step (all forward and backward time) is zero is refused.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np

from pacml.errors import GraphFormatError
from pacml.graphs.opgraph import OpGraph, training_graph

_VALUE_KEYS = ("forward_compute_time", "backward_compute_time", "activation_size", "parameter_size")
_KV = re.compile(r"\s*(\w+)=(\[[^\]]*\]|[^,]*)\s*(?:,|$)")
_NODE_ID = re.compile(r"^\S+$")
_DECIMAL = re.compile(r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
MAX_TIME_MS = 1e8
"""The longest op time accepted (about 28 hours, in PipeDream's milliseconds)."""
MAX_BYTES = 1e15
"""The largest activation or parameter size accepted (1 PB)."""


def ms_to_s(ms: float) -> float:
    """PipeDream milliseconds to seconds: the project's only such conversion."""
    return ms / 1000.0


def s_to_ms_text(seconds: float) -> str:
    """The shortest decimal text of milliseconds that `ms_to_s` maps back to ``seconds``:
    exactly where a millisecond double does (every time of the paper's profiles), else the
    nearest, one unit in the last place off (division by 1000 skips about 2 % of doubles)."""
    ms = seconds * 1000.0
    up = down = ms
    for _ in range(4):
        for candidate in (up, down):
            if ms_to_s(candidate) == seconds:
                return repr(candidate)
        up, down = math.nextafter(up, math.inf), math.nextafter(down, -math.inf)
    return repr(ms)


def _number(text: str, path: str, lineno: int, key: str) -> float:
    text = text.strip()
    if text.startswith("["):
        if not text.endswith("]"):
            raise GraphFormatError(path, f"{key}: unterminated list {text!r}", lineno)
        items = [t for t in text[1:-1].split(";") if t.strip()]
        if not items:
            raise GraphFormatError(path, f"{key}: empty list", lineno)
        total = float(sum(_number(t, path, lineno, key) for t in items))
        if not total <= MAX_BYTES:
            raise GraphFormatError(path, f"{key}: the list sums to {total:g}, over the limit of {MAX_BYTES:g}", lineno)
        return total
    if not _DECIMAL.fullmatch(text):
        raise GraphFormatError(path, f"{key}: {text[:40]!r} is not a plain decimal number >= 0", lineno)
    value = float(text)
    limit = MAX_TIME_MS if key.endswith("_time") else MAX_BYTES
    if not value <= limit:
        raise GraphFormatError(path, f"{key}: {text[:40]!r} is over the limit of {limit:g}", lineno)
    return value


def _node_number(name: str) -> int:
    m = re.search(r"(\d+)$", name)
    return int(m.group(1)) if m else -1


def parse_pipedream(
    text: str, path: str = "<string>", name: str | None = None, num_training_steps: int = 50
) -> OpGraph:
    """Parse the text of a PipeDream ``graph.txt`` into a training `OpGraph`.

    Raises
    ------
    GraphFormatError
        naming ``path`` and the line: a truncated or malformed line, a bad number, a
        duplicate node, an edge to an unknown node, a cycle, or no nodes at all.
    """
    if isinstance(num_training_steps, bool) or not isinstance(num_training_steps, int) or num_training_steps < 1:
        raise GraphFormatError(path, f"num_training_steps = {num_training_steps!r}: must be an integer >= 1")
    names: list[str] = []
    index: dict[str, int] = {}
    first_node_line = 0
    descriptions: list[str] = []
    values: list[tuple[float, float, float, float]] = []
    edges: list[tuple[str, str, int]] = []
    for lineno, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        if raw.startswith("\t") or raw.startswith(" "):
            parts = raw.strip().split(" -- ")
            if len(parts) != 2 or not all(_NODE_ID.match(p) for p in parts):
                raise GraphFormatError(
                    path, f"malformed edge line {raw.strip()!r} (expected '<TAB>nodeU -- nodeV')", lineno
                )
            edges.append((parts[0], parts[1], lineno))
            continue
        parts = raw.split(" -- ")
        if len(parts) < 3:
            raise GraphFormatError(
                path,
                f"truncated or malformed node line {raw[:80]!r} (expected 'nodeN -- description -- "
                "forward_compute_time=..., backward_compute_time=..., activation_size=..., parameter_size=...')",
                lineno,
            )
        node, desc, kv = parts[0].strip(), " -- ".join(parts[1:-1]).strip(), parts[-1]
        if not _NODE_ID.match(node):
            raise GraphFormatError(path, f"bad node id {node!r}", lineno)
        if node in index:
            raise GraphFormatError(path, f"node {node!r} is defined twice", lineno)
        found = {m.group(1): m.group(2) for m in _KV.finditer(kv) if m.group(0).strip()}
        missing = [k for k in _VALUE_KEYS if k not in found]
        if missing:
            raise GraphFormatError(path, f"node {node!r} lacks {', '.join(missing)}", lineno)
        fwd, bwd, act, par = (_number(found[k], path, lineno, k) for k in _VALUE_KEYS)
        index[node] = len(names)
        first_node_line = first_node_line or lineno
        names.append(node)
        descriptions.append(desc)
        values.append((fwd, bwd, act, par))
    if not names:
        raise GraphFormatError(path, "no node lines found")
    fwd_edges: list[tuple[int, int]] = []
    seen: set[tuple[int, int]] = set()
    for u, v, lineno in edges:
        for endpoint in (u, v):
            if endpoint not in index:
                raise GraphFormatError(path, f"edge {u} -- {v} names unknown node {endpoint!r}", lineno)
        if u == v:
            raise GraphFormatError(path, f"edge {u} -- {v} is a self-loop", lineno)
        key = (index[u], index[v])
        if key in seen:
            raise GraphFormatError(path, f"edge {u} -- {v} appears twice", lineno)
        seen.add(key)
        fwd_edges.append(key)
    arr = np.asarray(values, dtype=np.float64)
    if not arr[:, :2].sum() > 0:
        raise GraphFormatError(
            path, "every forward and backward compute time is zero: a job of this graph takes no time", first_node_line
        )
    has_child = {u for u, _ in fwd_edges}
    sinks = [i for i in range(len(names)) if i not in has_child]
    if not sinks:
        raise GraphFormatError(path, "the graph has a cycle (no sink node)")
    # ddls joins node n (the highest id, which it assumes is the sink) to its backward twin
    last = max(sinks, key=lambda i: (_node_number(names[i]), i))
    graph = training_graph(
        name=name if name is not None else model_name_from_path(path),
        forward_names=names,
        descriptions=descriptions,
        forward_time_s=np.array([ms_to_s(x) for x in arr[:, 0]]),
        backward_time_s=np.array([ms_to_s(x) for x in arr[:, 1]]),
        activation_bytes=arr[:, 2],
        parameter_bytes=arr[:, 3],
        forward_edges=fwd_edges,
        last_forward=last,
        num_training_steps=num_training_steps,
    )
    try:
        _ = graph.topological_order  # computing it raises on a cycle
    except ValueError as exc:
        op = int(str(exc).rsplit(" ", 1)[-1])
        raise GraphFormatError(path, f"the graph has a cycle through {graph.op_names[op]!r}") from None
    return graph


def model_name_from_path(path: str | Path) -> str:
    """``alexnet.txt`` -> ``alexnet``; ``.../vgg16/graph.txt`` -> ``vgg16`` (as ddls)."""
    p = Path(path)
    return p.parent.name if p.name == "graph.txt" else p.stem


def pipedream_file(folder: str | Path, name: str) -> Path | None:
    """Model ``name``'s profile in ``folder``: ``name.txt`` or ``name/graph.txt``; None if neither."""
    for path in (Path(folder) / f"{name}.txt", Path(folder) / name / "graph.txt"):
        if path.is_file():
            return path
    return None


def read_pipedream(path: str | Path, num_training_steps: int = 50, name: str | None = None) -> OpGraph:
    """Read a PipeDream ``graph.txt`` file; see `parse_pipedream`."""
    try:
        text = Path(path).read_text()
    except UnicodeDecodeError:
        raise GraphFormatError(str(path), "not a text file") from None
    return parse_pipedream(text, str(path), name=name, num_training_steps=num_training_steps)


def format_pipedream(graph: OpGraph) -> str:
    """The PipeDream text of ``graph``'s forward half; `parse_pipedream` reads it back exactly."""
    n = graph.num_forward
    lines = []
    for i in range(n):
        lines.append(
            f"{graph.op_names[i]} -- {graph.descriptions[i]} -- "
            f"forward_compute_time={s_to_ms_text(graph.compute_time_s[i])}, "
            f"backward_compute_time={s_to_ms_text(graph.compute_time_s[n + i])}, "
            f"activation_size={graph.activation_bytes[i]!r}, parameter_size={graph.parameter_bytes[i]!r}"
        )
    for u, v in zip(graph.src.tolist(), graph.dst.tolist()):
        if u < n and v < n:
            lines.append(f"\t{graph.op_names[u]} -- {graph.op_names[v]}")
    return "\n".join(lines) + "\n"


def write_pipedream(graph: OpGraph, path: str | Path) -> None:
    Path(path).write_text(format_pipedream(graph))
