"""One-step simulation on cases computed by hand (tests/conftest.py: two_layer_graph)."""

import dataclasses

import numpy as np
import pytest

from pacml.cluster.comms import all_reduce_time_s, transfer_time_s
from pacml.cluster.placement import Placement, place
from pacml.cluster.topology import RampTopology
from pacml.config import ClusterConfig
from pacml.graphs.opgraph import training_graph
from pacml.graphs.partition import PartitionedGraph, op_degrees, partition
from pacml.sim.jct import simulate_step, transfer_times_s

from conftest import two_layer_graph

TOPO = RampTopology(ClusterConfig())
Q = 1e-5


def step(graph, a, scale=1000.0, free=None):
    pg = partition(graph, a, Q)
    pl = place(pg, TOPO, TOPO.all_mask if free is None else free)
    return pg, pl, simulate_step(pg, pl, TOPO, scale)


def test_chain_on_one_worker_is_the_sum_of_op_times():
    _, pl, res = step(two_layer_graph(), 1)
    assert pl.num_workers == 1 and pl.workers_mask == 1  # server (0,0,0)
    assert res.step_time_s == pytest.approx(10.0, rel=1e-15)  # (1+2+3+4) ms x 1000
    assert res.utilisation == pytest.approx(1.0)


def test_chain_split_two_ways_with_its_transfers():
    g = two_layer_graph(act_a=4e8, act_b=8e8)
    pg, pl, res = step(g, 2)
    # every op splits in 2 onto servers (0,0,0) and (1,0,0): a 2-server collective for every
    # group. Sizes (ddls B7/B8, split order A, A', B, B'): A->B mem(A)/4 per sub-dep (4 of
    # them, M = mem(A)); B->B' mem(B)/4 (M = mem(B)); B'->A' mem(A')/4 (M = mem(A)); sync
    # pairs carry the sub-op memory both ways (M = mem(A) for A', mem(B) for B').
    assert sorted(set(pl.sub_op_server.tolist())) == [0, TOPO.index(1, 0, 0)]
    t_a = all_reduce_time_s(4e8, 2, 1, 1, TOPO.cfg)
    t_b = all_reduce_time_s(8e8, 2, 1, 1, TOPO.cfg)
    # A (0.5) -> T_a -> B (1.0) -> T_b -> B' (2.0) -> T_a -> A' (1.5) -> its sync T_a
    assert res.step_time_s == pytest.approx(5.0 + 3 * t_a + t_b, rel=1e-12)
    assert pl.num_workers == 2
    assert res.utilisation == pytest.approx(10.0 / (2 * res.step_time_s))


def test_one_to_one_when_split_meets_unsplit():
    # B has zero time: degree 1, so A's split sub-ops send one-to-one to one server
    g = training_graph(
        "t",
        ["n1", "n2"],
        ["A", "B"],
        np.array([1e-3, 0.0]),
        np.array([1e-3, 0.0]),
        np.array([4e8, 1e6]),
        np.zeros(2),
        [(0, 1)],
        1,
        50,
    )
    pg = partition(g, 2, Q)
    assert pg.degree.tolist() == [2, 1, 2, 1]
    pl = place(pg, TOPO, TOPO.all_mask)
    dur = transfer_times_s(pg, pl, TOPO)
    cross = pl.sub_op_server[pg.src] != pl.sub_op_server[pg.dst]
    cfg = TOPO.cfg
    # A sub-op -> B: mem(B) / 2 (A split after... B never splits: A is the later split)
    a_to_b = (pg.sub_op[pg.src] == 0) & (pg.sub_op[pg.dst] == 1)
    assert pg.size_bytes[a_to_b].tolist() == [5e5, 5e5]
    assert dur[a_to_b & cross].tolist() == [250e-9 + 5e5 / 4e11] * int((a_to_b & cross).sum())
    assert np.all(dur[~cross] == 0)
    assert cfg.channel_bandwidth_bytes_per_s == 4e11


