"""Arrivals replayed from a trace: reading (every bad row named), steps, rescaling, episodes."""

from __future__ import annotations

import dataclasses
import os

import numpy as np
import pytest

from pacml.config import TraceConfig, load_config
from pacml.errors import ConfigError, TraceFormatError
from pacml.evaluation import episode_rngs, run_episode
from pacml.policies.base import make_policy
from pacml.sim.engine import ClusterModel, Episode
from pacml.sim.lookahead import base_rule, blocked_after
from pacml.sim.trace import Trace, job_steps
from pacml.trace_csv import read_trace

from conftest import SHARED_DIR, TOY_CLUSTER, toy_pool


def write(tmp_path, text: str, name: str = "t.csv"):
    path = tmp_path / name
    path.write_text(text)
    return path


def cfg_for(path, **kw) -> TraceConfig:
    return TraceConfig(path=str(path), submit_column="submit", duration_column="run_s", **kw)


def test_seconds_and_date_times_are_read_in_order(tmp_path):
    f = write(tmp_path, "submit,run_s,vc\n0,10,a\n5.5,20,b\n7,30,a\n")
    t = read_trace(cfg_for(f))
    assert t.submit_s.tolist() == [0.0, 5.5, 7.0] and t.duration_s.tolist() == [10.0, 20.0, 30.0]
    assert read_trace(cfg_for(f, filter={"vc": "a"})).duration_s.tolist() == [10.0, 30.0]
    g = write(tmp_path, "submit,run_s\n2017-10-09 06:13:03,1\n2017-10-09 07:01:55,2\n2017-10-10 06:13:03,3\n", "d.csv")
    s = read_trace(cfg_for(g)).submit_s
    assert (s - s[0]).tolist() == [0.0, 48 * 60 + 52, 86400.0]


@pytest.mark.parametrize(
    ("rows", "line", "problem"),
    [
        ("0,10\n9,10\n5,10\n", 4, r"submit goes back in time \(5.0 s after 9.0 s\)"),
        ("0,10\n3,-1\n", 3, r"run_s = -1.0: a job's duration must be > 0 s"),
        ("0,10\n3,0\n", 3, r"run_s = 0.0: a job's duration must be > 0 s"),
        ("0,10\nsoon,10\n", 3, r"submit = 'soon' is neither seconds nor a date-time"),
        ("0,10\n3,long\n", 3, r"run_s = 'long' is not a number"),
        ("0,10\n-3,10\n", 3, r"submit = '-3': a submit time must be a finite number >= 0"),
        ("0,10\n3,nan\n", 3, r"run_s = 'nan' is not a finite number"),
    ],
)
def test_a_bad_row_is_refused_naming_file_and_line(tmp_path, rows, line, problem):
    f = write(tmp_path, "submit,run_s\n" + rows)
    with pytest.raises(TraceFormatError, match=rf"^{f}:{line}: {problem}"):
        read_trace(cfg_for(f))


def test_sort_orders_an_unsorted_trace_and_keeps_each_jobs_duration(tmp_path):
    f = write(tmp_path, "submit,run_s\n9,1\n0,2\n5,3\n")
    t = read_trace(cfg_for(f, sort=True))
    assert t.submit_s.tolist() == [0.0, 5.0, 9.0] and t.duration_s.tolist() == [2.0, 3.0, 1.0]


def test_missing_columns_and_files_name_their_config_key(tmp_path):
    f = write(tmp_path, "submit,run_s\n0,1\n1,1\n")
    with pytest.raises(ConfigError, match=r"'trace\.duration_column' = 'duration'.*no such column"):
        read_trace(TraceConfig(path=str(f), submit_column="submit"))
    with pytest.raises(ConfigError, match=r"'trace\.filter\.vc'"):
        read_trace(cfg_for(f, filter={"vc": "a"}))
    with pytest.raises(ConfigError, match=r"'trace\.path' = 'nowhere\.csv': no such file"):
        read_trace(TraceConfig(path="nowhere.csv"))
    with pytest.raises(TraceFormatError, match=r"0 job\(s\) with \{'run_s': '7'\}"):
        read_trace(cfg_for(f, filter={"run_s": "7"}))


def test_a_jobs_steps_follow_its_duration_within_the_clip():
    cfg = TraceConfig(min_steps=5, max_steps=500)
    steps = job_steps(np.array([1.0, 1902.0, 2853.0, 3804.0, 1e6]), cfg, 50, 1902.0)
    assert steps.tolist() == [5, 50, 75, 100, 500]


