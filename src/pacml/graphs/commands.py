"""File-level graph commands behind ``pacml graphs ...`` and the workflow's graph rules."""

from __future__ import annotations

import csv
from pathlib import Path

from pacml.errors import GraphFormatError
from pacml.graphs.io import read_graph, write_graph
from pacml.graphs.pipedream import model_name_from_path, read_pipedream, write_pipedream
from pacml.graphs.summary import SUMMARY_COLUMNS, summarise


def pipedream_files(directory: str | Path) -> list[Path]:
    """PipeDream profiles in ``directory``: ``*.txt`` files and ``*/graph.txt``, sorted."""
    directory = Path(directory)
    if not directory.is_dir():
        raise GraphFormatError(str(directory), "PipeDream profile directory does not exist")
    files = sorted(p for p in directory.glob("*.txt") if p.name != "graph.txt")
    files += sorted(directory.glob("*/graph.txt"))
    if not files:
        raise GraphFormatError(str(directory), "no PipeDream profiles (*.txt or */graph.txt) found")
    return files


def import_pipedream_dir(
    directory: str | Path,
    out: str | Path,
    num_training_steps: int = 50,
    names: list[str] | tuple[str, ...] | None = None,
) -> list[Path]:
    """Convert every (or the named) PipeDream profile in ``directory`` to canonical JSON in ``out``."""
    files = pipedream_files(directory)
    if names:
        by_name = {model_name_from_path(f): f for f in files}
        missing = [n for n in names if n not in by_name]
        if missing:
            raise GraphFormatError(str(directory), f"no PipeDream profile for {missing}; found {sorted(by_name)}")
        files = [by_name[n] for n in names]
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for f in files:
        graph = read_pipedream(f, num_training_steps=num_training_steps)
        target = out / f"{graph.name}.json"
        write_graph(graph, target)
        written.append(target)
    return written


def profile_models(
    models: list[str] | tuple[str, ...],
    out: str | Path,
    num_training_steps: int = 50,
    fmt: str = "json",
    inputs: list[str] | tuple[str, ...] = (),
    batch: int | None = None,
    precision: str = "fp32",
) -> list[Path]:
    """Profile ``models`` (`pacml.graphs.models`: 'paper' for the paper's five, 'modern' for
    today's five) into ``out``: ``<name>.json`` (canonical, ``fmt='json'``) or ``<name>.txt``
    (PipeDream, ``fmt='pipedream'``); ``inputs`` are input specs (SHAPE[:DTYPE]) for every
    model, ``batch`` replaces their first dimension, ``precision`` is fp32, tf32 or bf16."""
    from pacml.graphs.models import MODERN_MODELS, PAPER_MODELS, model_name, parse_input_spec
    from pacml.graphs.profiler import profile_model

    if fmt not in ("json", "pipedream"):
        raise GraphFormatError(str(out), f"unknown graph format {fmt!r}; known: json, pipedream")
    groups = {"all": PAPER_MODELS, "paper": PAPER_MODELS, "modern": MODERN_MODELS}
    names = [n for m in models for n in groups.get(m, (m,))]
    specs = tuple(parse_input_spec(t) for t in inputs) or None
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name in dict.fromkeys(names):
        graph = profile_model(name, num_training_steps, specs, batch, precision)
        if fmt == "json":
            target = out / f"{model_name(name)}.json"
            write_graph(graph, target)
        else:
            target = out / f"{model_name(name)}.txt"
            write_pipedream(graph, target)
        written.append(target)
    return written


def _expand(paths: list[str] | list[Path]) -> list[Path]:
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            out += sorted(q for q in p.iterdir() if q.suffix in (".json", ".txt"))
        else:
            out.append(p)
    return out


def summary_rows(paths: list[str] | list[Path], num_training_steps: int | None = None) -> list[dict]:
    return [summarise(read_graph(p, num_training_steps)) for p in _expand(paths)]


def summary_table(
    paths: list[str] | list[Path], csv_path: str | Path | None = None, num_training_steps: int | None = None
) -> str:
    """Characterise graphs; write a CSV if asked; return a printable table."""
    rows = summary_rows(paths, num_training_steps)
    if csv_path is not None:
        Path(csv_path).parent.mkdir(parents=True, exist_ok=True)
        with open(csv_path, "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=SUMMARY_COLUMNS)
            w.writeheader()
            w.writerows(rows)
    head = ["model", "ops", "deps", "depth", "JCT_seq_s", "max_op_s", "sum_mem_B", "sum_dep_B"]
    lines = ["  ".join(f"{h:>14}" for h in head)]
    for r in rows:
        vals = [
            r["model"],
            r["num_ops"],
            r["num_deps"],
            r["depth"],
            f"{r['sequential_jct_s']:.6g}",
            f"{r['max_op_time_s']:.4g}",
            f"{r['total_op_memory_bytes']:.4g}",
            f"{r['total_dep_size_bytes']:.4g}",
        ]
        lines.append("  ".join(f"{v!s:>14}" for v in vals))
    return "\n".join(lines)
