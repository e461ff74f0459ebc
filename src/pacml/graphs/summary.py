"""Per-graph characterisation: the table of paper.md section 3."""

from __future__ import annotations

from pacml.graphs.opgraph import OpGraph

SUMMARY_COLUMNS = (
    "model",
    "num_ops",
    "num_deps",
    "depth",
    "depth_ddls",
    "sequential_jct_s",
    "max_op_time_s",
    "total_op_memory_bytes",
    "max_op_memory_bytes",
    "total_dep_size_bytes",
    "max_dep_size_bytes",
    "num_training_steps",
)


def summarise(graph: OpGraph) -> dict[str, float | int | str]:
    """One row of the characterisation table (physical seconds, bytes).

    ``depth`` is the number of dependencies on the longest path of the training DAG (pacml's
    node feature); ``depth_ddls`` the most nodes on a shortest path from the first source, the
    paper's table's definition (44 / 30 / 60 / 102 / 80 on its five PipeDream graphs);
    ``sequential_jct_s`` = training steps x sum of all op times; ``max_op_time_s`` is
    that of one op in one step.
    """
    return {
        "model": graph.name,
        "num_ops": graph.num_ops,
        "num_deps": graph.num_deps,
        "depth": graph.depth,
        "depth_ddls": graph.depth_ddls,
        "sequential_jct_s": graph.sequential_jct_s,
        "max_op_time_s": float(graph.compute_time_s.max()),
        "total_op_memory_bytes": float(graph.memory_bytes.sum()),
        "max_op_memory_bytes": float(graph.memory_bytes.max()),
        "total_dep_size_bytes": float(graph.size_bytes.sum()),
        "max_dep_size_bytes": float(graph.size_bytes.max()) if graph.num_deps else 0.0,
        "num_training_steps": graph.num_training_steps,
    }
