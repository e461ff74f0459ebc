"""Read an arrival trace (config section ``trace``): a CSV, one row a job, with a submit-time
column and a duration column named in the config. Every problem names the file and the line.

Submit times are seconds (numbers) or date-times (``YYYY-MM-DD HH:MM:SS``, read as UTC);
durations are seconds > 0. Rows must be in submit order unless ``trace.sort`` is true.
"""

from __future__ import annotations

import csv
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from pacml.config import TraceConfig
from pacml.errors import ConfigError, TraceFormatError
from pacml.sim.trace import Trace


def read_trace(cfg: TraceConfig, base_dir: str | Path = ".") -> Trace:
    """The jobs of ``cfg.path`` (relative to ``base_dir``) kept by ``cfg.filter``, in submit order."""
    if cfg.path is None:
        raise ConfigError("trace.path", None, "no trace file configured")
    path = Path(base_dir) / cfg.path
    if not path.is_file():
        raise ConfigError("trace.path", cfg.path, f"no such file ({path.resolve()})")
    name = str(path)
    submit, duration = [], []
    with path.open(newline="") as fh:
        reader = csv.DictReader(fh)
        columns = reader.fieldnames or []
        for key, column in (
            ("trace.submit_column", cfg.submit_column),
            ("trace.duration_column", cfg.duration_column),
            *((f"trace.filter.{c}", c) for c in cfg.filter),
        ):
            if column not in columns:
                raise ConfigError(key, column, f"{name} has no such column; its header is {columns}")
        for row in reader:
            line = reader.line_num
            if any(row[c] != v for c, v in cfg.filter.items()):
                continue
            t = _submit_s(row[cfg.submit_column], name, line, cfg.submit_column)
            d = _number(row[cfg.duration_column], name, line, cfg.duration_column)
            if not d > 0:
                raise TraceFormatError(name, f"{cfg.duration_column} = {d}: a job's duration must be > 0 s", line)
            if submit and t < submit[-1] and not cfg.sort:
                raise TraceFormatError(
                    name,
                    f"{cfg.submit_column} goes back in time ({t} s after {submit[-1]} s); "
                    "sort the file or set trace.sort: true",
                    line,
                )
            submit.append(t)
            duration.append(d)
    if len(submit) < 2:
        where = f" with {cfg.filter}" if cfg.filter else ""
        raise TraceFormatError(name, f"{len(submit)} job(s){where}; a trace needs 2 or more")
    s, d = np.array(submit), np.array(duration)
    if cfg.sort:
        order = np.argsort(s, kind="stable")
        s, d = s[order], d[order]
    s.setflags(write=False)
    d.setflags(write=False)
    return Trace(s, d, name)


def _number(text: str | None, name: str, line: int, column: str) -> float:
    try:
        value = float(text)
    except (TypeError, ValueError):
        raise TraceFormatError(name, f"{column} = {text!r} is not a number", line) from None
    if not np.isfinite(value):
        raise TraceFormatError(name, f"{column} = {text!r} is not a finite number", line)
    return value


def _submit_s(text: str | None, name: str, line: int, column: str) -> float:
    try:
        value = float(text)
    except (TypeError, ValueError):
        try:
            stamp = datetime.strptime((text or "").strip(), "%Y-%m-%d %H:%M:%S")
        except ValueError:
            raise TraceFormatError(
                name, f"{column} = {text!r} is neither seconds nor a date-time YYYY-MM-DD HH:MM:SS", line
            ) from None
        return stamp.replace(tzinfo=UTC).timestamp()
    if not (np.isfinite(value) and value >= 0):
        raise TraceFormatError(name, f"{column} = {text!r}: a submit time must be a finite number >= 0", line)
    return value
