"""``fabric._hop_counts`` keeps its per-source bitsets in 64-bit words: every number of sources
around a word's and a byte's end gives each source's own breadth-first distances."""
from __future__ import annotations

import numpy as np
import pytest

from designer.engine.model.fabrics import build_cluster
from designer.engine.routing import fabric
from designer.engine.routing.context import FailureSet, RoutingContext
from designer.engine.model.topology import Topology


@pytest.fixture(scope="module")
def context():
    """223 live switches over three tiers (spine0 down: some distances -1)."""
    topo = Topology.from_document(build_cluster("dgx-h100", 512, tiers=3, leaves_per_rail=16))
    return RoutingContext(topo, FailureSet(frozenset([topo.node_index["spine0"]]), frozenset()))


@pytest.mark.parametrize("k", [0, 1, 7, 8, 9, 63, 64, 65, 130, 200])
def test_hop_counts_of_k_sources_are_one_search_each(context, k):
    ctx = context
    ptr, nbr = ctx.fabric._csr
    n = len(ptr) - 1
    assert n >= k
    ranks = np.sort(np.random.default_rng(k).choice(n, size=k, replace=False))
    hops = fabric._hop_counts(ptr, nbr, ranks)
    assert hops.shape == (len(ranks), n) and hops.dtype == np.int64
    rank_of = {int(r): node for node, r in enumerate(ctx.fabric.rank.tolist()) if r >= 0}
    for row, r in zip(hops, ranks.tolist()):
        assert row.tolist() == ctx.fabric.distances_to(rank_of[r]).tolist()
