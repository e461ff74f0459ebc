"""The compact placer (cluster.placement: compact) beside ddls' first-fit."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pacml.cluster.placement import PLACERS, place, place_compact
from pacml.cluster.topology import RampTopology
from pacml.config import ClusterConfig, load_config
from pacml.graphs.opgraph import training_graph
from pacml.graphs.partition import partition

TOPO = RampTopology(ClusterConfig())  # the paper's 4 x 4 x 2
Q = 1e-5  # partition.min_op_time_s
DEGREES = st.sampled_from(TOPO.placeable_degrees)
OCCUPANCY = st.integers(0, TOPO.all_mask)  # the busy servers


def mixed_chain():
    """Three forward ops of 15 us, 1 ms, 15 us: degrees 2, 4, 2 at action 4."""
    t = np.array([1.5e-5, 1e-3, 1.5e-5])
    return training_graph(
        name="mixed",
        forward_names=["node1", "node2", "node3"],
        descriptions=["a", "b", "c"],
        forward_time_s=t,
        backward_time_s=2 * t,
        activation_bytes=np.full(3, 1e6),
        parameter_bytes=np.zeros(3),
        forward_edges=[(0, 1), (1, 2)],
        last_forward=2,
    )


def test_compact_puts_each_op_on_the_first_servers_of_the_jobs_block():
    pg = partition(mixed_chain(), 4, Q)
    assert pg.degree[:3].tolist() == [2, 4, 2]
    # the first block of 4 is the (2, 2, 1) square at the origin: servers (c, r, 0), c, r in {0, 1}
    p = place_compact(pg, TOPO, TOPO.all_mask)
    by_op = [sorted(set(p.sub_op_server[pg.offset[i] : pg.offset[i + 1]].tolist())) for i in range(6)]
    assert by_op == [[0, 2], [0, 2, 8, 10], [0, 2], [0, 2], [0, 2, 8, 10], [0, 2]]
    assert p.workers_mask == (1 << 0) | (1 << 2) | (1 << 8) | (1 << 10) and p.num_workers == 4
    # server 8 busy: the next origin in scan order is s0 = 1
    q = place_compact(pg, TOPO, TOPO.all_mask & ~(1 << 8))
    assert sorted(set(q.sub_op_server.tolist())) == [1, 3, 9, 11]


def test_compact_refuses_when_no_block_of_the_jobs_degree_is_free():
    pg = partition(mixed_chain(), 4, Q)
    # RAMP's shapes of 4 on 4 x 4 x 2: (2,2,1), (4,1,1), (2,1,2) and the diagonal
    four = (1 << 0) | (1 << 1) | (1 << 8) | (1 << 9)  # the (2,1,2) block at the origin
    p = place_compact(pg, TOPO, four)
    assert p.workers_mask == four and sorted(set(p.sub_op_server[pg.offset[0] : pg.offset[1]].tolist())) == [0, 1]
    # all of group 0 is free, yet every shape of 4 spans two groups
    group_0 = sum(1 << s for s in range(8))
    assert place_compact(pg, TOPO, group_0) is None
    assert place(pg, TOPO, group_0) is None


def test_compact_refuses_a_job_that_outgrows_its_servers_memory():
    tiny = RampTopology(ClusterConfig(worker_memory_bytes=3.9e6))
    pg = partition(mixed_chain(), 4, Q)
    # position 0 of the block holds a sub-op of ops 0 and 2 (2 MB over 2, both twins) and of
    # op 1 (2 MB over 4): 1 + 1 + 0.5 = 2.5 MB
    assert place_compact(pg, tiny, tiny.all_mask) is not None
    tighter = RampTopology(ClusterConfig(worker_memory_bytes=2.4e6))
    assert place_compact(pg, tighter, tighter.all_mask) is None


def test_gnmt_at_16_takes_21_servers_under_ddls_and_16_under_compact(paper_graphs):
    gnmt = next(g for g in paper_graphs if g.name == "gnmt")
    pg = partition(gnmt, 16, Q)
    assert place(pg, TOPO, TOPO.all_mask).num_workers == 21
    assert place_compact(pg, TOPO, TOPO.all_mask).num_workers == 16


@settings(max_examples=60, deadline=None)
@given(model=st.integers(0, 4), action=DEGREES, busy=OCCUPANCY)
def test_compact_never_puts_an_op_outside_the_jobs_n_servers(model_graphs, model, action, busy):
    pg = partition(model_graphs[model], action, Q, TOPO.placeable_degrees)
    free = TOPO.all_mask & ~busy
    p = place_compact(pg, TOPO, free)
    n = int(pg.degree.max())
    blocks = {mask: servers for mask, servers in TOPO.blocks(n)}
    free_blocks = [mask for mask in blocks if not mask & ~free]
    if p is None:
        assert not free_blocks  # memory never binds on 80 GB workers
        return
    assert p.workers_mask in free_blocks and p.num_workers == n == p.workers_mask.bit_count()
    servers = p.sub_op_server
    assert all(p.workers_mask >> int(s) & 1 for s in servers)  # no op outside the block
    for i in range(pg.graph.num_ops):
        own = servers[pg.offset[i] : pg.offset[i + 1]]
        assert len(set(own.tolist())) == pg.degree[i]  # one sub-op a server
        assert own.tolist() == list(blocks[p.workers_mask][: pg.degree[i]])


def test_the_config_picks_the_placer_and_the_engine_uses_it(model_graphs):
    from pacml.sim.experiment import ClusterModel

    assert PLACERS == {"ddls": place, "compact": place_compact}
    gnmt = model_graphs[1]
    for name, fn in PLACERS.items():
        model = ClusterModel([gnmt], load_config(overrides=[f"cluster.placement={name}"]))
        alloc = model.allocate(0, 16, TOPO.all_mask)
        expected = fn(model.partitioned(0, 16), TOPO, TOPO.all_mask)
        assert alloc.workers_mask == expected.workers_mask


def test_an_unknown_placer_is_refused_naming_the_key():
    from pacml.errors import ConfigError

    with pytest.raises(ConfigError, match=r"cluster\.placement"):
        load_config(overrides=["cluster.placement=tight"])


def small_graph(name, forward_time_s, activation_bytes, forward_edges):
    """Forward ops a, b, c, ... (backward twice as long, no parameters), the last one last."""
    t = np.asarray(forward_time_s, dtype=float)
    names = [chr(ord("a") + i) for i in range(len(t))]
    return training_graph(
        name=name,
        forward_names=names,
        descriptions=names,
        forward_time_s=t,
        backward_time_s=2 * t,
        activation_bytes=np.broadcast_to(np.asarray(activation_bytes, dtype=float), t.shape).copy(),
        parameter_bytes=np.zeros(len(t)),
        forward_edges=forward_edges,
        last_forward=len(t) - 1,
    )


def two_chains_join():
    """a (15 us), b (1 ms), c (15 us, after b), d (15 us, after a and c): at action 4, a, c and d
    have degree 2 and b 4; d has two parents of its degree."""
    return small_graph("join", [1.5e-5, 1e-3, 1.5e-5, 1.5e-5], 1e6, [(0, 1), (1, 2), (0, 3), (2, 3)])


@settings(max_examples=120, deadline=None)
@given(model=st.integers(0, 5), action=DEGREES, busy=OCCUPANCY)
def test_ddls_by_degree_equals_the_op_by_op_first_fit(model_graphs, model, action, busy):
    """Where memory cannot bind, `place` puts every op of degree n on the first free block of n;
    the op by op walk with every memory test gives the same servers for every sub-op."""
    from pacml.cluster.placement import _first_fit, _place_by_degree

    graph = model_graphs[model] if model < 5 else two_chains_join()
    pg = partition(graph, action, Q, TOPO.placeable_degrees)
    free = TOPO.all_mask & ~busy
    n_fwd = pg.graph.num_forward
    need = (pg.graph.memory_bytes[:n_fwd] + pg.graph.memory_bytes[n_fwd:]) / pg.degree[:n_fwd]
    fast, slow = _place_by_degree(pg, TOPO, free), _first_fit(pg, TOPO, free, need)
    assert (fast is None) == (slow is None)
    if fast is not None:
        assert np.array_equal(fast.sub_op_server, slow.sub_op_server)
        assert (fast.workers_mask, fast.num_workers) == (slow.workers_mask, slow.num_workers)


def test_ddls_tests_memory_op_by_op_when_it_can_bind():
    # three ops of 1 MB activations (both twins: 2 MB an op, over its degree): on one worker of
    # 4 MB all three fit as a chain of degree 1 only when memory is not tested
    g = mixed_chain()
    pg = partition(g, 1, Q)
    roomy = RampTopology(ClusterConfig(worker_memory_bytes=6.1e6))
    tight = RampTopology(ClusterConfig(worker_memory_bytes=4.1e6))
    one = 1 << 5
    assert place(pg, roomy, one).workers_mask == one
    assert place(pg, tight, one) is None  # the third op finds no room on the only free worker
    two = one | (1 << 6)
    p = place(pg, tight, two)  # the chain breaks where memory runs out: the third op moves on
    assert p.workers_mask == two
    assert p.sub_op_server[pg.offset[2]] == 6 and p.sub_op_server[pg.offset[0]] == 5


def four_op_chain(activation_bytes):
    """a -> b -> c -> d, 1 ms each: every op has degree 2 at action 2, and a sub-op needs its
    op's activation bytes (both twins hold them, over the degree 2)."""
    return small_graph("chain4", np.full(4, 1e-3), activation_bytes, [(0, 1), (1, 2), (2, 3)])