def test_degrees_follow_the_quantum_rule():
    g = training_graph(
        "t",
        ["a", "b", "c"],
        ["", "", ""],
        np.array([0.0, 0.5e-4, 1e-3]),
        np.zeros(3),
        np.ones(3),
        np.zeros(3),
        [(0, 1), (1, 2)],
        2,
        1,
    )
    # t/q = 0, 5, 100 -> smallest even >= : 0, 6, 100 -> min with a, at least 1
    assert op_degrees(g, 16, Q)[:3].tolist() == [1, 6, 16]
    assert op_degrees(g, 4, Q)[:3].tolist() == [1, 4, 4]
    assert op_degrees(g, 1, Q)[:3].tolist() == [1, 1, 1]
    assert not op_degrees(g, 16, Q).flags.writeable
    with pytest.raises(AssertionError, match="^action 0 places nothing$"):
        op_degrees(g, 0, Q)


def test_the_quantum_count_rounds_up_but_not_float_noise():
    # t/q = 2.3 -> 3 pieces -> 4; t/q = 2 + 3e-10 (float noise of a ms-to-s conversion) -> 2
    times = np.array([2.3e-5, 2.0000000003e-5])
    g = training_graph("q", ["a", "b"], ["", ""], times, np.zeros(2), np.ones(2), np.zeros(2), [(0, 1)], 1, 1)
    assert op_degrees(g, 16, Q)[:2].tolist() == [4, 2]


def test_partitioned_sizes_are_conserved_between_equal_splits():
    g = two_layer_graph()
    for a in (2, 4, 8, 16):
        pg = partition(g, a, Q)
        real = ~pg.is_sync
        a_to_b = real & (pg.sub_op[pg.src] == 0) & (pg.sub_op[pg.dst] == 1)
        assert pg.size_bytes[a_to_b].sum() == pytest.approx(4e8)
        assert int(pg.is_sync.sum()) == 2 * a * (a - 1)


def test_physical_scale_makes_the_network_matter():
    g = two_layer_graph()
    _, _, paper = step(g, 2, scale=1000.0)
    _, _, phys = step(g, 2, scale=1.0)
    comm = paper.step_time_s - 5.0
    assert phys.step_time_s == pytest.approx(5e-3 + comm, rel=1e-9)


def test_gnmt_takes_21_servers_at_16_and_10_at_8(paper_graphs):
    """PipeDream's gnmt profile (its ops' sizes decide the placement)."""
    gnmt = next(g for g in paper_graphs if g.name == "gnmt")
    assert place(partition(gnmt, 16, Q), TOPO, TOPO.all_mask).num_workers == 21
    assert place(partition(gnmt, 8, Q), TOPO, TOPO.all_mask).num_workers == 10
    for g in paper_graphs:
        if g.name != "gnmt":
            for a in TOPO.placeable_degrees:
                assert place(partition(g, a, Q), TOPO, TOPO.all_mask).num_workers == a


def test_jct_is_close_to_sequential_over_degree(model_graphs):
    for g in model_graphs:
        seq = g.step_time_s * 1000
        for a in (2, 4, 8):
            _, _, res = step(g, a)
            assert seq / a <= res.step_time_s < seq / a * 1.01 + 1e-9 or g.name == "gnmt"


def test_step_simulation_is_deterministic(model_graphs):
    for g in model_graphs:
        assert step(g, 6)[2] == step(g, 6)[2]


def test_occupied_cluster_moves_the_block():
    g = two_layer_graph()
    first = TOPO.blocks(2)[0][0]
    pg, pl, _ = step(g, 2, free=TOPO.all_mask & ~first)
    assert pl.workers_mask & first == 0
    assert dataclasses.is_dataclass(pl)


def hand_graph(compute_s, edges=(), sync=(), size_bytes=None, group=None):
    """Unsplit sub-ops with the given compute times; ``edges`` are (src, dst) dependencies,
    zero-byte (no transfer time) unless ``size_bytes`` says, those at the positions in ``sync``
    sync dependencies, in no transfer group unless ``group`` says."""
    n, e = len(compute_s), len(edges)
    return PartitionedGraph(
        graph=two_layer_graph(),
        action=1,
        degree=np.ones(n, dtype=np.int64),
        offset=np.arange(n + 1),
        sub_op=np.arange(n),
        sub_index=np.zeros(n, dtype=np.int64),
        compute_time_s=np.array(compute_s, dtype=float),
        memory_bytes=np.zeros(n),
        src=np.array([a for a, _ in edges], dtype=np.int64),
        dst=np.array([b for _, b in edges], dtype=np.int64),
        size_bytes=np.zeros(e) if size_bytes is None else np.array(size_bytes, dtype=float),
        is_sync=np.isin(np.arange(e), list(sync)),
        group=np.full(e, -1) if group is None else np.array(group),
    )


