"""Config sections of the decision makers: the agent, PPO, the planners, imitation."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class AgentConfig:
    """The PAC-ML graph network (paper.md 5; defaults are the paper's tuned sizes)."""

    message_dim: int = 32
    """out_features_msg: size of a message (half from the sender, half from the edge)."""
    hidden_dim: int = 64
    """out_features_hidden: node embedding after message-passing round 1."""
    node_dim: int = 16
    """out_features_node: node embedding after the last round."""
    graph_dim: int = 8
    """out_features_graph: embedding of the global (job, cluster, mask) features."""
    num_rounds: int = 2
    """Message-passing rounds (>= 2)."""
    activation: Literal["relu", "tanh", "elu", "leaky_relu"] = "relu"
    """aggregator_activation and the head's activation."""
    head_hiddens: tuple[int, ...] = (64, 64)
    """Hidden layers of the logit and value heads. The paper's PPO used one layer of 17;
    two of 64 train faster here (documented deviation)."""
    edge_layernorm: bool = True
    """LayerNorm over the 2 edge features, as ddls (B24: it washes most edge information
    out)."""
    separate_critic: bool = True
    """The critic has its own graph network (RLlib vf_share_layers=False)."""
    init_degree_biases: tuple[float, ...] = (0.0,)
    """Starts of training: with bias b, degree a's initial logit is b x a / max_degree (0: no
    preference; positive: near maximum parallelisation, the canonical default). Several values
    train one agent from each and keep the best by validation (the test seeds never choose):
    the PPO-only policies have more than one local optimum here (docs/agent.md), e.g. [0.0, 3.0]."""
    actor_ensemble: int = 1
    """Extension (with imitation): the agent acts on the mean probabilities of this many actors,
    the weights of the imitation's best iterations by validation (a snapshot ensemble, Huang et
    al. 2017; no extra training). One student's greedy policy swings between iterations, and an
    episode can tip into runs of needless rejections that another iteration avoids (docs/agent.md);
    averaging damps that. 1: one actor, the best iteration (the paper's single network)."""
    lookahead_features: bool = False
    """Extension beyond the paper: also show, per degree, whether the first-fit placer can
    place the job now and whether its exact JCT then meets the requirement (the paper's
    agent sees only the optimistic mask, ddls B9). false reproduces the paper's inputs."""
    feasible_mask: bool = False
    """Extension (ddls B9): the agent may choose only degrees that the placer can place now and
    whose exact JCT then meets the requirement, or 0 (block the job): a degree that would block
    the job anyway is not offered, so a policy cannot learn "play 2" and block the jobs 2 is too
    slow for. A masked degree blocks exactly like 0, so imitation moves its target there.
    false: the paper's optimistic mask (every placeable degree up to the free workers)."""
    shape_features: bool = False
    """Extension: also show what a planner reads off the cluster (per-degree JCT over the
    requirement, free fraction per communication group and rack, workers freed soon by
    pending departures, episode time left; `pacml.env.features`). false: the paper's inputs."""
    load_feature: bool = False
    """Extension: also show the episode's offered load (log2 of it: 0 at load 1), so one agent
    can act at every load (trained with ``workload.offered_load_range``). false: the paper's
    inputs."""
    job_length_features: bool = False
    """Extension for trace arrivals (each job trains for its own steps): the sequential JCT,
    acceptable JCT and training-steps features are the arriving job's own, not its graph's.
    Without a trace the two are equal; false: the graph's (as the paper's agent reads them)."""
    feature_scales: Literal["pool", "fixed"] = "pool"
    """How a job's sizes become features. pool: min-max over the job pool in use (the paper's;
    the same job reads differently in another pool). fixed: log10 of its seconds, bytes and
    counts mapped linearly from the ranges below to [0, 1] (values outside go beyond), and the
    pending-release windows in units of the job's own sequential JCT: a job's features are
    the same in every pool, so an agent can act on jobs it never saw (`pacml.env.features`).
    The ranges are part of the agent's config, so its checkpoint carries them."""
    log10_seconds: tuple[float, ...] = (0.0, 6.0)
    """fixed: log10 range of simulator seconds (sequential and acceptable JCT): 1 s .. 11.6 days."""
    log10_bytes: tuple[float, ...] = (6.0, 12.0)
    """fixed: log10 range of a job's total op memory and total dependency bytes: 1 MB .. 1 TB."""
    log10_counts: tuple[float, ...] = (0.0, 4.0)
    """fixed: log10 range of a job's ops, dependencies and training steps: 1 .. 10,000."""


@dataclass(frozen=True)
class PPOConfig:
    """Masked PPO, CleanRL-style (paper.md 5 gives the tuned RLlib values)."""

    total_timesteps: int = 400_000
    """Environment decisions over the whole training run (after imitation: of fine-tuning;
    0 keeps the imitated agent)."""
    num_envs: int = 8
    """Synchronous environments, each its own seeded episode stream."""
    num_steps: int = 250
    """Decisions per environment per rollout (250 divides the 1000-decision episode, so
    checkpoints fall on episode boundaries and resume exactly)."""
    learning_rate: float = 2.785e-4
    """Adam step size (paper's tuned PPO value)."""
    anneal_lr: bool = True
    """Linearly anneal the learning rate to 0 over training."""
    gamma: float = 0.997
    """Discount (paper's tuned value)."""
    gae_lambda: float = 0.95
    """GAE lambda (RLlib's default 1.0 in the paper; 0.95 is CleanRL's and trains steadier)."""
    num_minibatches: int = 8
    """Minibatches per epoch."""
    update_epochs: int = 4
    """Epochs over each rollout (the paper's RLlib used 50 SGD iterations)."""
    norm_adv: bool = True
    """Normalise advantages per minibatch."""
    clip_coef: float = 0.18
    """Policy ratio clip (paper's clip_param)."""
    clip_vloss: bool = True
    """Clip the value update around the old values."""
    vf_clip_coef: float = 10.0
    """Value clip range (the paper's vf_clip_param 128.8 is in return units; returns here
    are scaled by reward_scale)."""
    ent_coef: float = 0.003
    """Entropy bonus (paper's tuned value)."""
    vf_coef: float = 0.5
    """Value loss weight (paper's value)."""
    max_grad_norm: float = 1.5
    """Global gradient-norm clip (paper's grad_clip)."""
    target_kl: float | None = None
    """Stop an update's epochs early when the approximate KL exceeds this (None: never)."""
    reward_scale: float = 0.1
    """Rewards (+1 accepted, -1 blocked) are multiplied by this before learning."""
    validation_interval: int = 10
    """Run one greedy validation episode every this many updates (and after the last)."""
    validation_seed: int = 1799
    """Episode seed of validation (the paper's test_seed); never a training or test seed.
    After imitation, validation is the mean over workflow.validation_seeds instead."""
    torch_threads: int = 1
    """torch.set_num_threads for training."""


@dataclass(frozen=True)
class PlanningConfig:
    """Look-ahead policies over a forked simulator (``rollout``, ``rollout_clairvoyant``) and
    the planner that teaches the agent (``agent.imitation``)."""

    horizon: int = 150
    """H: later arrivals simulated after each candidate degree."""
    num_futures: int = 8
    """K: futures sampled from the workload per decision (common to every candidate degree);
    ``rollout_clairvoyant`` uses the one true future instead."""
    base_policy: str = "best_fixed"
    """Policy of the later arrivals in a continuation: para_max, para_min, sequential, fixed-K,
    best_fixed (the distribution's best fixed degree, chosen on workflow.validation_seeds), or
    tuned (of best_fixed's three best degrees, the one whose rollout blocks fewest jobs on
    workflow.validation_seeds)."""
    extra_bases: tuple[str, ...] = ()
    """Further base policies (para_max, para_min, sequential, fixed-K): a degree's score is the
    fewest mean blocked jobs over the base policy and these, each on the same K futures (rollout
    with several base heuristics, which improves on each of them, e.g. ``[para_max]`` where
    maximum parallelisation wins at low load); ties still go to the base policy's degree. ()
    plans with the base policy alone."""
    tie_break: Literal["smaller", "base"] = "base"
    """Among degrees with equally few blocked jobs: the smaller degree, or the base policy's
    degree when it is among them (the rollout-improvement guarantee needs ``base``)."""


@dataclass(frozen=True)
class TeacherConfig:
    """One more planner to learn from (``imitation.alternative_teachers``)."""

    base_policy: str = "tuned"
    """As imitation.teacher_base_policy; ``tuned`` is then tuned at this teacher's H and K."""
    horizon: int | None = None
    """Its H (None: planning.horizon)."""
    futures: int | None = None
    """Its K (None: planning.num_futures)."""


@dataclass(frozen=True)
class ImitationConfig:
    """DAgger from the ``rollout`` planner before PPO (`pacml.train.imitation`)."""

    iterations: int = 0
    """DAgger iterations before PPO; 0 trains with PPO alone (the paper's method)."""
    episodes_per_iteration: int = 2
    """Training episodes played and labelled by the teacher per iteration."""
    teacher_share_decay: float = 0.5
    """The teacher plays the first iteration; its share of the degrees played is then
    multiplied by this each iteration (the student plays the rest)."""
    epochs: int = 4
    """Passes over the aggregated labels per iteration."""
    minibatch_size: int = 256
    """Labels per gradient step."""
    learning_rate: float = 1e-3
    """Adam step size of the imitation phase (the actor only)."""
    temperature: float = 0.0
    """Half the student's target is on the teacher's choice, half is softmax(-score /
    temperature) over the valid degrees, a score being the teacher's mean blocked jobs over its
    futures. 0: uniform over the exactly tied best degrees (softer targets did worse on beta_a,
    docs/agent.md)."""
    loss: Literal["cross_entropy", "score_regression"] = "cross_entropy"
    """What the student learns from the teacher. cross_entropy: its softmax against the target
    above (the teacher's choice and its best degrees). score_regression: its outputs, as minus
    each degree's blocked jobs, regress the teacher's scores (centred per state; greedy is then
    the lowest predicted score), so it sees how much worse each degree is, not only which is
    best: the one student that learns something of a fixed-2 teacher (docs/agent.md); it reads
    no ``temperature``."""
    teacher_base_policy: str = "best_fixed"
    """The teacher's base policy: as planning.base_policy (best_fixed, tuned, fixed-K, ...), or
    planning (whatever the evaluated rollout uses). best_fixed by default: a student imitates a
    planner that continues with the best constant degree more faithfully (docs/agent.md)."""
    teacher_horizon: int | None = None
    """The teacher's H (None: planning.horizon)."""
    teacher_futures: int | None = None
    """The teacher's K (None: planning.num_futures)."""
    alternative_teachers: tuple[TeacherConfig, ...] = ()
    """Further teachers, each a start: one student is trained from the teacher above and one
    from each of these (in ``out/start<k>/``), and the student with the lowest validation
    blocking (``workflow.validation_seeds``) is kept, so the teacher is chosen per distribution
    on the validation seeds, never the test seeds. () trains from the teacher above alone."""
    alternative_margin: float = 0.005
    """How much lower an alternative teacher's student must block on validation (a rate) to be
    kept instead of the first teacher's: near-ties on a few validation episodes do not rank
    students (docs/agent.md)."""
