import pytest

from pacml.cluster.topology import RampTopology, block_shapes
from pacml.config import ClusterConfig


def topo(C, R, S, max_degree=16):
    return RampTopology(
        ClusterConfig(communication_groups=C, racks_per_group=R, servers_per_rack=S, max_degree=max_degree)
    )


def test_valid_degrees_on_32_workers():
    assert topo(4, 4, 2).placeable_degrees == (1, 2, 4, 6, 8, 16)


def test_valid_degrees_on_8_workers():
    # 6 needs a 3-wide block, wider than C = 2; 16 exceeds the workers
    assert topo(2, 2, 2).placeable_degrees == (1, 2, 4, 8)


def test_valid_degrees_on_128_workers():
    # (4, 4, 8): 10 -> (2,1,5), 12 -> (2,2,3), 14 -> (2,1,7)
    assert topo(4, 4, 8).placeable_degrees == (1, 2, 4, 6, 8, 10, 12, 14, 16)


def test_shape_order_on_paper_cluster():
    assert block_shapes(2, 4, 4, 2) == ((2, 1, 1), (1, 1, 2), (1, 2, 1), (2, 2, -1))
    assert block_shapes(4, 4, 4, 2) == ((2, 2, 1), (4, 1, 1), (2, 1, 2), (4, 4, -1))
    assert block_shapes(6, 4, 4, 2) == ((3, 1, 2), (3, 2, 1))
    assert block_shapes(8, 4, 4, 2) == ((2, 2, 2), (4, 1, 2), (4, 2, 1))
    assert block_shapes(16, 4, 4, 2) == ((4, 4, 1),)
    for n in (10, 12, 14):
        assert block_shapes(n, 4, 4, 2) == ()


def test_first_block_of_16_is_the_s0_plane():
    t = topo(4, 4, 2)
    mask, servers = t.blocks(16)[0]
    assert servers == tuple(t.index(c, r, 0) for c in range(4) for r in range(4))
    assert mask.bit_count() == 16


def test_diagonal_block():
    t = topo(4, 4, 2)
    diag = [
        s for _, s in t.blocks(4) if len({t.coords[x][0] for x in s}) == 4 and len({t.coords[x][1] for x in s}) == 4
    ]
    assert diag[0] == tuple(t.index(i, i, 0) for i in range(4))


@pytest.mark.parametrize("C,R,S", [(4, 4, 2), (2, 2, 2), (8, 8, 8), (4, 4, 4)])
def test_blocks_have_n_distinct_servers_inside_the_cluster(C, R, S):
    t = topo(C, R, S)
    for n in t.placeable_degrees:
        for mask, servers in t.blocks(n):
            assert len(set(servers)) == n == mask.bit_count()
            assert all(0 <= s < t.num_workers for s in servers)


@pytest.mark.parametrize("key", ["communication_groups", "racks_per_group", "servers_per_rack"])
def test_a_topology_built_without_the_config_loader_still_refuses_an_empty_dimension(key):
    """RampTopology is public: a ClusterConfig made in code (not validated by load_config)
    with a zero dimension is refused, naming the key and the value."""
    from pacml.errors import ConfigError

    with pytest.raises(ConfigError, match=rf"config key 'cluster\.{key}' = 0: must be >= 1"):
        RampTopology(ClusterConfig(**{"racks_per_group": 1, key: 0}))