def hand_placement(servers):
    """Sub-op i on server ``servers[i]``."""
    used = set(servers)
    return Placement(sub_op_server=np.array(servers), workers_mask=sum(1 << s for s in used), num_workers=len(used))


def hand_step(compute_s, servers, edges=(), sync=(), size_bytes=None):
    """The simulated step (scale 1) of `hand_graph` on `hand_placement`."""
    return simulate_step(hand_graph(compute_s, edges, sync, size_bytes), hand_placement(servers), TOPO, 1.0)


def test_a_short_sub_op_preempts_a_long_one_on_its_server():
    """Four sub-ops on two servers, computed by hand (scale 1, zero-byte transfers take no
    time): server 0 holds X (10 s) and Y (1 s), server 1 holds W (2 s) and Z (10 s), with
    W -> Y -> Z. X starts at 0; Y becomes ready at 2 and, shorter, preempts X; Y ends at 3,
    Z runs 3..13 on server 1 while X finishes its remaining 8 s at 11: the step is 13 s.
    Without preemption (or longest first) Y would wait for X, and Z would end at 21."""
    result = hand_step([10.0, 2.0, 1.0, 10.0], [0, 1, 0, 1], [(1, 2), (2, 3)])  # X, W, Y, Z
    assert result.step_time_s == 13.0 and result.compute_busy_s == 23.0


def test_independent_sub_ops_the_last_with_no_input():
    # nothing depends on anything: one server runs them back to back, two in parallel
    assert hand_step([1.0, 2.0], [0, 0]).step_time_s == 3.0
    assert hand_step([1.0, 2.0], [0, 1]).step_time_s == 2.0


def test_even_one_byte_between_servers_takes_transfer_time():
    cfg = TOPO.cfg
    one_byte_s = float(transfer_time_s(np.array([1.0]), cfg.channel_bandwidth_bytes_per_s, cfg)[0])
    assert one_byte_s > 0
    assert hand_step([1.0, 1.0], [0, 1], [(0, 1)], size_bytes=[1.0]).step_time_s == 2.0 + one_byte_s
    assert hand_step([1.0, 1.0], [0, 0], [(0, 1)], size_bytes=[1.0]).step_time_s == 2.0  # one server: free


def test_equal_compute_times_tie_on_the_sub_op_id_and_preempt():
    """Server 0 holds P (id 0, 2 s), Q (id 1, 2 s, no input); server 1 holds R (id 2, 1 s)
    and S (id 3, 10 s) with R -> P -> S. Q starts at 0; P is ready at 1 and, with the same
    time but the smaller id, preempts Q: P runs 1..3, S 3..13 (Q ends at 4): 13 s. Keys
    without the id would let Q finish first (P 2..4, S 4..14)."""
    assert hand_step([2.0, 2.0, 1.0, 10.0], [0, 0, 1, 1], [(2, 0), (0, 3)]).step_time_s == 13.0


def test_a_preempted_sub_ops_stale_finish_does_not_end_its_preemptor():
    """R (id 0, 8 s) on server 1; P (id 1, 10 s) and Q (id 2, 5 s) on server 0, R -> Q.
    Q is ready at 8 and preempts P (5 < 10): Q runs 8..13, P's remaining 2 s 13..15. P's
    first finish event (at 10) is stale: taking it for Q's would end the step at 12."""
    assert hand_step([8.0, 10.0, 5.0], [1, 0, 0], [(0, 2)]).step_time_s == 15.0


def test_a_sync_dependency_does_not_hide_the_next_out_edge():
    # A (1 s, server 0) -> B by a sync dependency (B never waits for it), A -> C (5 s) as
    # data: B runs 0..2 on server 1, C is ready at 1 and runs 2..7
    assert hand_step([1.0, 2.0, 5.0], [0, 1, 1], [(0, 1), (0, 2)], sync=[0]).step_time_s == 7.0


