"""The ring orders and tree chains built for all hosts at once (one array, hosts as rows) are
the flows of the host-by-host loop they replace, in the same order.

    h0: gpu0..gpu7   h1: gpu0..gpu7   h2: …   h3: …   (DGX H100, rail-optimized)

Reference: the loop, written out here; compared on 4 equal hosts (the array path), on hosts of
unequal size (a GPU left out: the loop path) and with the participants in a scrambled order.
"""
from __future__ import annotations

import numpy as np
import pytest

from designer.engine.traffic.collectives import tree
from designer.engine.traffic.collectives.common import group_of, host_blocks, ring_orders
from designer.engine.model.fabrics import build_cluster
from designer.engine.model.topology import Topology


@pytest.fixture(scope="module")
def topo():
    return Topology.from_document(build_cluster("dgx-h100", 4, fabric="rail-optimized"))


def _gpus(topo):
    return np.array([i for i, k in enumerate(topo.node_kind) if k == "gpu"], dtype=np.int64)


def _ring_reference(blocks, starts, count):
    orders = []
    for k in range(count):
        c = starts[k % len(starts)]
        pieces = []
        for h, block in enumerate(blocks):
            rotation = np.roll(block, -(c % len(block)))
            pieces.append(rotation if h % 2 == 0 else rotation[::-1])
        orders.append(np.concatenate(pieces))
    return orders


def _tree_reference(topo, group):
    starts = group.rails or list(range(group.per_node))
    channels = group.channels or len(starts)
    srcs, dsts = [], []
    for k in range(channels):
        c = starts[k % len(starts)]
        heads = []
        for block in group.blocks:
            chain = np.roll(block, -(c % len(block)))
            heads.append(chain[0])
            if len(chain) > 1:
                s, d = tree.edges_both_ways(chain[1:], chain[:-1])
                srcs += [s, s]
                dsts += [d, d]
        heads = np.array(heads, dtype=np.int64)
        for parent, child in tree.node_trees(len(heads)):
            s, d = tree.edges_both_ways(heads[child], heads[parent])
            srcs.append(s)
            dsts.append(d)
    return np.concatenate(srcs), np.concatenate(dsts)


def _participant_sets(topo):
    gpus = _gpus(topo)
    rng = np.random.default_rng(3)
    return {"equal": gpus, "unequal": gpus[:-1], "scrambled": rng.permutation(gpus)}


@pytest.mark.parametrize("which", ["equal", "unequal", "scrambled"])
def test_ring_orders_match_the_host_loop(topo, which):
    p = _participant_sets(topo)[which]
    blocks = host_blocks(topo, p)
    per_host = min(len(b) for b in blocks)
    got = ring_orders(topo, p)
    want = _ring_reference(blocks, list(range(per_host)), per_host)
    assert len(got) == len(want) == per_host
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    assert sorted(got[0].tolist()) == sorted(p.tolist())   # every participant once per ring


@pytest.mark.parametrize("which", ["equal", "unequal", "scrambled"])
def test_tree_flows_match_the_host_loop(topo, which):
    p = _participant_sets(topo)[which]
    group = group_of(topo, {"kind": "allreduce", "bytes": 1e9, "participants": p})
    src, dst, _ = tree.flows(topo, group)
    ref_src, ref_dst = _tree_reference(topo, group)
    np.testing.assert_array_equal(src, ref_src)
    np.testing.assert_array_equal(dst, ref_dst)
    assert len(src) > 0


def test_host_blocks_are_remembered_read_only_and_follow_the_participants(topo):
    gpus = _gpus(topo)
    first = host_blocks(topo, gpus)
    again = host_blocks(topo, gpus.copy())
    assert all(a is b for a, b in zip(first, again))          # the same arrays, not recomputed
    with pytest.raises(ValueError):
        first[0][0] = -1                                      # shared: nobody may write into them
    fewer = host_blocks(topo, gpus[:-1])                      # other participants, other blocks
    assert [len(b) for b in fewer] == [8, 8, 8, 7]
    assert [len(b) for b in host_blocks(topo, gpus)] == [8, 8, 8, 8]
