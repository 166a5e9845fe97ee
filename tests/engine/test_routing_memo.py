"""route() routes the same flows on the same context once; anything a route depends on changes
the answer. Uses ``mini()`` of test_routing (2 hosts × 2 GPUs, 2 leaves, 2 spines)::

    [hX/gpuI]--pcie--[hX/pcie0]--pcie--[hX/nicI]==400==[leafI]==400==[spineS]
"""
import numpy as np

from designer.engine.routing import FailureSet, route, routing_context
from designer.engine.traffic.flows import Flows
from tests.engine.test_routing import mini


def _flows(topo, pairs, pattern_id="p"):
    ids = {n: i for i, n in enumerate(topo.node_ids)}
    return Flows.from_pairs([ids[a] for a, _ in pairs], [ids[b] for _, b in pairs], 1e9, pattern_id=pattern_id)


PAIRS = [("h0/gpu0", "h1/gpu0"), ("h0/gpu1", "h1/gpu0"), ("h1/gpu1", "h0/gpu0")]


def _same(a, b):
    return all(np.array_equal(getattr(a, k), getattr(b, k)) for k in ("flow_ptr", "flow_res", "owner", "share",
                                                                        "first", "count", "status", "class_code"))


def test_equal_flows_are_routed_once_and_routes_do_not_change():
    topo = mini()
    first = route(topo, _flows(topo, PAIRS), multipath="hash", seed=3)
    # Another Flows object with the same identity (ids and bytes do not matter to routing).
    again = route(topo, _flows(topo, PAIRS, pattern_id="other"), multipath="hash", seed=3)
    assert again is first


def test_seed_policy_mode_and_flows_are_part_of_the_key():
    topo = mini()
    base = route(topo, _flows(topo, PAIRS), seed=3)
    for kwargs in ({"seed": 4}, {"nic_policy": "pxn", "seed": 3}, {"multipath": "split", "seed": 3}):
        other = route(topo, _flows(topo, PAIRS), **kwargs)
        assert other is not base
        fresh = route(mini(), _flows(mini(), PAIRS), **kwargs)   # a new topology: no memo
        assert _same(other, fresh)
    shifted = _flows(topo, PAIRS)
    shifted.index = shifted.index + 1                            # another hash identity
    assert route(topo, shifted, seed=3) is not base


def test_failures_and_derived_contexts_route_afresh():
    """A derived context starts as a copy of its base (memo included) but must route under its
    own failures: with h0/nic0 down, h0/gpu0's flow loses its only NIC under ``affinity``
    (unroutable) — the memoized baseline routes must not come back."""
    topo = mini()
    flows = _flows(topo, PAIRS)
    base_ctx = routing_context(topo)
    base = route(topo, flows, context=base_ctx)
    nic0 = topo.node_ids.index("h0/nic0")
    derived = routing_context(topo, FailureSet(frozenset([nic0]), frozenset()), base=base_ctx)
    after = route(topo, flows, context=derived)
    assert after is not base
    assert not _same(after, base)
    fresh = route(mini(), _flows(mini(), PAIRS), failed=FailureSet(frozenset([nic0]), frozenset()))
    assert _same(after, fresh)
    assert route(topo, flows, context=base_ctx) is base           # the base's memo is intact