def test_a_cycle_fails_naming_the_sub_ops_that_never_ran():
    # A runs; B and C wait for each other
    with pytest.raises(AssertionError, match="^deadlock: 2 sub-ops never ran$"):
        hand_step([1.0, 1.0, 1.0], [0, 0, 0], [(1, 2), (2, 1)])


def test_a_split_op_shares_its_time_and_memory_evenly():
    g = two_layer_graph(act_a=4e8, act_b=8e8)
    pg = partition(g, 2, Q)
    for op in range(g.num_ops):
        subs = slice(pg.offset[op], pg.offset[op + 1])
        n = int(pg.degree[op])
        assert n == 2 and pg.memory_bytes[subs].tolist() == [g.memory_bytes[op] / 2] * 2
        assert pg.compute_time_s[subs].tolist() == [g.compute_time_s[op] / 2] * 2
    assert pg.memory_bytes.sum() == pytest.approx(g.memory_bytes.sum())


def _three_ops():
    """A (1 ms, split in 2 at action 2) -> B -> C (no time: never split), activations 4e8, 1e6,
    3e6 bytes; their backward twins C' -> B' -> A' and the join C -> C'."""
    return training_graph(
        "abc", ["n1", "n2", "n3"], ["A", "B", "C"], np.array([1e-3, 0.0, 0.0]), np.array([1e-3, 0.0, 0.0]),
        np.array([4e8, 1e6, 3e6]), np.zeros(3), [(0, 1), (1, 2)], 2,
    )  # fmt: skip


def test_the_papers_sub_dependency_sizes_by_hand():
    g = _three_ops()
    a, b, c, a2, b2, c2 = range(6)  # forward A, B, C, then the twins A', B', C'
    mem = g.memory_bytes
    assert mem[b] != mem[c] and mem[b2] != mem[a2]  # so that taking the wrong op's memory shows
    pg = partition(g, 2, Q)
    assert pg.degree.tolist() == [2, 1, 1, 2, 1, 1]
    # each sub-op holds its op's memory and compute over the op's degree
    per_op = [(a, 2), (b, 1), (c, 1), (a2, 2), (b2, 1), (c2, 1)]
    assert pg.memory_bytes.tolist() == [mem[op] / n for op, n in per_op for _ in range(n)]
    assert pg.compute_time_s.tolist() == [g.compute_time_s[op] / n for op, n in per_op for _ in range(n)]
    sizes: dict[tuple[int, int], list[float]] = {}
    groups: dict[tuple[int, int], set[int]] = {}
    for s, d, size, sync, grp in zip(pg.src, pg.dst, pg.size_bytes, pg.is_sync, pg.group):
        if not sync:
            key = (int(pg.sub_op[s]), int(pg.sub_op[d]))
            sizes.setdefault(key, []).append(float(size))
            groups.setdefault(key, set()).add(int(grp))
    # split order (ddls B7/B8): A at step 0, A' at 1, the unsplit never. A -> B: B is not split
    # later than A, so B's memory over 2 x 1; B -> C and C' -> B' and the join: unsplit to
    # unsplit carries the source's memory; B' -> A': A' splits later, so B''s memory over 1 x 2
    assert sizes == {
        (a, b): [mem[b] / 2] * 2,
        (b, c): [mem[b]],
        (c2, b2): [mem[c2]],
        (b2, a2): [mem[b2] / 2] * 2,
        (c, c2): [mem[c]],
    }
    # collective groups: out-edges of a split forward op, in-edges of a split backward op
    assert groups == {(a, b): {a}, (b, c): {-1}, (c2, b2): {-1}, (b2, a2): {a2}, (c, c2): {-1}}
    plain = partition(g, 2, Q, paper_edge_sizes=False)  # the dependency's own size over n_u x n_v
    own = dict(zip(zip(g.src.tolist(), g.dst.tolist()), g.size_bytes.tolist()))
    got = {
        (int(plain.sub_op[s]), int(plain.sub_op[d])): float(z)
        for s, d, z, y in zip(plain.src, plain.dst, plain.size_bytes, plain.is_sync)
        if not y
    }
    assert got == {
        (a, b): own[(a, b)] / 2,
        (b, c): own[(b, c)],
        (c2, b2): own[(c2, b2)],
        (b2, a2): own[(b2, a2)] / 2,
        (c, c2): own[(c, c2)],
    }


