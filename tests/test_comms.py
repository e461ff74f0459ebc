"""Transfer times, checked against numbers worked out by hand from ddls.md 3.3."""

import pytest

from pacml.cluster.comms import all_reduce_time_s, one_to_one_time_s
from pacml.config import ClusterConfig

CFG = ClusterConfig()  # 4e11 B/s per channel, 50 ns propagation, 100 ns I/O


def test_one_to_one():
    assert one_to_one_time_s(4e8, CFG) == pytest.approx(50e-9 + 200e-9 + 1e-3, rel=1e-15)
    assert one_to_one_time_s(1, CFG) == pytest.approx(50e-9 + 200e-9 + 1 / 4e11, rel=1e-15)  # a byte is a flow
    assert one_to_one_time_s(0, CFG) == 0.0


def test_all_reduce_across_two_comm_groups():
    # sub = [2, 1, 1, 1]: one step; message 2e8, eff = 4, per-tx 1e11 (B11)
    # comm = 250e-9 + 2e8 / 4e11 = 5.0025e-4; comp = (1 * 2e8 / 2) / min(2e12 / 6, 130e12) = 3e-4
    assert all_reduce_time_s(4e8, 2, 1, 1, CFG) == pytest.approx(2 * 5.0025e-4 + 3e-4, rel=1e-12)


def test_all_reduce_over_a_16_block():
    # the (4,4,1) block: G=4, racks=4, server index 1: sub = [4, 1, 4, 1]
    # step 0: m = 4e8, eff = 4 // 3 = 1: comm 250e-9 + 4e-3; comp = (2 * 4e8 / 2) / 4e11 = 1e-3
    # step 2: m = 1e8: comm 250e-9 + 1e-3; comp = (2 * 1e8 / 2) / 4e11 = 2.5e-4
    expected = 2 * (4.00025e-3 + 1.00025e-3) + 1e-3 + 2.5e-4
    assert all_reduce_time_s(1.6e9, 4, 4, 1, CFG) == pytest.approx(expected, rel=1e-12)


def test_all_reduce_bandwidth_fix_halves_nothing_but_bandwidth():
    fixed = ClusterConfig(collective_bandwidth_per_channel_divided=False)
    # per-tx bandwidth 4e11 instead of 1e11: the transfer term shrinks 4x
    assert all_reduce_time_s(4e8, 2, 1, 1, fixed) == pytest.approx(2 * (250e-9 + 2e8 / 16e11) + 3e-4, rel=1e-12)


def test_single_server_collective_is_free_of_steps():
    assert all_reduce_time_s(1e9, 1, 1, 1, CFG) == 0.0


def test_an_all_reduce_over_more_peers_than_transceivers_is_refused_naming_the_keys():
    """One transceiver per node (C = 1) and 3 servers a rack: the last step has 3 peers."""
    from pacml.errors import InfeasibleClusterError

    cfg = ClusterConfig(communication_groups=1, racks_per_group=1, servers_per_rack=3)
    with pytest.raises(
        InfeasibleClusterError,
        match=r"^all-reduce over 3 peers exceeds the 1 transceivers per node \(step 3\); "
        r"reduce cluster\.servers_per_rack or raise cluster\.communication_groups$",
    ):
        all_reduce_time_s(1e9, 1, 1, 3, cfg)


def test_reconfiguration_is_paid_once_per_transfer_and_per_collective_step():
    slow = ClusterConfig(reconfiguration_s=1e-6)
    assert one_to_one_time_s(4e8, slow) == pytest.approx(50e-9 + 200e-9 + 1e-6 + 1e-3, rel=1e-15)
    assert one_to_one_time_s(0, slow) == 0.0  # nothing sent, no circuit set up
    # the (4,4,1) block has two non-trivial steps, each in reduce-scatter and all-gather: 4 x 1 us
    base = all_reduce_time_s(1.6e9, 4, 4, 1, CFG)
    assert all_reduce_time_s(1.6e9, 4, 4, 1, slow) == pytest.approx(base + 4e-6, rel=1e-12)
    # two comm groups: one step, paid twice
    assert all_reduce_time_s(4e8, 2, 1, 1, slow) == pytest.approx(
        all_reduce_time_s(4e8, 2, 1, 1, CFG) + 2e-6, rel=1e-12
    )


def test_zero_reconfiguration_is_bit_for_bit_the_paper():
    zero = ClusterConfig(reconfiguration_s=0.0)
    for size in (1.0, 3.3e7, 4e8):
        assert one_to_one_time_s(size, zero) == 50e-9 + 2 * 100e-9 + size / 4e11
