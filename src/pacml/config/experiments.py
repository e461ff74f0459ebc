"""The ``experiments:`` section: named generalisation experiments (`pacml.experiments`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal


@dataclass(frozen=True)
class ExperimentConfig:
    """A named experiment: every policy evaluated in a setting of its own (``overrides``, a
    test pool), beside PAC-ML agents trained there and, where they learnt elsewhere (another
    pool, distribution or the main workflow's setting), the agents under test. Baselines
    that choose (best_fixed, the planners) choose on the setting's own validation seeds.
    Outputs go to ``results/experiments/<name>/``; a ``sweep`` makes one setting per value,
    ``results/experiments/<name>/<value>/``, and a table and figure across them."""

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
    train_overrides: dict[str, Any] = field(default_factory=dict)
    """Dotted keys for the training pool alone, on top of ``overrides``: e.g. another window of
    an arrival trace (``trace.first_row``), so the agents under test never see the test's. In
    a sweep, setting the sweep's own key here makes every setting's training pool the same:
    one set of agents (trained in the first setting's folder) acts in all of them."""
    sweep: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    """One dotted key and its values, e.g. ``{cluster.placement: [ddls, compact]}``: each value
    is a setting (the overrides plus that key), run and summarised like an experiment of its
    own, ``<name>/<value>``; ``results/experiments/<name>/summary.csv`` holds them all."""
    train_in: Literal["experiment", "main"] = "experiment"
    """Where the agents under test learn: ``experiment``, on the training pool with the
    overrides (they are the reference itself unless train_models or train_distribution
    differ from the test's); ``main``, the main workflow's agents as they are (the paper's
    setting), evaluated in the experiment's."""
    reference: bool = True
    """Also train agents in the experiment's own setting (the ``pacml`` rows); false saves
    their training where only the agents under test and the baselines are asked about."""
    reference_settings: tuple[Any, ...] = ()
    """In a sweep with ``reference: true``, the values whose settings train reference agents
    (empty: every setting), e.g. all but a cluster too large to train on here."""
    setting_overrides: dict[str, dict[str, Any]] = field(default_factory=dict)
    """In a sweep, dotted keys for one setting alone, by its value as YAML writes it, on top of
    ``overrides``: e.g. ``{16: {imitation.episodes_per_iteration: 1}}`` in a sweep of
    ``cluster.servers_per_rack``, a lighter teacher where a cluster's episodes are long."""