def servers_by_op(p, pg):
    return [tuple(p.sub_op_server[pg.offset[i] : pg.offset[i + 1]].tolist()) for i in range(pg.graph.num_ops)]


def test_ddls_first_fit_where_memory_binds_worked_by_hand():
    """Sub-ops need 2, 2, 1, 1 MB on 3 MB servers; RAMP's blocks of 2 come as (0, 8), (1, 9), ...

    a: no parent; the first block (0, 8) has room: 1 MB left on each.
    b: its parent's servers have 2 MB left in all, short of 2 x 2 MB; block (0, 8) is short
       too (1 MB < 2 MB), so (1, 9): 1 MB left on each.
    c: its parent's servers have exactly 2 x 1 MB left: c follows b onto (1, 9) (a walk without
       parents would take the first block with room, (0, 8)). Nothing is left there.
    d: its parent's servers are full; block (0, 8) has exactly the 1 MB d needs.
    """
    pg = partition(four_op_chain([2e6, 2e6, 1e6, 1e6]), 2, Q)
    assert pg.degree.tolist() == [2] * 8
    topo = RampTopology(ClusterConfig(worker_memory_bytes=3e6))
    p = place(pg, topo, topo.all_mask)
    forward = [(0, 8), (1, 9), (1, 9), (0, 8)]
    assert servers_by_op(p, pg) == forward + forward  # backward twins with their forward ops
    assert p.workers_mask == (1 << 0) | (1 << 1) | (1 << 8) | (1 << 9) and p.num_workers == 4
    assert p.sub_op_server.dtype == np.int64 and not p.sub_op_server.flags.writeable
    # with (1, 9) busy, b takes the next free block, (2, 10), and c follows it there
    q = place(pg, topo, topo.all_mask & ~(1 << 1))
    assert servers_by_op(q, pg)[:4] == [(0, 8), (2, 10), (2, 10), (0, 8)]
    assert q.workers_mask == (1 << 0) | (1 << 2) | (1 << 8) | (1 << 10)


