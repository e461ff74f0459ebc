"""Masked PPO for PAC-ML, CleanRL-style: read it top to bottom (a little over 300 lines: the
loop is kept whole in one module, as CleanRL keeps it, so it reads in one sitting).

``train`` seeds everything, builds ``num_envs`` environments over one shared cluster model,
then repeats: anneal the learning rate, ``collect_rollout``, ``compute_gae``, ``ppo_update``,
log, validate greedily after the first update and every ``validation_interval`` updates (keeping the best checkpoint
by blocking rate, and the last), checkpoint after every update. A killed run resumes from its last
checkpoint, which carries the weights, the optimiser, both torch RNG streams and where every
environment stands (`VecEnv.position`: its episode and the degrees chosen in it), so the resumed
run ends with the same weights as an uninterrupted one wherever it was killed, mid-episode too.

With ``imitation.iterations`` > 0 the agent first learns from the ``rollout`` planner
(`pacml.train.imitation`, DAgger); its best weights are update 0 (validated and checkpointed),
PPO fine-tunes them for ``ppo.total_timesteps`` decisions (0: none), and validation is then the
mean over ``workflow.validation_seeds``.

Implementation details and their sources (every deliberate choice is a `PPOConfig` field):
masked categorical with finite logits and corrected entropy (sb3-contrib), GAE (Schulman et
al. 2016), per-minibatch advantage normalisation, clipped surrogate and clipped value loss,
entropy bonus, global gradient clipping, linear LR annealing, orthogonal initialisation
(CleanRL ppo.py). Episodes end at the horizon (terminal, no bootstrap).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from pacml.agent.network import ActorCritic, MaskedCategorical, batch_graphs
from pacml.agent.policy import validate_on
from pacml.config import Config
from pacml.env.features import FeatureSpace
from pacml.errors import CheckpointError
from pacml.sim.engine import ClusterModel
from pacml.train.checkpoint import checkpoint_run_hash, load_checkpoint, run_hash, save_checkpoint
from pacml.train.lock import training_lock
from pacml.train.optimiser import FlatAdam
from pacml.train.rollouts import Batch, Storage, VecEnv


def collect_rollout(
    net: ActorCritic,
    graphs,
    envs: VecEnv,
    st: Storage,
    gen: torch.Generator,
    next_done: torch.Tensor,
    reward_scale: float,
) -> torch.Tensor:
    """Fill ``st`` with one rollout; return the done flags after its last step."""
    with torch.no_grad():
        emb = net.embeddings(graphs)  # static per graph: once per rollout
        for t in range(st.action.shape[0]):
            gi, glob, mask = envs.stacked()
            logits, value = net.heads(emb, gi, glob, mask)
            dist = MaskedCategorical(logits, mask)
            action = dist.sample(gen)
            st.graph_index[t], st.glob[t], st.mask[t] = gi, glob, mask
            st.action[t], st.logprob[t], st.value[t] = action, dist.log_prob(action), value
            st.done[t] = next_done
            reward, done = envs.step(action.numpy())
            st.reward[t] = torch.from_numpy(reward) * reward_scale
            next_done = torch.from_numpy(done)
    return next_done


def compute_gae(
    reward: torch.Tensor,
    value: torch.Tensor,
    done: torch.Tensor,
    next_value: torch.Tensor,
    next_done: torch.Tensor,
    gamma: float,
    lam: float,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Generalised advantage estimation. ``done[t]`` flags that step t starts a new episode
    (CleanRL's convention). Returns (advantages, returns)."""
    steps = reward.shape[0]
    adv = torch.zeros_like(reward)
    last = torch.zeros_like(next_value)
    for t in reversed(range(steps)):
        if t == steps - 1:
            nonterminal, nxt = 1.0 - next_done, next_value
        else:
            nonterminal, nxt = 1.0 - done[t + 1], value[t + 1]
        delta = reward[t] + gamma * nxt * nonterminal - value[t]
        last = delta + gamma * lam * nonterminal * last
        adv[t] = last
    return adv, adv + value


