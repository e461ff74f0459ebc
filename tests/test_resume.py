"""A killed training resumes exactly, wherever it was killed, and one trainer owns a folder."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
import torch

from pacml.config import load_config
from pacml.errors import TrainingLockedError
from pacml.sim.engine import ClusterModel
from pacml.train.lock import read_owner, training_lock

from conftest import ROOT, TOY_CLUSTER, toy_pool

RESUME = [
    *TOY_CLUSTER,
    "graphs.models=[]",
    "workload.interarrival=exponential",  # episodes of different lengths: checkpoints fall mid-episode
    "ppo.num_envs=2",
    "ppo.num_steps=7",  # about 60 decisions an episode: 7 never divides it
    "ppo.num_minibatches=2",
    "ppo.update_epochs=2",
    "ppo.total_timesteps=98",  # 7 updates
    "ppo.validation_interval=3",
    "agent.message_dim=8",
    "agent.hidden_dim=16",
    "agent.node_dim=8",
    "agent.graph_dim=8",
    "imitation.iterations=0",
]


def setting(*extra):
    cfg = load_config(overrides=[*RESUME, *extra])
    return cfg, ClusterModel(toy_pool(), cfg)


class Killed(Exception):
    pass


def weights(path):
    return torch.load(path, weights_only=True)["model"]


def test_a_run_killed_mid_episode_resumes_to_the_same_weights(tmp_path):
    from pacml.train.ppo import train

    cfg, model = setting()
    full = train(cfg, model, "beta_a", 5, tmp_path / "full")
    assert full.updates == 7
    for k in (1, 3, 5):
        out = tmp_path / f"killed{k}"

        def kill_after(update, total, info, k=k):
            if update == k:
                raise Killed

        with pytest.raises(Killed):
            train(cfg, setting()[1], "beta_a", 5, out, progress=kill_after)
        state = torch.load(out / "last.pt", weights_only=True)["state"]
        assert state["update"] == k
        assert any(state["position"]["actions"]), "the checkpoint is mid-episode"
        ran = []
        resumed = train(cfg, setting()[1], "beta_a", 5, out, progress=lambda u, n, i, ran=ran: ran.append(u))
        assert ran == list(range(k + 1, 8))  # it resumed: only the remaining updates ran
        assert resumed.curve == full.curve
        a, b = weights(tmp_path / "full" / "last.pt"), weights(out / "last.pt")
        for name in a:
            assert torch.equal(a[name], b[name]), (k, name)


def test_the_environments_replay_to_where_they_stood():
    from pacml.env.features import FeatureSpace
    from pacml.train.rollouts import VecEnv

    cfg, model = setting()
    features = FeatureSpace.for_agent(cfg, model.graphs, model.sequential_jct_s, 8, 9)
    rng = np.random.default_rng(0)
    envs = VecEnv(model, "beta_a", features, 2, 5)
    for _ in range(75):  # past the end of the first episode of at least one
        envs.step(np.array([rng.choice(np.flatnonzero(o["mask"])) for o in envs.obs]))
    position = envs.position()
    assert max(position["episode"]) >= 1
    copy = VecEnv(model, "beta_a", features, 2, 5, position)
    for i in range(2):
        a, b = envs.envs[i].episode, copy.envs[i].episode
        assert a.records == b.records and a.free_mask == b.free_mask
        assert np.array_equal(envs.obs[i]["global"], copy.obs[i]["global"])


def test_a_second_trainer_in_the_same_folder_is_refused(tmp_path):
    code = textwrap.dedent(
        f"""
        import sys, time
        from pacml.train.lock import training_lock
        with training_lock({str(tmp_path)!r}):
            print("locked", flush=True)
            time.sleep(60)
        """
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    other = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert other.stdout.readline().strip() == "locked"
        with pytest.raises(TrainingLockedError, match=f"pid {other.pid}") as err:
            with training_lock(tmp_path):
                pass
        assert f"kill {other.pid}" in str(err.value)
        assert read_owner(tmp_path)["pid"] == other.pid
    finally:
        other.kill()
        other.wait()
    with training_lock(tmp_path) as owner:  # its process died: the kernel released the lock
        assert owner["pid"] == os.getpid()
        with training_lock(tmp_path):  # re-entrant in the owning process
            pass


LONGER = "ppo.total_timesteps=280"  # 20 updates of about 50 ms: room to land kills inside them
FAULT_SCRIPT = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, {tests!r})
    from test_resume import LONGER, setting
    from pacml.train.ppo import train
    cfg, model = setting(LONGER)
    train(cfg, model, "beta_a", 5, {out!r}, progress=lambda u, n, i: print(u, flush=True))
    """
)


def test_sigkill_at_random_points_then_resume_gives_the_same_weights(tmp_path):
    """The fault-injection test: SIGKILL (no cleanup at all) at seeded random points inside
    updates, rerun, repeat; the final weights equal the uninterrupted run's."""
    from pacml.train.ppo import train

    cfg, model = setting(LONGER)
    train(cfg, model, "beta_a", 5, tmp_path / "full")
    out = tmp_path / "killed"
    script = FAULT_SCRIPT.format(tests=str(ROOT / "tests"), out=str(out))
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "OMP_NUM_THREADS": "1"}
    rng = np.random.default_rng(2026)
    kills, finished = 0, False
    for _attempt in range(12):
        proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, env=env)
        line = proc.stdout.readline()  # an update has finished: the run is inside training now
        if line and kills < 4:
            time.sleep(float(rng.uniform(0.0, 0.5)))  # somewhere inside a later update
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            proc.stdout.close()
            if proc.returncode == -signal.SIGKILL:
                kills += 1
                continue
        proc.stdout.read()
        proc.stdout.close()
        assert proc.wait() == 0
        finished = True
        break
    assert finished and kills >= 3
    a, b = weights(tmp_path / "full" / "last.pt"), weights(out / "last.pt")
    for name in a:
        assert torch.equal(a[name], b[name]), name
    a, b = weights(tmp_path / "full" / "best.pt"), weights(out / "best.pt")
    for name in a:
        assert torch.equal(a[name], b[name]), name
