"""The ``experiments:`` section: named generalisation experiments (`pacml.experiments`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ExperimentConfig:
    """A generalisation experiment: PAC-ML agents trained on one job pool (and β
    distribution) are evaluated on a test pool, next to agents trained on that pool and
    distribution and the baselines there (best_fixed and the planners chosen on the test
    pool's own validation seeds). Outputs go to ``results/experiments/<name>/``."""

    description: str = ""
    """One sentence for the report, the tables and the README."""
    train_models: tuple[str, ...] = ()
    """The pool the agents under test learn on: built-in names (`pacml graphs profile`: the
    paper's five, gpt2, bert_base, any torchvision model) or ``pipedream:NAME`` for
    NAME.txt in graphs.pipedream_dir; empty: graphs.models as the workflow reads them."""
    test_models: tuple[str, ...] = ()
    """The pool every policy is evaluated on (same names); empty: the training pool."""
    train_distribution: str | None = None
    """What the agents under test learn on: None, each test distribution's own; a name (a
    mixture, say): one set of agents for every test distribution."""
    distributions: tuple[str, ...] = ("beta_a",)
    """Test distributions (names under ``distributions:``)."""
    baselines: tuple[str, ...] = ("para_max", "best_fixed")
    """Baselines run on the test pool (as workflow.baselines)."""
    overrides: dict[str, Any] = field(default_factory=dict)
    """Dotted config keys applied to everything in this experiment, e.g. ``agent.feature_scales:
    fixed``; agents whose config and pool equal the main workflow's are reused from it."""
