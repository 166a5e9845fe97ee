"""``collectives.common._group_by_host`` (one lexsort) gives exactly the blocks of the
block-by-block reference: participants grouped by host or NVLink domain in order of first
appearance, each block by ``attrs.domain_index`` / ``index`` (ints, bools among them), nodes
without one last, ties by node index."""
from __future__ import annotations

import numpy as np
import pytest

from designer.engine.traffic.collectives import common
from designer.engine.model.fabrics import build_cluster
from designer.engine.model.topology import Topology


def _reference(topo, nodes):
    blocks = {}
    for n in np.asarray(nodes).tolist():
        blocks.setdefault(common.block_key(topo, n) or f"\0{n}", []).append(n)

    def local_key(n):
        index = topo.node_attrs[n].get("domain_index", topo.node_attrs[n].get("index"))
        return (0, index, n) if isinstance(index, int) else (1, 0, n)

    return [np.array(sorted(b, key=local_key), dtype=np.int64) for b in blocks.values()]


def _same(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)
        assert x.dtype == y.dtype == np.int64


@pytest.mark.parametrize("template, hosts", [("dgx-h100", 4), ("amd-mi300x", 3), ("gb200-nvl72", 2)])
@pytest.mark.parametrize("seed", range(4))
def test_blocks_equal_the_reference(template, hosts, seed):
    doc = build_cluster(template, hosts, fabric="rail-optimized")
    rng = np.random.default_rng(seed)
    for node in doc["nodes"]:   # scramble the local indices: ints, bools, floats, strings, none
        if node["kind"] == "gpu" and rng.random() < 0.5:
            attrs = node.setdefault("attrs", {})
            attrs.pop("domain_index", None)
            attrs["index"] = [int(rng.integers(0, 9)), True, 2.0, "3", None][int(rng.integers(0, 5))]
    topo = Topology.from_document(doc)
    every = np.array([i for i, k in enumerate(topo.node_kind) if k in ("gpu", "nic")], dtype=np.int64)
    for nodes in (every, rng.permutation(every), rng.choice(every, len(every) // 2, replace=False),
                  np.concatenate([every[:5], every[:5]]), every[:0]):
        _same(common._group_by_host(topo, nodes), _reference(topo, nodes))


def test_an_index_beyond_int64_sorts_block_by_block():
    doc = build_cluster("dgx-h100", 2, fabric="rail-optimized")
    gpu = next(n for n in doc["nodes"] if n["kind"] == "gpu")
    gpu.setdefault("attrs", {})["index"] = 2 ** 70
    topo = Topology.from_document(doc)
    gpus = np.array([i for i, k in enumerate(topo.node_kind) if k == "gpu"], dtype=np.int64)
    assert common._sorted_blocks(topo, gpus.tolist(), [topo.node_host[n] for n in gpus.tolist()]) is None
    _same(common._group_by_host(topo, gpus), _reference(topo, gpus))
