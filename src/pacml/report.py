"""The Snakemake HTML report of a finished run, with a front page that shows its summary."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

FRONT_PAGE_ENV = "PACML_REPORT_FRONT_PAGE"
"""The Snakefile's ``report:`` page is this variable's file when set (else the static
workflow/report/workflow.rst): how `write_report` hands Snakemake a page it wrote."""


def markdown_tables_to_rst(markdown: str) -> str:
    """Our summary Markdown (paragraphs, ``### `` headings and pipe tables) as reStructuredText:
    each table a ``list-table`` with its first row as the header."""
    out: list[str] = []
    rows: list[list[str]] = []

    def flush() -> None:
        if rows:
            out.extend([".. list-table::", "   :header-rows: 1", ""])
            for row in rows:
                out.extend(f"   {'*' if i == 0 else ' '} - {cell}" for i, cell in enumerate(row))
            out.append("")
            rows.clear()

    for line in markdown.splitlines():
        stripped = line.strip()
        if stripped.startswith("|"):
            cells = [c.strip() for c in stripped.strip("|").split("|")]
            if not all(set(c) <= set("-: ") for c in cells):  # not the |---| separator
                rows.append([_inline(c) or r"\ " for c in cells])
            continue
        flush()
        if not stripped and out and not out[-1]:
            continue  # one blank line between blocks
        if stripped.startswith("#"):
            title = stripped.lstrip("#").strip()
            out.extend([title, "-" * len(title), ""])
            continue
        if stripped.startswith("- ") and out and out[-1] and not out[-1].startswith("- "):
            out.append("")  # a list starts after a blank line
        out.append(_inline(stripped))
    flush()
    return "\n".join(out) + "\n"


def _inline(text: str) -> str:
    """Markdown's inline marks as rst: `code` as ``code``, a literal * escaped."""
    return re.sub(r"`([^`]+)`", r"``\1``", text.replace("*", r"\*"))


def front_page(title: str, description: str, summary_md: str) -> str:
    """The report's front page: a title, what ran, and the summary tables."""
    return "\n".join([title, "=" * len(title), "", description.strip(), "", markdown_tables_to_rst(summary_md)])


def write_report(
    snakefile: str, config: dict, targets: list[str], out_html: str | Path, front_page_rst: str | None = None
) -> None:
    """The Snakemake report of ``targets`` for this run's exact config (overrides kept), with
    ``front_page_rst`` as its front page."""
    import yaml

    with tempfile.TemporaryDirectory() as tmp:
        configfile = Path(tmp) / "config.yaml"
        configfile.write_text(yaml.safe_dump(dict(config)))
        env = dict(os.environ)
        if front_page_rst is not None:
            page = Path(tmp) / "front_page.rst"
            page.write_text(front_page_rst)
            env[FRONT_PAGE_ENV] = str(page)
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
            str(configfile),
            "--cores",
            "1",
            *targets,
        ]
        subprocess.run(cmd, check=True, env=env)


def run_description(cfg) -> str:
    """What a run of config ``cfg`` (a `pacml.config.Config`) did, in a paragraph of rst."""
    w = cfg.workflow
    n_train, n_test = len(w.train_seeds), len(w.test_seeds)
    return (
        f"Scale **{w.scale}**, graphs **{cfg.graphs.source}** ({', '.join(cfg.graphs.models)}), "
        f"distributions {', '.join(w.distributions)}. PAC-ML is trained with {_count(n_train, 'seed')}; "
        f"every policy (PAC-ML, {', '.join(w.baselines)}) is evaluated on {_count(n_test, 'test seed')} "
        f"per training seed, so a cell below is a mean over up to {_count(n_train * n_test, 'episode')}. "
        "The blocking rate is the share of arrived jobs that are blocked: rejected, unplaceable, or "
        "over their JCT requirement (the README defines every policy and metric)."
    )


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"
