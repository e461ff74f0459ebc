"""The few exceptions a user sees. Each names the file, line or key at fault."""

from __future__ import annotations


class PacmlError(Exception):
    """Base class of every user-facing pacml error."""


class ConfigError(PacmlError, ValueError):
    """A config key is unknown, or its value has the wrong type or range.

    The message always names the dotted key, the offending value and the file.
    """

    def __init__(self, key: str, value: object, problem: str, source: str = "<defaults>"):
        self.key, self.value, self.problem, self.source = key, value, problem, source
        super().__init__(f"{source}: config key '{key}' = {shorten(value)}: {problem}")


def shorten(value: object, limit: int = 200) -> str:
    """``repr(value)`` cut to ``limit`` characters (a whole file must never fill an error)."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


class FileFormatError(PacmlError, ValueError):
    """An input file is malformed; the message names the file and, where known, the line."""

    def __init__(self, path: str, problem: str, line: int | None = None):
        self.path, self.line = path, line
        where = f"{path}:{line}" if line is not None else str(path)
        super().__init__(f"{where}: {problem}")


class GraphFormatError(FileFormatError):
    """A graph file is malformed."""


class TraceFormatError(FileFormatError):
    """An arrival trace is malformed."""


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


class TrainingLockedError(PacmlError, RuntimeError):
    """Another live process is training into the same folder; the message names it and how to stop it."""

    def __init__(self, folder, owner: dict):
        self.folder, self.owner = str(folder), owner
        super().__init__(
            f"{folder}: another trainer holds this folder (pid {owner.get('pid')} on {owner.get('host')}, "
            f"since {owner.get('started')}); wait for it, or stop it (kill {owner.get('pid')}) and rerun: "
            "the rerun resumes from its last checkpoint"
        )


class ProfileError(PacmlError, ValueError):
    """A model cannot be profiled (unknown, untraceable, or its inputs do not fit); the
    message names the model (or the option) and, where known, the module or layer at fault."""

    def __init__(self, model: str, problem: str):
        self.model = model
        super().__init__(f"{model}: {problem}")