def bursty_trace(n: int, seed: int = 0) -> Trace:
    rng = np.random.default_rng(seed)
    gaps = rng.lognormal(0.0, 1.5, size=n - 1)  # heavy-tailed gaps: bursts and lulls
    submit = np.concatenate([[0.0], np.cumsum(gaps)])
    return Trace(submit, rng.lognormal(7.0, 1.0, size=n), "bursty")


def trace_model(trace: Trace, *overrides: str) -> ClusterModel:
    cfg = load_config(overrides=[*TOY_CLUSTER, "trace.path=bursty.csv", *overrides])
    return ClusterModel(toy_pool(), cfg, trace=trace)


@pytest.mark.parametrize("load", [0.5, 0.94, 1.5])
def test_rescaling_gives_the_offered_load_within_one_percent_on_a_long_window(load):
    trace = bursty_trace(20_000)
    probe = trace_model(trace, f"workload.offered_load={load}")
    span = probe.trace_workload.offset_s[-1] * probe.trace_workload.time_factor
    m = trace_model(trace, f"workload.offered_load={load}", f"workload.horizon_s={span}")
    ep = Episode(m, "beta_a", episode_rngs(0)[0])
    arr = ep.arrivals
    assert len(arr.time_s) == 20_000  # the whole range is the window
    sequential = sum(m.sequential_step_s[int(g)] * int(k) for g, k in zip(arr.graph, arr.steps))
    realised = sequential / (m.topology.num_workers * span)
    assert realised == pytest.approx(load, rel=0.01)
    # the rescaling keeps the trace's shape: every gap is the trace's times one factor
    gaps = np.diff(arr.time_s)
    assert np.allclose(gaps, np.diff(trace.submit_s) * m.trace_workload.time_factor, rtol=1e-9)
    assert np.array_equal(arr.interarrival_s[:-1], gaps)  # a job's gap: the time to the next arrival


def test_a_trace_episode_is_deterministic_and_each_job_trains_for_its_own_steps():
    trace = bursty_trace(3_000)
    m = trace_model(trace, "workload.offered_load=0.9")
    first = run_episode(m, make_policy("para_max"), "beta_a", 7)
    assert first == run_episode(m, make_policy("para_max"), "beta_a", 7)
    ep = Episode(m, "beta_a", episode_rngs(7)[0])
    other = Episode(m, "beta_a", episode_rngs(8)[0])
    assert not np.array_equal(ep.arrivals.steps[:50], other.arrivals.steps[:50])  # another window
    records, _ = first
    assert len(records) == len(ep.arrivals.time_s) and len(set(ep.arrivals.steps.tolist())) > 10
    for r in records:
        g = int(ep.arrivals.graph[r.job_idx])
        k = int(ep.arrivals.steps[r.job_idx])
        assert r.sequential_jct_s == m.sequential_step_s[g] * k
        if r.outcome == "completed":  # one of the job's simulated step times, times its own steps
            step_times = {s.step_time_s for (gg, a, _), s in m.cache.steps.items() if (gg, a) == (g, r.action)}
            assert any(r.jct_s == t * k for t in step_times)


@pytest.mark.parametrize("base", ["fixed-2", "para_max", "para_min"])
def test_lookahead_with_trace_steps_equals_the_forked_engine(base):
    from test_planning import blocked_by_the_engine

    m = trace_model(bursty_trace(3_000), "workload.offered_load=1.2", "workload.horizon_s=200000")
    ep = Episode(m, "beta_a", episode_rngs(1)[0])
    rng = np.random.default_rng(1)
    for _ in range(15):
        ep.step(make_policy("random").act(ep.decision, rng))
    d = ep.decision
    rule = base_rule(base, m)
    for degree in (int(a) for a in np.flatnonzero(d.mask[1:]) + 1):
        truth = blocked_by_the_engine(ep, degree, base, rng)
        f = d.future(100_000)
        args = (m, d.snapshot(), d.graph_index, d.beta, degree, f.time_s.tolist(), f.graph.tolist(), f.beta.tolist())
        assert blocked_after(*args, rule, d.num_training_steps, f.steps.tolist()) == truth


