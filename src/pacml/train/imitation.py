"""Learning per-job decisions from the planner (DAgger), before PPO fine-tunes.

The teacher is the deployable ``rollout`` planner (`pacml.policies.planning`): it never sees an
episode's future. Read top to bottom:

1. ``collect``: play training episodes; at every arrival the teacher scores every valid degree
   (mean blocked jobs over its sampled futures) and the state is labelled with a target that
   puts half its weight on the teacher's choice and half on softmax(-score / ``temperature``),
   uniform over the exactly tied best degrees at temperature 0 (when every degree blocks the
   job, say, every degree is equally right). The teacher's choice is played with
   probability ``teacher_share`` (1 in the first iteration, decaying by ``teacher_share_decay``),
   the student's greedy degree otherwise, so the data covers the states the student itself
   reaches (DAgger, Ross et al. 2011).
2. ``fit``: cross-entropy of the student's masked softmax against the targets, so its greedy
   degree tends to the teacher's best and its mistakes to near-equal degrees. With
   ``imitation.loss: score_regression`` the label is the teacher's scores themselves
   (`score_target`) and the student's outputs regress them (`score_regression_loss`).
3. ``imitate``: iterate, validating the student greedily after every iteration and keeping
   the best weights, which `pacml.train.ppo.train` then fine-tunes with PPO if
   ``ppo.total_timesteps`` > 0; with ``agent.actor_ensemble`` N > 1 the agent's actors are
   the N best iterations' instead, and it acts on their mean probabilities.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from pacml.agent.network import ActorCritic, normalised_logits
from pacml.config import Config
from pacml.env.features import FeatureSpace
from pacml.env.partition_env import PartitionEnv
from pacml.policies.planning import Rollout
from pacml.sim.engine import ClusterModel
from pacml.train.optimiser import FlatAdam

IMITATION_SEED_NAMESPACE = 0xDA66
"""DAgger episodes draw from SeedSequence((IMITATION_SEED_NAMESPACE, seed), spawn_key=(iteration, k))."""


@dataclass
class Dataset:
    """Aggregated (state, teacher target) pairs."""

    graph_index: list[int] = field(default_factory=list)
    glob: list[np.ndarray] = field(default_factory=list)
    mask: list[np.ndarray] = field(default_factory=list)
    target: list[np.ndarray] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.target)

    def tensors(self) -> tuple[torch.Tensor, ...]:
        return (
            torch.tensor(self.graph_index, dtype=torch.long),
            torch.from_numpy(np.stack(self.glob)),
            torch.from_numpy(np.stack(self.mask)),
            torch.from_numpy(np.stack(self.target)),
        )


def target_distribution(
    scores: dict[int, float], choice: int, num_actions: int, temperature: float, valid: np.ndarray | None = None
) -> np.ndarray:
    """Half on the teacher's ``choice``, half on softmax(-score / temperature) over the scored
    degrees (uniform over the exact ties at temperature 0): the student's greedy degree is the
    teacher's, and confusing it with a near-equal degree costs little. All on degree 0 when no
    degree is valid. ``valid``: the student's mask (`agent.feasible_mask`); a degree outside it
    blocks the job exactly like 0, so its weight goes to 0."""
    out = np.zeros(num_actions, dtype=np.float32)
    if not scores:
        out[0] = 1.0
        return out
    degrees = np.array(list(scores))
    s = np.array([scores[a] for a in degrees])
    if temperature > 0:
        w = np.exp(-(s - s.min()) / temperature)
    else:
        w = (s == s.min()).astype(np.float64)
    out[degrees] = 0.5 * w / w.sum()
    out[choice] += 0.5
    if valid is not None:
        out[0] += out[~valid].sum()
        out[~valid] = 0.0
    return out


def score_target(scores: dict[int, float], num_actions: int, valid: np.ndarray | None = None) -> np.ndarray:
    """The teacher's scores as a regression label: each scored degree's mean blocked jobs, NaN
    where a degree has none. A degree outside the student's mask (``valid``) blocks the job
    exactly as 0 does, so 0 takes its score (and it stays NaN); where no scored degree blocks
    the job the teacher never weighed rejecting it, and 0 gets the worst score plus the job
    itself, one more blocked job. Only 0, scored 0, when no degree is valid."""
    out = np.full(num_actions, np.nan, dtype=np.float32)
    if not scores:
        out[0] = 0.0
        return out
    reject = None
    for a, score in scores.items():
        if valid is not None and not valid[a]:
            reject = score
        else:
            out[a] = score
    out[0] = reject if reject is not None else np.nanmax(out) + 1.0
    return out


def cross_entropy_loss(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Cross-entropy of the masked softmax against target distributions (`target_distribution`)."""
    logp = normalised_logits(logits)  # MaskedCategorical's, without its probabilities
    return -(target * logp).sum(dim=-1).mean()


