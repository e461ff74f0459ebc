"""The report's front page: our summary Markdown as reStructuredText, by hand and through docutils."""

from __future__ import annotations

from pathlib import Path

from pacml.config import load_config
from pacml.report import front_page, markdown_tables_to_rst, run_description

CONFIG = Path(__file__).resolve().parents[1] / "config.yaml"
SUMMARY = """Blocking rate, mean ± 95 % CI (n per cell in brackets).

| policy | beta_a | beta_d |
|---|---|---|
| pacml | 0.180 ± 0.008 (9) | 0.099 ± 0.007 (9) |
| best_fixed's degree |  | 4 |

### What they show
*Italic* is not ours; `cluster.placement` is code.
- ddls: 0.333
- compact: 0.250
"""


def test_markdown_tables_become_list_tables():
    assert markdown_tables_to_rst(SUMMARY) == (
        "Blocking rate, mean ± 95 % CI (n per cell in brackets).\n"
        "\n"
        ".. list-table::\n"
        "   :header-rows: 1\n"
        "\n"
        "   * - policy\n"
        "     - beta_a\n"
        "     - beta_d\n"
        "   * - pacml\n"
        "     - 0.180 ± 0.008 (9)\n"
        "     - 0.099 ± 0.007 (9)\n"
        "   * - best_fixed's degree\n"
        "     - \\ \n"
        "     - 4\n"
        "\n"
        "What they show\n"
        "--------------\n"
        "\n"
        "\\*Italic\\* is not ours; ``cluster.placement`` is code.\n"
        "\n"
        "- ddls: 0.333\n"
        "- compact: 0.250\n"
    )


def test_the_front_page_renders_without_a_docutils_warning():
    from docutils.core import publish_parts

    page = front_page("pacml: a run", run_description(load_config(CONFIG, ["workflow.scale=smoke"])), SUMMARY)
    html = publish_parts(page, writer="html", settings_overrides={"halt_level": 2})["html_body"]
    assert "<td>pacml</td>" in html and "<td>0.099 ± 0.007 (9)</td>" in html
    assert "Scale <strong>smoke</strong>" in html and "1 test seed per training seed" in html
    assert "<li>ddls: 0.333</li>" in html and '<tt class="docutils literal">cluster.placement</tt>' in html