def test_a_range_too_short_for_the_horizon_and_bad_rows_name_their_keys():
    trace = bursty_trace(100)
    with pytest.raises(
        ConfigError, match=r"trace\.last_row.*rows \[0, 100\) of bursty span .* shorter than workload\.horizon_s"
    ):
        trace_model(trace, "workload.offered_load=0.9", "workload.horizon_s=1e8")
    with pytest.raises(ConfigError, match=r"trace\.last_row"):
        trace_model(trace, "trace.last_row=101")
    with pytest.raises(ConfigError, match=r"trace\.first_row"):
        trace_model(trace, "trace.first_row=100")
    with pytest.raises(ConfigError, match=r"trace\.path.*none was read"):
        ClusterModel(toy_pool(), load_config(overrides=[*TOY_CLUSTER, "trace.path=bursty.csv"]))


def test_the_paper_config_is_untouched_by_the_trace_section():
    from pacml.config import config_hash, section_hash, training_keys

    cfg = load_config()
    with_trace = dataclasses.replace(cfg, trace=TraceConfig(path="x.csv"))
    assert config_hash(cfg) != config_hash(with_trace)
    assert section_hash(cfg, *training_keys(cfg)) != section_hash(with_trace, *training_keys(with_trace))
    # an unused trace section's other keys are inert
    idle = dataclasses.replace(cfg, trace=TraceConfig(min_steps=7))
    assert config_hash(idle) == config_hash(cfg)


def test_the_philly_trace_reads_with_its_virtual_clusters():
    """The point of this test is the shipped Philly file (../shared/traces)."""
    path = SHARED_DIR / "traces" / "philly" / "philly.csv"
    if not path.is_file():
        if os.environ.get("PACML_REQUIRE_SHARED") == "1":  # CI: a missing ../shared is a failure
            pytest.fail(f"PACML_REQUIRE_SHARED=1 but no Philly trace at {path}")
        pytest.skip(f"Philly trace not found at {path} (../shared is absent in a user's clone)")
    with pytest.raises(TraceFormatError, match=r"philly\.csv:3: timestamp goes back in time"):
        read_trace(TraceConfig(path=str(path)))
    t = read_trace(TraceConfig(path=str(path), sort=True, filter={"cluster": "6214e9"}))
    assert len(t.submit_s) == 41_226 and np.all(np.diff(t.submit_s) >= 0)
    assert np.median(t.duration_s) == 1902.0


# A trace small enough to follow by hand: rows 1..3 (first_row 1, last_row 4) were submitted at
# 110, 120 and 140 s and ran 200, 300 and 400 s.
HAND = Trace(np.array([100.0, 110.0, 120.0, 140.0, 200.0]), np.array([100.0, 200.0, 300.0, 400.0, 500.0]), "hand")


def hand_workload(load_gap_s=(0.5, None), horizon_s=10.0, **cfg):
    from pacml.sim.trace import trace_workload

    # 50 training steps at the reference duration; the pool's mean step 0.2 s; 4 workers
    return trace_workload(HAND, TraceConfig(first_row=1, last_row=4, **cfg), 50, 0.2, 4, load_gap_s, horizon_s)


def test_a_trace_range_rescaled_to_an_offered_load_worked_by_hand():
    w = hand_workload()
    assert w.offset_s.tolist() == [0.0, 10.0, 30.0]  # from the range's first job
    # steps: round(50 x duration / median 300 s) = round(33.3, 50, 66.7)
    assert w.steps.tolist() == [33, 50, 67] and w.steps.dtype == np.int64 and w.mean_steps == 50.0
    # load 0.5 on 4 workers: a mean gap of 0.2 s x 50 steps / (0.5 x 4) = 5 s against the
    # trace's 30 s / 2 gaps = 15 s: one third of a simulation second per trace second
    assert w.time_factor == pytest.approx(1 / 3, rel=1e-15)
    assert hand_workload((0.5, 6.0)).time_factor == w.time_factor  # a load wins over a gap
    # a fixed gap instead of a load: 6 s / 15 s
    assert hand_workload((None, 6.0)).time_factor == pytest.approx(0.4, rel=1e-15)
    # a reference duration of 400 s: round(50 x 0.5, 0.75, 1) (37.5 rounds to even)
    assert hand_workload((None, 6.0), reference_duration_s=400.0).steps.tolist() == [25, 38, 50]


