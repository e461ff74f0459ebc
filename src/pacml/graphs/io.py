"""The canonical on-disk graph format (JSON) and loading a directory of graphs.

A canonical file holds the full training DAG exactly (floats round-trip through JSON),
so a built-in profile written here reads back bit for bit. A graph directory may mix
canonical ``*.json`` files and PipeDream ``*.txt`` profiles.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from pacml.errors import GraphFormatError
from pacml.graphs.opgraph import OpGraph
from pacml.graphs.pipedream import read_pipedream

FORMAT = "pacml-opgraph"
VERSION = 1


def graph_to_dict(graph: OpGraph) -> dict:
    return {
        "format": FORMAT,
        "version": VERSION,
        "name": graph.name,
        "num_forward": graph.num_forward,
        "num_training_steps": graph.num_training_steps,
        "ops": [
            {
                "name": graph.op_names[i],
                "description": graph.descriptions[i],
                "compute_time_s": float(graph.compute_time_s[i]),
                "activation_bytes": float(graph.activation_bytes[i]),
                "parameter_bytes": float(graph.parameter_bytes[i]),
            }
            for i in range(graph.num_ops)
        ],
        "deps": [[int(u), int(v), float(s)] for u, v, s in zip(graph.src, graph.dst, graph.size_bytes)],
    }


def graph_from_dict(data: dict, path: str = "<dict>") -> OpGraph:
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise GraphFormatError(path, f'not a {FORMAT} file (missing "format": "{FORMAT}")')
    if data.get("version") != VERSION:
        raise GraphFormatError(path, f"unsupported version {data.get('version')!r} (this pacml reads {VERSION})")
    try:
        ops = data["ops"]
        n = int(data["num_forward"])
        deps = data["deps"]
        if len(ops) != 2 * n:
            raise GraphFormatError(path, f"{len(ops)} ops but num_forward={n} (need 2 x num_forward)")
        src = np.array([d[0] for d in deps], dtype=np.int64)
        dst = np.array([d[1] for d in deps], dtype=np.int64)
        if len(src) and (src.min() < 0 or dst.min() < 0 or max(src.max(), dst.max()) >= len(ops)):
            raise GraphFormatError(path, "a dependency names an op index out of range")
        graph = OpGraph(
            name=str(data["name"]),
            op_names=tuple(str(o["name"]) for o in ops),
            descriptions=tuple(str(o.get("description", "")) for o in ops),
            compute_time_s=np.array([o["compute_time_s"] for o in ops], dtype=np.float64),
            activation_bytes=np.array([o["activation_bytes"] for o in ops], dtype=np.float64),
            parameter_bytes=np.array([o["parameter_bytes"] for o in ops], dtype=np.float64),
            src=src,
            dst=dst,
            size_bytes=np.array([d[2] for d in deps], dtype=np.float64),
            num_forward=n,
            num_training_steps=int(data.get("num_training_steps", 50)),
        )
    except (KeyError, TypeError, IndexError, ValueError) as exc:
        if isinstance(exc, GraphFormatError):
            raise
        raise GraphFormatError(path, f"malformed canonical graph: {exc!r}") from None
    for arr in (graph.compute_time_s, graph.activation_bytes, graph.parameter_bytes, graph.size_bytes):
        if not np.all(np.isfinite(arr)) or np.any(arr < 0):
            raise GraphFormatError(path, "times and sizes must be finite and >= 0")
    try:
        _ = graph.topological_order  # computing it raises on a cycle
    except ValueError as exc:
        raise GraphFormatError(path, str(exc)) from None
    return graph


def write_graph(graph: OpGraph, path: str | Path) -> None:
    """Write the canonical JSON file (atomically: a killed writer leaves no half file)."""
    path = Path(path)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(graph_to_dict(graph), indent=1) + "\n")
    tmp.replace(path)


def read_graph(path: str | Path, num_training_steps: int | None = None) -> OpGraph:
    """Read one graph file: canonical ``.json`` or PipeDream ``.txt``."""
    path = Path(path)
    if path.suffix == ".txt":
        return read_pipedream(path, num_training_steps=num_training_steps or 50)
    if path.suffix == ".json":
        try:
            data = json.loads(path.read_text())
        except json.JSONDecodeError as exc:
            raise GraphFormatError(str(path), f"not valid JSON: {exc.msg}", exc.lineno) from None
        graph = graph_from_dict(data, str(path))
        if num_training_steps is not None and num_training_steps != graph.num_training_steps:
            import dataclasses

            graph = dataclasses.replace(graph, num_training_steps=num_training_steps)
        return graph
    raise GraphFormatError(str(path), "unknown graph file type (expected .json or PipeDream .txt)")


def load_graph_dir(
    directory: str | Path, names: tuple[str, ...] | list[str] | None = None, num_training_steps: int | None = None
) -> list[OpGraph]:
    """All graphs in ``directory`` (sorted by name), or only ``names`` if given."""
    directory = Path(directory)
    if not directory.is_dir():
        raise GraphFormatError(str(directory), "graph directory does not exist")
    files = sorted(p for p in directory.iterdir() if p.suffix in (".json", ".txt") and p.is_file())
    by_name: dict[str, Path] = {}
    for p in files:
        by_name.setdefault(p.stem, p)  # .json sorts before .txt: canonical wins
    if names:
        missing = [n for n in names if n not in by_name]
        if missing:
            raise GraphFormatError(str(directory), f"no graph file for {missing}; found {sorted(by_name)}")
        chosen = [by_name[n] for n in names]
    else:
        chosen = [by_name[k] for k in sorted(by_name)]
    if not chosen:
        raise GraphFormatError(str(directory), "no .json or .txt graph files found")
    return [read_graph(p, num_training_steps) for p in chosen]
