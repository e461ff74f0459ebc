"""Job graphs: the typed model, PipeDream import/export, the canonical format, characterisation."""

from pacml.graphs.io import load_graph_dir, read_graph, write_graph
from pacml.graphs.opgraph import OpGraph
from pacml.graphs.pipedream import read_pipedream, write_pipedream
from pacml.graphs.summary import summarise

__all__ = ["OpGraph", "load_graph_dir", "read_graph", "read_pipedream", "summarise", "write_graph", "write_pipedream"]
