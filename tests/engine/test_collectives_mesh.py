"""Channels over a direct GPU mesh (AMD MI300X: no switch, one xGMI link per GPU pair).

One ``amd-mi300x`` host (catalog ``xgmi-mi300``: 48 GB/s effective per direction per link)::

    [gpu0]--[gpu1]--...--[gpu7]      every pair joined by one xGMI link: 28 links, 7 per GPU
    [gpuI]--[pcieI]--[nicI]==400G==[leafI]==[spine*]      (two hosts: rail-optimized)

A ring all-reduce moves 2(n−1)/n × S per GPU; spread over 7 link-disjoint rings, each directed
link carries 2(n−1)/n × S / 7 = S/4, so busbw = 2·7/8 × S / (S/4 / 48 GB/s) = 7 × 48 = 336 GB/s.
Before the mesh channels every ring was a rotation of 0→1→…→7 and rode the same 8 links: 48 GB/s.
"""
import numpy as np
import pytest

from designer.engine.traffic.collectives import group_of, ring_orders
from designer.engine.traffic.collectives import tree
from designer.engine.traffic.collectives.mesh import chain_paths, direct_mesh, rail_paths, ring_cycles
from designer.engine.model.fabrics import build_cluster
from designer.engine.analysis.simulate import simulate
from designer.engine.model.templates import host_document
from designer.engine.model.topology import Topology

GIB8 = 8 * 2**30
XGMI_GBS = 48.0


@pytest.fixture(scope="module")
def one():
    return Topology.from_document(host_document("amd-mi300x"))


@pytest.fixture(scope="module")
def two():
    return Topology.from_document(build_cluster("amd-mi300x", 2))


def _gpus(topo):
    return np.array([i for i, k in enumerate(topo.node_kind) if k == "gpu"], dtype=np.int64)


def _hops(order):
    return list(zip(order.tolist(), np.roll(order, -1).tolist()))


def _local(topo, g):
    return topo.node_attrs[g]["index"]


@pytest.mark.parametrize("m", [3, 4, 5, 6, 7, 8, 9, 10])
def test_ring_cycles_are_link_disjoint_hamiltonian_rings(m):
    """Every ring visits all m GPUs; no directed link is used twice; all m(m−1) links are used
    (m − 1 rings) except for m = 4 and 6, where no such decomposition exists (Tillson)."""
    cycles = ring_cycles(m)
    edges = [(c[i], c[(i + 1) % m]) for c in cycles for i in range(m)]
    assert all(sorted(c) == list(range(m)) for c in cycles)
    assert len(edges) == len(set(edges))
    assert len(cycles) == (m - 1 if m not in (4, 6) else len(cycles)) and len(cycles) >= 2


@pytest.mark.parametrize("m", [2, 4, 6, 8, 16])
def test_rail_paths_cover_every_directed_link_once_with_distinct_ends(m):
    paths = rail_paths(m)
    edges = [(p[i], p[i + 1]) for p in paths for i in range(m - 1)]
    assert len(edges) == len(set(edges)) == m * (m - 1)
    assert [p[0] for p in paths] == list(range(m))          # path a starts at GPU a
    assert sorted(p[-1] for p in paths) == list(range(m))   # every GPU ends exactly one path
    assert all(sorted(p) == list(range(m)) for p in paths)


def test_rail_paths_four_by_hand():
    """m = 4: zig-zag 0,1,3,2 and 1,2,0,3, then both reversed."""
    assert rail_paths(4) == ((0, 1, 3, 2), (1, 2, 0, 3), (2, 3, 1, 0), (3, 0, 2, 1))
    with pytest.raises(ValueError):
        rail_paths(5)


def test_mesh_detection_is_for_switchless_meshes_only(one):
    dgx = Topology.from_document(host_document("dgx-h100"))
    assert direct_mesh(one, _gpus(one))
    assert not direct_mesh(dgx, _gpus(dgx))                 # NVSwitch host
    assert not direct_mesh(one, _gpus(one)[:2])             # a pair: nothing to spread