def test_sync_pairs_of_every_split_backward_op_and_typed_read_only_arrays():
    # forward A (no time: never split) -> B (1 ms): A' unsplit, B' split in 2, so the sync
    # pairs of B' (both directions between its two sub-ops) follow an unsplit backward op
    g = training_graph(
        "ab", ["n1", "n2"], ["A", "B"], np.array([0.0, 1e-3]), np.array([0.0, 1e-3]),
        np.array([4e8, 1e6]), np.zeros(2), [(0, 1)], 1,
    )  # fmt: skip
    pg = partition(g, 2, Q)
    assert pg.degree.tolist() == [1, 2, 1, 2]  # A, B, A', B'
    b2_subs = [4, 5]  # sub-ops: A 0, B 1-2, A' 3, B' 4-5
    sync = [(int(s), int(d)) for s, d, y in zip(pg.src, pg.dst, pg.is_sync) if y]
    assert sync == [(b2_subs[0], b2_subs[1]), (b2_subs[1], b2_subs[0])]
    assert pg.group[pg.is_sync].tolist() == [-1, -1] and pg.action == 2  # sync pairs join no group
    kinds = {"src": np.int64, "dst": np.int64, "group": np.int64, "size_bytes": np.float64, "is_sync": np.bool_}
    for name in ("degree", "offset", "sub_op", "sub_index", "compute_time_s", "memory_bytes", *kinds):
        arr = getattr(pg, name)
        assert not arr.flags.writeable, name
        if name in kinds:
            assert arr.dtype == kinds[name], name


def test_a_backward_op_whose_forward_twin_has_a_parent_groups_by_destination():
    # forward ops listed out of topological order: op 1 -> op 0, so backward op 2 (the twin of
    # op 0, the first backward op) has an out-edge, 2 -> 3; both split in 2: the in-edges of a
    # split backward op form its group (3), not the source's id
    g = training_graph(
        "ba", ["n1", "n2"], ["B", "A"], np.array([1e-3, 1e-3]), np.array([1e-3, 1e-3]),
        np.array([4e6, 4e6]), np.zeros(2), [(1, 0)], 0,
    )  # fmt: skip
    pg = partition(g, 2, Q)
    assert pg.degree.tolist() == [2, 2, 2, 2]
    back = {int(grp) for s, grp, y in zip(pg.src, pg.group, pg.is_sync) if not y and pg.sub_op[s] == 2}
    assert back == {3}


def test_a_group_that_is_no_collective_leaves_the_next_group_one():
    """Group 0: sub-op 0 (server 0) sends to sub-ops 2 and 3 (servers 1 and 2): sources {0, 0}
    against destinations {1, 2}, two one-to-one transfers. Group 1: sub-ops 1 (server 0) and 4
    (server 1) send to each other: the same servers both ways, a collective, so both take the
    all-reduce time of the group's 2e6 bytes between two servers of one rack."""
    pg = hand_graph([1.0] * 5, [(0, 2), (0, 3), (1, 4), (4, 1)], size_bytes=[1e6] * 4, group=[0, 0, 1, 1])
    assert TOPO.coords[0].tolist()[:2] == TOPO.coords[1].tolist()[:2]  # servers 0 and 1 share a rack
    pl = hand_placement([0, 0, 1, 2, 1])
    dur = transfer_times_s(pg, pl, TOPO)
    one = float(transfer_time_s(1e6, TOPO.cfg.channel_bandwidth_bytes_per_s, TOPO.cfg))
    assert dur[:2].tolist() == [one, one]
    assert dur[2:].tolist() == [all_reduce_time_s(2e6, 1, 1, 2, TOPO.cfg)] * 2


