"""The few exceptions a user sees. Each names the file, line or key at fault."""

from __future__ import annotations


class PacmlError(Exception):
    """Base class of every user-facing pacml error."""


class ConfigError(PacmlError, ValueError):
    """A config key is unknown, or its value has the wrong type or range.

    The message always names the dotted key, the offending value and the file.
    """

    def __init__(self, key: str, value: object, problem: str, source: str = "<defaults>"):
        self.key, self.value, self.source = key, value, source
        super().__init__(f"{source}: config key '{key}' = {value!r}: {problem}")


class GraphFormatError(PacmlError, ValueError):
    """A graph file is malformed; the message names the file and, where known, the line."""

    def __init__(self, path: str, problem: str, line: int | None = None):
        self.path, self.line = path, line
        where = f"{path}:{line}" if line is not None else str(path)
        super().__init__(f"{where}: {problem}")


class InfeasibleClusterError(PacmlError, ValueError):
    """The cluster cannot run the workload at all (e.g. an op larger than a worker's memory)."""


class UnknownNameError(PacmlError, KeyError):
    """An unknown policy, distribution or model name."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0])


class CheckpointError(PacmlError, ValueError):
    """A checkpoint cannot be used (truncated, foreign, or holding more than tensors and plain
    data); the message names the file and says what to do."""

    def __init__(self, path, problem: str):
        self.path = str(path)
        super().__init__(f"{path}: {problem}")
