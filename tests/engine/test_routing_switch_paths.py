"""Equal-cost switch paths (``FabricPaths.switch_paths``) equal a plain depth-first enumeration —
every next hop found by scanning all of a switch's neighbours, at most
``MAX_EQUAL_COST_PATHS`` paths in depth-first order — for every pair of switches, on fabrics with
parallel links, a failed spine, more equal-cost paths than the cap, and three tiers.

Two-tier fabrics are ``mini()`` of test_routing (every leaf to every spine)::

    [hX/nicI]==[leafI]==[spine0..S-1]        (+ a second leaf0==spine0 link where asked)

Three tiers: 16 DGX-H100 under ``build_cluster(tiers=3)`` (leaves → pod spines → cores).
"""
from designer.engine.model.fabrics import build_cluster
from designer.engine.routing import FailureSet, routing_context
from designer.engine.routing.limits import MAX_EQUAL_COST_PATHS
from designer.engine.model.topology import Topology
from tests.engine.test_routing import mini


def plain_paths(fabric, x, y):
    """The reference: a stack walk that scans every step of every switch it visits."""
    dist = fabric.distances_to(y).tolist()
    rank = fabric.rank
    if rank[x] < 0 or dist[rank[x]] < 0:
        return []
    res_x = int(fabric.topo.node_resource[x])
    paths, stack = [], [(x, [res_x] if res_x >= 0 else [])]
    while stack and len(paths) < MAX_EQUAL_COST_PATHS:
        u, acc = stack.pop()
        if u == y:
            paths.append(acc)
            continue
        want = dist[rank[u]] - 1
        hops = [(v, step) for v, rv, step in fabric._steps(u) if dist[rv] == want]
        for v, step in reversed(hops):
            stack.append((v, acc + step))
    return paths


def assert_same_paths(topo, failed=None):
    """Every (x, y) pair of alive switches, in a fresh context (nothing cached); returns the
    largest path count seen."""
    ctx = routing_context(topo, failed) if failed is not None else routing_context(topo)
    switches = ctx.forwarders.tolist()
    most = 0
    for x in switches:
        for y in switches:
            got = ctx.fabric.switch_paths(x, y)
            assert got == plain_paths(ctx.fabric, x, y), (topo.node_ids[x], topo.node_ids[y])
            most = max(most, len(got))
    return most


def test_two_tier_with_parallel_links():
    topo = mini(hosts=2, spines=3, extra_links=[("leaf0", "spine0", 400, "eth400")])
    assert assert_same_paths(topo) == 4            # leaf0 → leaf1: spine0 twice (two links), 1, 2


def test_a_failed_spine():
    topo = mini(hosts=2, spines=3)
    spine0 = topo.node_ids.index("spine0")
    assert assert_same_paths(topo, FailureSet(frozenset([spine0]), frozenset())) == 2


def test_more_equal_cost_paths_than_the_cap():
    topo = mini(hosts=2, spines=MAX_EQUAL_COST_PATHS + 6)
    assert assert_same_paths(topo) == MAX_EQUAL_COST_PATHS   # truncated in the same order


def test_three_tiers():
    topo = Topology.from_document(build_cluster("dgx-h100", 16, tiers=3, leaves_per_rail=2))
    # 16 leaves of 8 uplinks: 2 pod spines (bundles of 4, 64 leaf ports each) under 1 core that
    # fills its 128 ports (clos.core_plan); spine0 → spine1 in two hops: 16 leaves + the core.
    assert assert_same_paths(topo) == 17