def test_a_trace_ranges_limits_worked_by_hand():
    # the range spans 30 s x 1/3 = 10 s once rescaled: a 10 s horizon fits, 10.5 s does not
    with pytest.raises(
        ConfigError,
        match=r"^<defaults>: config key 'trace\.last_row' = 4: rows \[1, 4\) of hand span 10 s once rescaled, shorter than workload\.horizon_s = 10\.5$",
    ):
        hand_workload(horizon_s=10.5)
    # a span under one second is a span
    short = Trace(np.array([0.0, 0.25, 0.5]), np.ones(3), "short")
    from pacml.sim.trace import trace_workload

    assert trace_workload(short, TraceConfig(), 50, 0.2, 4, (None, 1.0), 1.0).time_factor == 4.0
    at_once = Trace(np.array([3.0, 3.0, 3.0]), np.ones(3), "at_once")
    with pytest.raises(
        ConfigError,
        match=r"^<defaults>: config key 'trace\.last_row' = 3: every job of the range was submitted at one instant \(at_once\)$",
    ):
        trace_workload(at_once, TraceConfig(last_row=3), 50, 0.2, 4, (None, 1.0), 1.0)


@pytest.mark.parametrize(
    ("first", "last", "message"),
    [
        (0, 6, r"'trace\.last_row' = 6: must lie within the 5 jobs of hand$"),
        (0, -1, r"'trace\.last_row' = -1: must lie within the 5 jobs of hand$"),
        (5, None, r"'trace\.first_row' = 5: must lie in \[0, last_row = 5\) \(hand\)$"),
        (-1, 3, r"'trace\.first_row' = -1: must lie in \[0, last_row = 3\) \(hand\)$"),
        (2, 3, r"'trace\.last_row' = 3: the range holds 1 job; need 2 or more$"),
        (0, 0, r"'trace\.first_row' = 0: must lie in \[0, last_row = 0\) \(hand\)$"),
    ],
)
def test_a_trace_row_range_outside_the_trace_names_its_key(first, last, message):
    from pacml.sim.trace import trace_rows

    with pytest.raises(ConfigError, match=r"^<defaults>: config key " + message):
        trace_rows(HAND, TraceConfig(first_row=first, last_row=last))


def test_the_smallest_ranges_are_taken():
    from pacml.sim.trace import trace_rows

    assert trace_rows(HAND, TraceConfig(first_row=3, last_row=5)) == slice(3, 5)  # two jobs
    assert trace_rows(HAND, TraceConfig(first_row=0, last_row=2)) == slice(0, 2)
    assert trace_rows(HAND, TraceConfig()) == slice(0, 5)


def test_trace_episodes_worked_by_hand():
    """At 0.4 simulation s per trace s the range's jobs arrive at 0, 4 and 12 s. With an 8 s
    horizon an episode starts at job 0 (jobs 0 and 1: 0, 4 s) or job 1 (jobs 1 and 2: 0, 8 s);
    job 2 is too late a start for a whole horizon. A job's gap is the time to the next
    arrival; the last one's is the range's mean gap, 15 s x 0.4."""
    from pacml.config import WorkloadConfig
    from pacml.sim.trace import trace_arrivals, trace_window
    from pacml.sim.workload import BetaPMF

    w = hand_workload((None, 6.0), horizon_s=8.0)
    windows = set()
    for seed in range(16):
        times, steps = trace_window(w, 8.0, np.random.default_rng(seed))
        windows.add((tuple(times.tolist()), tuple(steps.tolist())))
    assert windows == {((0.0, 4.0), (33, 50)), ((0.0, 8.0), (50, 67))}
    pmf = BetaPMF(np.array([0.5]), np.array([1.0]))
    for seed in range(4):
        arr = trace_arrivals(w, WorkloadConfig(horizon_s=8.0), 3, pmf, np.random.default_rng(seed))
        assert arr.interarrival_s.tolist() in ([4.0, 6.0], [8.0, 6.0])
        assert arr.beta.tolist() == [0.5, 0.5] and set(arr.graph.tolist()) <= {0, 1, 2}


def test_a_trace_model_without_a_load_takes_the_configured_gap():
    # workload.offered_load unset: the trace's mean gap becomes workload.interarrival_s
    trace = bursty_trace(500)
    m = trace_model(trace, "workload.offered_load=null", "workload.interarrival_s=250", "workload.horizon_s=1000")
    mean_gap = (trace.submit_s[-1] - trace.submit_s[0]) / 499
    assert m.trace_workload.time_factor == pytest.approx(250 / mean_gap, rel=1e-12)
    assert m.interarrival_s == 250
    # a model rebuilt from another's parts (as the imitation teacher's is) replays its trace
    again = ClusterModel(m.graphs, m.cfg, m.cache, m.trace)
    first, second = (Episode(x, "beta_a", episode_rngs(3)[0]).arrivals for x in (m, again))
    assert np.array_equal(first.time_s, second.time_s) and np.array_equal(first.steps, second.steps)