def score_regression_loss(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Squared error between minus the logits and the teacher's scores (`score_target`) over the
    scored degrees, each state's both centred on their mean there: only how much worse one
    degree is than another is learnt, not the state's level of blocking."""
    known = ~torch.isnan(target)
    k = known.float()
    count = k.sum(dim=1, keepdim=True)
    predicted = torch.where(known, -logits, torch.zeros_like(logits))  # 0 where unscored: the sums
    score = torch.where(known, target, torch.zeros_like(target))  # below run over the scored degrees
    error = (predicted - predicted.sum(dim=1, keepdim=True) / count) - (score - score.sum(dim=1, keepdim=True) / count)
    return ((error**2) * k).sum() / k.sum()


LOSSES = {"cross_entropy": cross_entropy_loss, "score_regression": score_regression_loss}
"""``imitation.loss``: how a minibatch of logits is scored against its labels."""


def best_degrees(target: torch.Tensor, loss: str) -> torch.Tensor:
    """(B, A) bool: the degrees a label ranks best (the highest target weight; the lowest score)."""
    if loss == "score_regression":
        score = torch.nan_to_num(target, nan=float("inf"))
        return score == score.min(dim=1, keepdim=True).values
    return target == target.max(dim=1, keepdim=True).values


def collect(
    net: ActorCritic,
    cfg: Config,
    model: ClusterModel,
    features: FeatureSpace,
    dist: str,
    teacher: Rollout,
    episode_seeds: list[int],
    teacher_share: float,
    rng: np.random.Generator,
    data: Dataset,
    temperature: float,
    loss: str = "cross_entropy",
) -> dict:
    """Play the episodes, labelling every state with the teacher's target; returns how often
    the student's greedy degree was the teacher's on the states it saw."""
    from pacml.agent.policy import GreedyAgent

    agree = total = 0
    student_policy = GreedyAgent(net, cfg)
    for s in episode_seeds:
        env = PartitionEnv(model, dist, features)
        obs, _ = env.reset(seed=s)
        done = False
        while not done:
            d = env.decision
            scores = teacher.scores(d, rng)
            choice = teacher.choose(d, scores)
            if not obs["mask"][choice]:  # outside the student's mask: it blocks the job, as 0 does
                choice = 0
            if loss == "score_regression":
                target = score_target(scores, len(obs["mask"]), obs["mask"])
            else:
                target = target_distribution(scores, choice, len(obs["mask"]), temperature, obs["mask"])
            student = student_policy.act(d, rng, obs["global"])
            data.graph_index.append(obs["graph_index"])
            data.glob.append(obs["global"])
            data.mask.append(obs["mask"])
            data.target.append(target)
            agree += int(student == choice)
            total += 1
            action = choice if rng.random() < teacher_share else student
            obs, _, done, _, _ = env.step(action)
    return {"imitation/agreement": agree / max(total, 1), "imitation/states": total}


def fit(
    net: ActorCritic,
    opt: torch.optim.Optimizer,
    graphs,
    data: Dataset,
    epochs: int,
    minibatch_size: int,
    gen: torch.Generator,
    loss: str = "cross_entropy",
) -> dict:
    """Epochs of ``loss`` (`LOSSES`) against the teacher's labels; returns the last epoch's loss
    and accuracy (the greedy degree is one the label ranks best)."""
    loss_fn = LOSSES[loss]
    gi, glob, mask, target = data.tensors()
    n = len(target)
    for _ in range(epochs):
        perm = torch.randperm(n, generator=gen)
        losses, hits = [], 0
        for start in range(0, n, minibatch_size):
            idx = perm[start : start + minibatch_size]
            logits = net.actor_logits(graphs, gi[idx], glob[idx], mask[idx])
            value = loss_fn(logits, target[idx])
            opt.zero_grad()
            value.backward()
            opt.step()
            losses.append(value.item() * len(idx))
            greedy = logits.argmax(dim=-1)
            hits += int(best_degrees(target[idx], loss).gather(1, greedy[:, None]).sum())
    return {"imitation/loss": float(np.sum(losses) / n), "imitation/accuracy": hits / n}


def make_teacher(cfg: Config, model: ClusterModel, dist: str, selection=None) -> Rollout:
    """The deployable planner with the imitation's own base policy, horizon and futures; a
    base chosen on the validation seeds comes from ``selection`` when it was made the same way."""
    import dataclasses

    from pacml.policies.base import PolicyContext

    im = cfg.imitation
    planning = dataclasses.replace(
        cfg.planning,
        horizon=im.teacher_horizon or cfg.planning.horizon,
        num_futures=im.teacher_futures or cfg.planning.num_futures,
    )
    base = cfg.teacher_base
    if base in ("best_fixed", "tuned"):
        # a tuned base is tuned at the teacher's own H and K: the selection's is reused only
        # where the evaluated planner's are the same
        same_planner = (planning.horizon, planning.num_futures) == (cfg.planning.horizon, cfg.planning.num_futures)
        reusable = selection is not None and (
            base == "best_fixed"
            or cfg.planning.base_policy == "tuned"
            and selection.rollout_base is not None
            and same_planner
        )
        if not reusable:
            own = dataclasses.replace(cfg, planning=dataclasses.replace(planning, base_policy=base))
            selection = PolicyContext(ClusterModel(model.graphs, own, model.cache, model.trace), dist).chosen()
        base = f"fixed-{selection.fixed_degree}" if base == "best_fixed" else selection.rollout_base
    teacher_model = ClusterModel(model.graphs, dataclasses.replace(cfg, planning=planning), model.cache, model.trace)
    return Rollout(teacher_model, dist, planning, base)


def imitate(
    cfg: Config,
    model: ClusterModel,
    dist: str,
    seed: int,
    net: ActorCritic,
    graphs,
    features: FeatureSpace,
    validate,
    log=None,
    selection=None,
) -> list[dict]:
    """DAgger iterations into ``net`` (the best by ``validate(net)`` left in it); returns the
    per-iteration metrics."""
    im = cfg.imitation
    teacher = make_teacher(cfg, model, dist, selection)
    rng = np.random.default_rng(np.random.SeedSequence((IMITATION_SEED_NAMESPACE, seed)))
    gen = torch.Generator().manual_seed(seed)
    opt = FlatAdam(net.actor.parameters(), lr=im.learning_rate, foreach=True)  # torch.optim.Adam's numbers, faster
    data = Dataset()
    history, best = [], (float("inf"), None)
    snapshots: list[tuple[float, int, dict]] = []  # (validation, iteration, actor weights): the ensemble's
    share = 1.0
    for it in range(1, im.iterations + 1):
        seeds = [
            int(np.random.SeedSequence((IMITATION_SEED_NAMESPACE, seed), spawn_key=(it, k)).generate_state(1)[0])
            for k in range(im.episodes_per_iteration)
        ]
        metrics = collect(net, cfg, model, features, dist, teacher, seeds, share, rng, data, im.temperature, im.loss)
        metrics.update(fit(net, opt, graphs, data, im.epochs, im.minibatch_size, gen, im.loss))
        val = validate(net)
        metrics.update(
            {
                "imitation/teacher_share": share,
                "imitation/iteration": it,
                "charts/blocking_rate": val["blocking_rate"],
                "charts/mean_degree": val["mean_degree"],
            }
        )
        if val["blocking_rate"] < best[0]:
            best = (val["blocking_rate"], {k: v.detach().clone() for k, v in net.state_dict().items()})
        if net.members:
            snapshots.append(
                (val["blocking_rate"], it, {k: v.detach().clone() for k, v in net.actor.state_dict().items()})
            )
        history.append(metrics)
        print(
            f"imitation {it}/{im.iterations}: {len(data)} labels, agreement {metrics['imitation/agreement']:.3f}, "
            f"fit accuracy {metrics['imitation/accuracy']:.3f}, validation blocking {val['blocking_rate']:.4f}",
            flush=True,
        )
        if log is not None:
            log(metrics, it)
        share *= im.teacher_share_decay
    net.load_state_dict(best[1])
    if net.members:  # the best iterations by validation (ties: the earlier), the best first
        chosen = sorted(snapshots, key=lambda s: (s[0], s[1]))[: 1 + len(net.members)]
        net.assemble([weights for _, _, weights in chosen])
        history[-1].update({f"imitation/ensemble_member_{i}": it for i, (_, it, _) in enumerate(chosen)})
        print(f"imitation: the agent acts on the mean of iterations {[it for _, it, _ in chosen]}", flush=True)
    return history