def test_one_host_rings_use_all_56_directed_links(one):
    orders = ring_orders(one, _gpus(one))
    hops = [h for o in orders for h in _hops(o)]
    assert len(orders) == 7 and all(sorted(o.tolist()) == sorted(_gpus(one).tolist()) for o in orders)
    assert len(hops) == len(set(hops)) == 56


def test_nvswitch_host_rings_are_unchanged():
    """DGX H100: still one ring over the host's GPUs in index order (NVSwitch stripes it)."""
    dgx = Topology.from_document(host_document("dgx-h100"))
    orders = ring_orders(dgx, _gpus(dgx))
    assert len(orders) == 1 and orders[0].tolist() == _gpus(dgx).tolist()


def test_two_host_rings_are_rail_aligned_and_link_disjoint_per_host(two):
    """8 channels; each crosses a host on a Hamiltonian path and leaves it on the rail it enters
    the next host on; inside each host no directed xGMI link carries two channels; every
    host's NIC sends exactly one channel and receives one."""
    gpus = _gpus(two)
    orders = ring_orders(two, gpus, rails=list(range(8)))
    assert len(orders) == 8
    intra, out_rails = {}, {}
    for o in orders:
        for a, b in _hops(o):
            ha, hb = two.node_host[a], two.node_host[b]
            if ha == hb:
                intra.setdefault(ha, []).append((a, b))
            else:
                assert _local(two, a) == _local(two, b)        # rail-aligned hop
                out_rails.setdefault(ha, []).append(_local(two, a))
    assert all(len(v) == len(set(v)) == 56 for v in intra.values())
    assert all(sorted(v) == list(range(8)) for v in out_rails.values())


def test_two_host_rings_skip_paths_on_a_dead_rail(two):
    """Rail 3 down: the two paths that start or end on GPU 3 go, six channels stay."""
    orders = ring_orders(two, _gpus(two), rails=[r for r in range(8) if r != 3])
    assert len(orders) == 6
    for o in orders:
        for a, b in _hops(o):
            if two.node_host[a] != two.node_host[b]:
                assert _local(two, a) != 3


def test_tree_chains_load_every_directed_link_equally(one):
    """One host, 8 channels: chain c is the rail path starting at GPU c; up and down, the chains
    put the same bytes on all 56 directed xGMI links (a rotation would load 14 of them)."""
    assert chain_paths(one, [_gpus(one)])[2][0] == 2
    pattern = {"kind": "allreduce", "participants": _gpus(one), "bytes": GIB8}
    src, dst, nbytes = tree.flows(one, group_of(one, pattern))
    load = {}
    for s, d in zip(src.tolist(), dst.tolist()):
        load[(s, d)] = load.get((s, d), 0.0) + nbytes
    assert len(load) == 56 and len(set(load.values())) == 1


def _busbw(topo, algorithm):
    pattern = {"id": "c", "kind": "allreduce", "participants": {"kind": "gpu"}, "bytes": GIB8,
               "algorithm": algorithm}
    return simulate({"topology": topo, "workload": [pattern]})["summary"]["patterns"]["c"]


def test_one_host_allreduce_reaches_seven_links(one):
    """Ring: busbw = 7 × 48 = 336 GB/s less the latency term (was 48 with rotated rings);
    tree: the chains carry the same per-link bytes, same bound, × the 0.92 NCCL's tuner
    charges an all-reduce tree."""
    ring = _busbw(one, "ring")
    assert ring["busbw_gbs"] == pytest.approx(7 * XGMI_GBS, rel=2e-3)
    assert _busbw(one, "tree")["busbw_gbs"] == pytest.approx(0.92 * 7 * XGMI_GBS, rel=2e-3)


def test_two_host_ring_is_bound_by_seven_xgmi_links_of_eight_channels(two):
    """16 ranks, 8 channels: per GPU 7 of the 8 channels' sends ride xGMI (one each link),
    the eighth leaves on its NIC (400 Gb/s = 50 GB/s per direction): per xGMI link 1/8 of
    2(n−1)/n × S at 48 GB/s → busbw = 8 × 48 = 384 GB/s less latency."""
    p = _busbw(two, "ring")
    assert p["busbw_gbs"] == pytest.approx(8 * XGMI_GBS, rel=5e-3)
