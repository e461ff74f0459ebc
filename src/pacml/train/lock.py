"""One trainer per output folder: an exclusive lock with an owner record.

A training process that outlives its Snakemake (``kill -9`` of the parent) keeps its lock, so
a rerun in the same folder is refused with the owner's host, pid and start time instead of
writing the same ``last.pt`` and MLflow run as the survivor. The lock is an ``flock`` on
``<folder>/.trainer.lock``: the kernel releases it when its process dies, however it dies, so
a stale lock never blocks a rerun. The file's text is the owner record (JSON), which the
MLflow run carries too (tags ``owner.host``, ``owner.pid``, ``owner.started``).
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pacml.errors import TrainingLockedError
from pacml.tracking import this_process

LOCK_NAME = ".trainer.lock"


def read_owner(folder: str | Path) -> dict:
    """The owner record of a folder's lock ({} if none was written)."""
    try:
        return json.loads((Path(folder) / LOCK_NAME).read_text() or "{}")
    except (OSError, ValueError):
        return {}


@contextmanager
def training_lock(folder: str | Path) -> Iterator[dict]:
    """Hold ``folder``'s trainer lock for the block; yield the owner record. Raises
    `TrainingLockedError` if another live process holds it. Re-entrant in one process (a
    job's lock covers the trainings it runs in the same folder)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    fd = os.open(folder / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            owner = read_owner(folder)
            if owner.get("pid") == os.getpid() and owner.get("host") == socket.gethostname():
                yield owner  # this process holds it already
                return
            raise TrainingLockedError(folder, owner) from None
        owner = this_process()
        os.ftruncate(fd, 0)
        os.write(fd, json.dumps(owner).encode())
        try:
            yield owner
        finally:
            os.ftruncate(fd, 0)
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