def test_a_trace_and_its_config_key_must_come_together():
    cfg = load_config(overrides=[*TOY_CLUSTER])
    with pytest.raises(
        ConfigError,
        match=r"^<defaults>: config key 'trace\.path' = None: a trace was given but the config names no trace file$",
    ):
        ClusterModel(toy_pool(), cfg, trace=bursty_trace(100))
    named = load_config(overrides=[*TOY_CLUSTER, "trace.path=bursty.csv"])
    with pytest.raises(
        ConfigError,
        match=r"^<defaults>: config key 'trace\.path' = 'bursty\.csv': the config names a trace but none was read \(pacml\.trace_csv\)$",
    ):
        ClusterModel(toy_pool(), named)


@pytest.mark.parametrize("scales", ["pool", "fixed"])
def test_job_length_features_read_a_trace_jobs_own_length(scales):
    from pacml.env.features import FeatureSpace, LogScales

    agent = [f"agent.feature_scales={scales}", "agent.shape_features=true"]
    m = trace_model(bursty_trace(3_000), "workload.offered_load=0.9", *agent)
    own_cfg = load_config(overrides=[*TOY_CLUSTER, *agent, "agent.job_length_features=true"])
    args = (m.graphs, m.sequential_jct_s, m.topology.num_workers, m.max_degree + 1)
    graph_space, own_space = FeatureSpace.for_agent(m.cfg, *args), FeatureSpace.for_agent(own_cfg, *args)
    ep = Episode(m, "beta_a", episode_rngs(3)[0])
    seen, windows_moved = 0, 0
    for _ in range(40):
        d = ep.decision
        own, by_graph = own_space.decision_vector(d), graph_space.decision_vector(d)
        # the shape part: release windows in the job's own sequential JCT under fixed scales
        windows_moved += not np.array_equal(own[17 + 9 :], by_graph[17 + 9 :])
        seq, steps = d.sequential_jct_s, d.num_training_steps
        assert seq == m.sequential_step_s[d.graph_index] * steps  # the job's own, from its steps
        if scales == "fixed":
            s = LogScales((0.0, 6.0), (6.0, 12.0), (0.0, 4.0))
            assert own[2] == np.float32(s.scale(seq, s.seconds)) and own[3] == np.float32(
                s.scale(d.beta * seq, s.seconds)
            )
            assert own[8] == np.float32(s.scale(steps, s.counts))
        else:
            lo, hi = m.sequential_jct_s.min(), m.sequential_jct_s.max()
            assert own[2] == np.float32((seq - lo) / (hi - lo)) and own[3] == np.float32(d.beta * seq / hi)
            assert own[8] == by_graph[8] == 1.0  # every graph trains 50 steps: min-max over a constant is 1
        seen += steps != m.num_training_steps[d.graph_index]
        if steps != m.num_training_steps[d.graph_index]:
            assert own[2] != by_graph[2]
        ep.step(int(np.flatnonzero(d.mask)[-1]))
    assert seen > 30  # trace jobs rarely train for their graph's 50 steps
    assert (windows_moved > 0) == (scales == "fixed")  # pool scales: windows in the pool's mean JCT


def test_job_length_features_change_nothing_without_a_trace():
    from pacml.env.features import FeatureSpace

    for scales in ("pool", "fixed"):
        agent = [*TOY_CLUSTER, f"agent.feature_scales={scales}", "agent.shape_features=true"]
        plain, own = load_config(overrides=agent), load_config(overrides=[*agent, "agent.job_length_features=true"])
        m = ClusterModel(toy_pool(), plain)
        args = (m.graphs, m.sequential_jct_s, m.topology.num_workers, m.max_degree + 1)
        a, b = FeatureSpace.for_agent(plain, *args), FeatureSpace.for_agent(own, *args)
        ep = Episode(m, "beta_a", episode_rngs(0)[0])
        for _ in range(30):
            assert np.array_equal(a.decision_vector(ep.decision), b.decision_vector(ep.decision))
            ep.step(int(np.flatnonzero(ep.decision.mask)[-1]))