def test_ddls_first_fit_fills_a_server_to_the_byte():
    # a's sub-ops need exactly a server's 2 MB (the others nothing): it fits, placed op by op
    # (its memory fills a server); with 1 byte less of memory no block can hold it
    pg = partition(four_op_chain([2e6, 0.0, 0.0, 0.0]), 2, Q)
    exact = RampTopology(ClusterConfig(worker_memory_bytes=2e6))
    assert servers_by_op(place(pg, exact, exact.all_mask), pg)[:4] == [(0, 8)] * 4
    short = RampTopology(ClusterConfig(worker_memory_bytes=2e6 - 1.0))
    assert place(pg, short, short.all_mask) is None


def test_ddls_places_a_job_needing_one_servers_memory_and_not_a_hair_more():
    # one op and its twin, each holding half a server's memory (80 GB), at degree 1: they fit
    # one server exactly; 5e-10 more (under the fast path's 1e-9 margin) and nothing fits
    cap = TOPO.cfg.worker_memory_bytes
    for frac, fits in ((1.0, True), (1 + 5e-10, False)):
        g = training_graph(
            "m", ["a"], [""], np.array([1e-3]), np.array([1e-3]), np.array([cap * frac / 2]), np.zeros(1), [], 0
        )
        placed = place(partition(g, 1, Q), TOPO, TOPO.all_mask)
        assert (placed is not None) == fits, frac
        if fits:
            assert placed.sub_op_server.tolist() == [0, 0]


def test_every_placer_returns_read_only_int64_servers_and_a_two_byte_key():
    """The step cache keeps a placement's servers and key for the whole run: the servers are
    int64 and read-only (a cached placement must never change under its key); the key holds two
    bytes per sub-op and per coordinate of each distinct server."""
    from pacml.cluster.placement import canonical_key

    pg = partition(mixed_chain(), 4, Q)
    tight = RampTopology(ClusterConfig(worker_memory_bytes=2.4e6))  # under the 2.5 MB a job needs: op by op
    placements = [
        place(pg, TOPO, TOPO.all_mask),
        place(pg, tight, tight.all_mask),
        place_compact(pg, TOPO, TOPO.all_mask),
    ]
    for p in placements:
        assert p.sub_op_server.dtype == np.int64 and not p.sub_op_server.flags.writeable
        with pytest.raises(ValueError, match="read-only"):
            p.sub_op_server[0] = 1
        distinct = len(set(p.sub_op_server.tolist()))
        assert len(canonical_key(p, TOPO)) == 2 * pg.num_sub_ops + 2 * 3 * distinct


def test_compact_fills_the_blocks_first_server_to_the_byte():
    """Ops of degree 6, 2 and 8 (at action 8) whose sub-ops need 1 MB each: the job takes a
    block of 8 and its first server holds a sub-op of every op, 3 MB."""
    # both twins' activations over 6, 2, 8: 1 MB a sub-op
    graph = small_graph("three_degrees", [5e-5, 1.5e-5, 1e-3], [3e6, 1e6, 4e6], [(0, 1), (1, 2)])
    pg = partition(graph, 8, Q)
    assert pg.degree[:3].tolist() == [6, 2, 8]
    exact = RampTopology(ClusterConfig(worker_memory_bytes=3e6))
    p = place_compact(pg, exact, exact.all_mask)
    assert p is not None and p.num_workers == 8
    short = RampTopology(ClusterConfig(worker_memory_bytes=3e6 - 1.0))
    assert place_compact(pg, short, short.all_mask) is None
