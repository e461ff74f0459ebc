"""Checkpoints are data, never code: crafted, truncated and foreign files are named and refused."""

from __future__ import annotations

import os

import pytest
import torch

from pacml.errors import CheckpointError
from pacml.train.checkpoint import checkpoint_config, read_checkpoint


class Evil:
    def __init__(self, sentinel):
        self.sentinel = sentinel

    def __reduce__(self):
        return (os.system, (f"touch {self.sentinel}",))


def test_a_crafted_pickle_is_refused_and_runs_nothing(tmp_path):
    sentinel = tmp_path / "pwned"
    evil = tmp_path / "evil.pt"
    torch.save({"model": Evil(sentinel), "config": {}, "state": {}}, evil)
    with pytest.raises(CheckpointError, match=r"evil\.pt: refused.*nothing in it was run"):
        checkpoint_config(evil)
    assert not sentinel.exists()
    from pacml.cli import main

    assert (
        main(
            [
                "simulate",
                "--graphs",
                str(tmp_path),
                "--policy",
                "pacml",
                "--checkpoint",
                str(evil),
                "--dist",
                "beta_a",
                "--out",
                str(tmp_path / "x.json"),
            ]
        )
        == 2
    )
    assert not sentinel.exists()


def test_truncated_and_foreign_files_are_named(tmp_path, capsys):
    junk = tmp_path / "junk.pt"
    junk.write_bytes(b"not a checkpoint at all")
    with pytest.raises(CheckpointError, match=r"junk\.pt: "):
        read_checkpoint(junk)
    other = tmp_path / "other.pt"
    torch.save({"weights": torch.zeros(2)}, other)
    with pytest.raises(CheckpointError, match=r"other\.pt: not a pacml checkpoint"):
        read_checkpoint(other)
    from pacml.cli import main

    assert (
        main(
            [
                "evaluate",
                "--graphs",
                str(tmp_path),
                "--policy",
                "pacml",
                "--checkpoint",
                str(junk),
                "--dist",
                "beta_a",
                "--seeds",
                "100",
                "--out",
                str(tmp_path / "x.json"),
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert "junk.pt" in err and "Traceback" not in err