def test_a_collective_counts_the_distinct_groups_racks_and_servers_it_touches():
    """Group 0: sub-ops on servers (0,0,0), (1,0,0) and (1,0,1) send round a cycle, so sources
    and destinations are the same servers: a collective over 2 communication groups, 1 rack
    index and 2 server indices. Group 1: (0,0,0) and (0,1,0) swap: 1 group, 2 racks, 1 server.
    Each transfer takes the all-reduce time of its group's total bytes over those counts.
    Group 2: (0,0,0) and (0,0,1) swap, one way with no bytes: still a collective, whose one
    crossing transfer takes its time (an empty transfer takes none)."""
    a, b, c = TOPO.index(0, 0, 0), TOPO.index(1, 0, 0), TOPO.index(1, 0, 1)
    d, e = TOPO.index(0, 1, 0), TOPO.index(0, 0, 1)
    pg = hand_graph(
        [1.0] * 7,
        [(0, 1), (1, 2), (2, 0), (3, 4), (4, 3), (5, 6), (6, 5)],
        size_bytes=[1e6, 2e6, 3e6, 5e6, 5e6, 7e6, 0.0],
        group=[0, 0, 0, 1, 1, 2, 2],
    )
    dur = transfer_times_s(pg, hand_placement([a, b, c, a, d, a, e]), TOPO)
    assert dur[:3].tolist() == [all_reduce_time_s(6e6, 2, 1, 2, TOPO.cfg)] * 3
    assert dur[3:5].tolist() == [all_reduce_time_s(1e7, 1, 2, 1, TOPO.cfg)] * 2
    assert dur[5:].tolist() == [all_reduce_time_s(7e6, 1, 1, 2, TOPO.cfg), 0.0]
    assert all_reduce_time_s(6e6, 2, 1, 2, TOPO.cfg) != all_reduce_time_s(6e6, 1, 2, 2, TOPO.cfg)


def test_a_sync_pair_takes_the_all_reduce_time_of_the_coordinates_its_servers_differ_in():
    """Sync pairs (both ways between two sub-ops) of four sizes on four server pairs: one
    differing in server index only, one in rack and server, one in group, rack and server, one
    in group and rack but not server index. Each takes the 2-transfer all-reduce time of twice
    its size over 1 or 2 groups, racks and servers as its two servers' coordinates differ."""
    servers = [
        TOPO.index(0, 0, 0), TOPO.index(0, 0, 1),
        TOPO.index(0, 1, 0), TOPO.index(0, 2, 1),
        TOPO.index(1, 0, 0), TOPO.index(2, 3, 1),
        TOPO.index(1, 1, 0), TOPO.index(3, 2, 0),
    ]  # fmt: skip
    edges = [(0, 1), (1, 0), (2, 3), (3, 2), (4, 5), (5, 4), (6, 7), (7, 6)]
    sizes = [1e6, 1e6, 2e6, 2e6, 3e6, 3e6, 4e6, 4e6]
    pg = hand_graph([1.0] * 8, edges, sync=range(8), size_bytes=sizes)
    dur = transfer_times_s(pg, hand_placement(servers), TOPO)
    expected = [
        all_reduce_time_s(2e6, 1, 1, 2, TOPO.cfg),
        all_reduce_time_s(4e6, 1, 2, 2, TOPO.cfg),
        all_reduce_time_s(6e6, 2, 2, 2, TOPO.cfg),
        all_reduce_time_s(8e6, 2, 2, 1, TOPO.cfg),
    ]
    assert dur.tolist() == [t for t in expected for _ in range(2)]
    assert all_reduce_time_s(8e6, 2, 2, 1, TOPO.cfg) != all_reduce_time_s(8e6, 2, 2, 2, TOPO.cfg)


def test_two_preemptions_in_a_row_by_hand():
    """Server 0 holds B (3 s) and E (1 s), server 1 holds A (9 s), C (6 s) and D (2 s), with
    B -> C -> D (zero-byte: no transfer time). At 0 A starts on server 1 and B on server 0,
    where E, shorter, preempts it: E 0..1, B 1..4. C, ready at 4, preempts A (5 s left): C
    4..10, D 10..12, A 12..17. Every run keeps its own token, so no preempted run's stale
    finish (A's at 9, B's at 3) ends the run that replaced it: the step is 17 s."""
    result = hand_step([9.0, 3.0, 6.0, 2.0, 1.0], [1, 0, 1, 1, 0], [(1, 2), (2, 3)])  # A, B, C, D, E
    assert result.step_time_s == 17.0 and result.compute_busy_s == 21.0
