from pathlib import Path

from pacml.config import config_from_dict
from pacml.report import front_page, run_description, write_report
from pacml.workflow import setup_job

sm = snakemake  # noqa: F821 - injected by Snakemake
setup_job(sm)
page = front_page(sm.params.title, run_description(config_from_dict(sm.config, "config.yaml")),
                  Path(sm.input.summary_md).read_text())  # fmt: skip
write_report(sm.params.snakefile, sm.config, list(sm.input), sm.output[0], page)
