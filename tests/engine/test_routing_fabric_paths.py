"""Fabric switch distances (numpy breadth-first search in switch-rank space) equal a plain
queue BFS over the alive switch links, with and without a failed spine. Topology: ``mini()``
of test_routing with 3 hosts × 2 GPUs, 2 leaves and 3 spines (every leaf to every spine)::

    [hX/nicI]==[leafI]==[spine0..2]
"""
from collections import deque

from designer.engine.routing import FailureSet, routing_context
from tests.engine.test_routing import mini


def plain_bfs(fabric, target):
    dist = {target: 0}
    queue = deque([target])
    while queue:
        u = queue.popleft()
        for v, _ in fabric.adj[u]:
            if v not in dist:
                dist[v] = dist[u] + 1
                queue.append(v)
    return dist


def check(ctx):
    fabric, switches = ctx.fabric, ctx.forwarders.tolist()
    for y in switches:
        expected = plain_bfs(fabric, y)
        for x in switches:
            assert fabric.distance(x, y) == expected.get(x, -1), (x, y)
        table = fabric.distances_to(y)
        assert len(table) == len(switches)   # one entry per switch, not per node


def test_distances_match_a_plain_bfs():
    topo = mini(hosts=3, spines=3)
    ctx = routing_context(topo)
    check(ctx)
    leaf0, leaf1 = topo.node_ids.index("leaf0"), topo.node_ids.index("leaf1")
    assert ctx.fabric.distance(leaf0, leaf1) == 2 and ctx.fabric.distance(leaf0, leaf0) == 0
    assert len(ctx.fabric.switch_paths(leaf0, leaf1)) == 3          # one per spine


def test_distances_with_a_failed_spine():
    topo = mini(hosts=3, spines=3)
    spine0 = topo.node_ids.index("spine0")
    ctx = routing_context(topo, FailureSet(frozenset([spine0]), frozenset()))
    check(ctx)
    leaf0, leaf1 = topo.node_ids.index("leaf0"), topo.node_ids.index("leaf1")
    assert len(ctx.fabric.switch_paths(leaf0, leaf1)) == 2
    assert ctx.fabric.distance(spine0, leaf1) == -1                 # down: not a forwarder