def clipped_policy_loss(adv: torch.Tensor, ratio: torch.Tensor, clip_coef: float) -> torch.Tensor:
    """PPO's clipped surrogate, as a loss: mean of max(-A r, -A clip(r, 1 - c, 1 + c))."""
    return torch.max(-adv * ratio, -adv * ratio.clamp(1 - clip_coef, 1 + clip_coef)).mean()


def ppo_update(net: ActorCritic, opt: torch.optim.Optimizer, graphs, flat: Batch, cfg, gen: torch.Generator) -> dict:
    """Epochs x minibatches of the clipped PPO objective; returns the last losses and KL."""
    n = flat.action.shape[0]
    mb = n // cfg.num_minibatches
    clipfracs, stats = [], {}
    for _epoch in range(cfg.update_epochs):
        perm = torch.randperm(n, generator=gen)
        for start in range(0, n, mb):
            idx = perm[start : start + mb]
            logits, value = net(graphs, flat.graph_index[idx], flat.glob[idx], flat.mask[idx])
            dist = MaskedCategorical(logits, flat.mask[idx])
            logratio = dist.log_prob(flat.action[idx]) - flat.logprob[idx]
            ratio = logratio.exp()
            with torch.no_grad():
                approx_kl = ((ratio - 1) - logratio).mean()  # http://joschu.net/blog/kl-approx.html
                clipfracs.append(((ratio - 1.0).abs() > cfg.clip_coef).float().mean().item())
            adv = flat.advantage[idx]
            if cfg.norm_adv:
                adv = (adv - adv.mean()) / (adv.std() + 1e-8)
            pg_loss = clipped_policy_loss(adv, ratio, cfg.clip_coef)
            ret, old_v = flat.ret[idx], flat.value[idx]
            if cfg.clip_vloss:
                clipped = old_v + (value - old_v).clamp(-cfg.vf_clip_coef, cfg.vf_clip_coef)
                v_loss = 0.5 * torch.max((value - ret) ** 2, (clipped - ret) ** 2).mean()
            else:
                v_loss = 0.5 * ((value - ret) ** 2).mean()
            entropy = dist.entropy().mean()
            loss = pg_loss - cfg.ent_coef * entropy + cfg.vf_coef * v_loss
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), cfg.max_grad_norm)
            opt.step()
        if cfg.target_kl is not None and approx_kl > cfg.target_kl:
            break
    y_pred, y_true = flat.value.numpy(), flat.ret.numpy()
    var_y = np.var(y_true)
    stats.update(
        {
            "losses/policy_loss": pg_loss.item(),
            "losses/value_loss": v_loss.item(),
            "losses/entropy": entropy.item(),
            "losses/approx_kl": approx_kl.item(),
            "losses/clipfrac": float(np.mean(clipfracs)),
            "losses/explained_variance": float("nan") if var_y == 0 else float(1 - np.var(y_true - y_pred) / var_y),
        }
    )
    return stats


@dataclass
class TrainResult:
    best_blocking_rate: float
    best_update: int
    updates: int
    global_step: int
    wall_s: float
    curve: list[dict]
    history: list[dict] = field(default_factory=list)
    """Every update's metrics as logged (imitation iterations first, ``phase`` imitation; then
    PPO updates, ``phase`` ppo), kept in last.pt so that a resumed run has all of it."""
    starts: list[dict] = field(default_factory=list)
    """With several starts (`pacml.train.starts`): each start's settings, best validation
    blocking rate and whether it was kept."""


def build_agent(cfg: Config, model: ClusterModel) -> tuple[ActorCritic, FeatureSpace]:
    features = FeatureSpace.for_agent(
        cfg, model.graphs, model.sequential_jct_s, model.topology.num_workers, model.max_degree + 1
    )
    return ActorCritic(cfg.agent, features.global_dim, features.num_actions), features


