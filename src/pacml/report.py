"""The Snakemake HTML report of a finished run."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path


def write_report(snakefile: str, config: dict, targets: list[str], out_html: str | Path) -> None:
    """The Snakemake report of ``targets`` for this run's exact config (overrides kept)."""
    import yaml

    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as fh:
        yaml.safe_dump(dict(config), fh)
    cmd = [
        sys.executable,
        "-m",
        "snakemake",
        "--snakefile",
        str(snakefile),
        "--directory",
        ".",
        "--report",
        str(out_html),
        "--nolock",
        "--configfile",
        fh.name,
        "--cores",
        "1",
        *targets,
    ]
    try:
        subprocess.run(cmd, check=True)
    finally:
        Path(fh.name).unlink()