def train(
    cfg: Config,
    model: ClusterModel,
    dist: str,
    seed: int,
    out_dir: str | Path,
    log: Callable[[dict, int], None] | None = None,
    progress: Callable[[int, int, dict], None] | None = None,
    selection=None,
) -> TrainResult:
    """Train one agent on ``dist`` with ``seed``; checkpoints go to ``out_dir`` (``last.pt``,
    ``best.pt``). ``log(metrics, step)`` receives per-update metrics; ``progress(update,
    num_updates, info)`` drives a progress bar. ``selection`` (a `pacml.policies.base.Selection`)
    gives the imitation teacher its base policy; without it the teacher chooses it itself on
    ``workflow.validation_seeds``. One trainer per folder: another live one is refused
    (`pacml.train.lock`)."""
    with training_lock(out_dir):
        return _train(cfg, model, dist, seed, Path(out_dir), log, progress, selection)


def _train(cfg, model, dist, seed, out_dir: Path, log, progress, selection) -> TrainResult:
    p = cfg.ppo
    torch.set_num_threads(p.torch_threads)
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    net, features = build_agent(cfg, model)
    graphs = batch_graphs(features.graph_features)

    def new_optimiser() -> FlatAdam:  # after imitation, whose own optimiser moves the actor's weights
        return FlatAdam(net.parameters(), lr=p.learning_rate, eps=1e-5, foreach=True)

    opt = None
    batch_size = p.num_envs * p.num_steps
    # with imitation, PPO only fine-tunes (0 decisions: none) and validation, like the
    # imitation's, is the mean over workflow.validation_seeds
    imitation = cfg.imitation.iterations > 0
    num_updates = p.total_timesteps // batch_size if imitation else max(1, p.total_timesteps // batch_size)
    val_seeds = tuple(cfg.workflow.validation_seeds) if imitation else (p.validation_seed,)

    def validate(n: ActorCritic) -> dict:
        return validate_on(n, cfg, model, dist, val_seeds)

    state = {
        "update": 0,
        "global_step": 0,
        "position": None,
        "next_done": None,
        "best": (float("inf"), 0),
        "curve": [],
        "history": [],
        "wall_s": 0.0,
    }
    resumed = None
    last = out_dir / "last.pt"
    if last.exists():
        try:
            same_run = checkpoint_run_hash(last) == run_hash(cfg)
        except CheckpointError as exc:  # a truncated or foreign file never blocks a rerun
            print(f"{exc}: set aside as last.pt.corrupt; training starts again", flush=True)
            last.replace(out_dir / "last.pt.corrupt")
            same_run = None
        if same_run:
            opt = new_optimiser()
            resumed = load_checkpoint(last, net, opt, gen)
        elif same_run is False:  # trained under another config: never resume it
            last.replace(out_dir / "last.pt.stale")
    if resumed is not None:
        state.update(resumed)
    elif imitation:
        # learn per-job decisions from the planner first (pacml.train.imitation); PPO fine-tunes
        from pacml.train.imitation import imitate

        t0 = time.perf_counter()
        state["history"] = [
            {"phase": "imitation", "step": int(m["imitation/iteration"]), **_floats(m)}
            for m in imitate(cfg, model, dist, seed, net, graphs, features, validate, log, selection)
        ]
        val = validate(net)
        state["wall_s"] = time.perf_counter() - t0
        state["best"] = (val["blocking_rate"], 0)
        state["best_model"] = {k: v.detach().clone() for k, v in net.state_dict().items()}
        state["curve"].append(
            {
                "update": 0,
                "global_step": 0,
                **{
                    k: val[k]
                    for k in ("blocking_rate", "demand_throughput", "mean_jct", "mean_jct_speedup", "mean_degree")
                },
            }
        )
        opt = new_optimiser()
        save_checkpoint(last, net, opt, gen, cfg, state)
    if opt is None:
        opt = new_optimiser()
    if state["position"] is None and state.get("episodes_started"):  # a checkpoint from before exact resume
        state["position"] = {"episode": state.pop("episodes_started"), "actions": [[]] * p.num_envs}
    envs = VecEnv(model, dist, features, p.num_envs, seed, state["position"])
    st = Storage.empty(p.num_steps, p.num_envs, features.global_dim, features.num_actions)
    next_done = torch.tensor(state["next_done"] or [0.0] * p.num_envs)
    started = time.perf_counter() - state["wall_s"]
    for update in range(state["update"] + 1, num_updates + 1):
        if p.anneal_lr:
            opt.param_groups[0]["lr"] = (1.0 - (update - 1.0) / num_updates) * p.learning_rate
        t0 = time.perf_counter()
        next_done = collect_rollout(net, graphs, envs, st, gen, next_done, p.reward_scale)
        t_rollout = time.perf_counter() - t0
        with torch.no_grad():
            gi, glob, mask = envs.stacked()
            _, next_value = net(graphs, gi, glob, mask)
        adv, ret = compute_gae(st.reward, st.value, st.done, next_value, next_done, p.gamma, p.gae_lambda)
        flat = Batch(
            st.graph_index.reshape(-1),
            st.glob.reshape(batch_size, -1),
            st.mask.reshape(batch_size, -1),
            st.action.reshape(-1),
            st.logprob.reshape(-1),
            adv.reshape(-1),
            ret.reshape(-1),
            st.value.reshape(-1),
        )
        t1 = time.perf_counter()
        metrics = ppo_update(net, opt, graphs, flat, p, gen)
        t_update = time.perf_counter() - t1
        state["global_step"] += batch_size
        metrics["charts/learning_rate"] = opt.param_groups[0]["lr"]
        metrics["perf/steps_per_s"] = batch_size / (t_rollout + t_update)
        metrics["perf/rollout_s"] = t_rollout
        metrics["perf/update_s"] = t_update
        if envs.finished:
            metrics["charts/train_blocking_rate"] = float(np.mean([m["blocking_rate"] for m in envs.finished]))
            envs.finished.clear()
        if update == 1 or update % p.validation_interval == 0 or update == num_updates:
            val = validate(net)
            metrics["charts/blocking_rate"] = val["blocking_rate"]
            metrics["charts/demand_throughput"] = val["demand_throughput"]
            metrics["charts/mean_degree"] = val["mean_degree"]
            state["curve"].append(
                {
                    "update": update,
                    "global_step": state["global_step"],
                    **{
                        k: val[k]
                        for k in ("blocking_rate", "demand_throughput", "mean_jct", "mean_jct_speedup", "mean_degree")
                    },
                }
            )
            if val["blocking_rate"] < state["best"][0]:
                state["best"] = (val["blocking_rate"], update)
                state["best_model"] = {k: v.detach().clone() for k, v in net.state_dict().items()}
        state["wall_s"] = time.perf_counter() - started
        state["update"] = update
        state["position"] = envs.position()
        state["next_done"] = next_done.tolist()
        state.setdefault("history", []).append({"phase": "ppo", "step": update, **_floats(metrics)})
        save_checkpoint(out_dir / "last.pt", net, opt, gen, cfg, state)
        if log is not None:
            log(metrics, state["global_step"])
        if progress is not None:
            progress(
                update,
                num_updates,
                {"val_blocking": state["best"][0] if state["curve"] else None, "sps": metrics["perf/steps_per_s"]},
            )
    # best.pt is written last, from the best weights that last.pt also carries: a job killed
    # and rerun (Snakemake deletes an incomplete job's outputs) still ends with its best.pt
    best_state = {k: v for k, v in state.items() if k != "best_model"}
    current = {k: v.detach().clone() for k, v in net.state_dict().items()}
    net.load_state_dict(state.get("best_model") or current)
    save_checkpoint(out_dir / "best.pt", net, opt, gen, cfg, {**best_state, "update": state["best"][1]})
    net.load_state_dict(current)
    return TrainResult(
        state["best"][0],
        state["best"][1],
        state["update"],
        state["global_step"],
        time.perf_counter() - started,
        state["curve"],
        state.get("history", []),
    )


def _floats(metrics: dict) -> dict[str, float]:
    """A metrics mapping as plain floats (JSON and the checkpoint)."""
    return {k: float(v) for k, v in metrics.items()}
