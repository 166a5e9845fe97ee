"""Failure specs → FailureSet + capacity multipliers (``designer.engine.traffic.failures``).

The small host used throughout, capacities per direction in Gb/s::

    [h0/gpu0]--pcie 400--[h0/sw0]--pcie 400--[h0/nic0]==400==[leaf0]
    [h0/gpu1]--pcie 400--'   |
                        [h0/rc0 (own capacity 100)]--upi--[h0/rc1]
"""
import numpy as np
import pytest

from designer.engine.errors import InvalidScenario
from designer.engine.traffic.failures import (failed_resources, failure_label, normalize_failures, resolve_failure,
                                      resolve_failures)
from designer.engine.model.topology import Topology


def host():
    doc = {"format": "fabricscope.topology/1", "name": "t",
           "groups": [{"id": "r0", "kind": "rack"}, {"id": "h0", "kind": "host", "parent": "r0"}],
           "nodes": [{"id": "h0/gpu0", "kind": "gpu", "group": "h0"},
                     {"id": "h0/gpu1", "kind": "gpu", "group": "h0"},
                     {"id": "h0/sw0", "kind": "pcie_switch", "group": "h0"},
                     {"id": "h0/nic0", "kind": "nic", "group": "h0", "attrs": {"rail": 0}},
                     {"id": "h0/rc0", "kind": "cpu", "group": "h0", "capacity_gbps": 100.0, "attrs": {"socket": 0}},
                     {"id": "h0/rc1", "kind": "cpu", "group": "h0", "attrs": {"socket": 1}},
                     {"id": "leaf0", "kind": "switch", "attrs": {"role": "leaf"}}],
           "links": []}
    for a, b, tech in (("h0/gpu0", "h0/sw0", "pcie5x16"), ("h0/gpu1", "h0/sw0", "pcie5x16"),
                       ("h0/nic0", "h0/sw0", "pcie5x16"), ("h0/sw0", "h0/rc0", "pcie5x16"),
                       ("h0/rc0", "h0/rc1", "upi-spr"), ("h0/nic0", "leaf0", "eth400")):
        doc["links"].append({"id": f"{a}-{b}", "a": a, "b": b, "tech": tech, "capacity_gbps": 400.0})
    return Topology.compile(doc)


def res(topo, link_id):
    l = topo.link_index[link_id]
    return [2 * l, 2 * l + 1]


def test_targets_node_link_group_and_selectors():
    topo = host()
    ni = topo.node_index
    assert resolve_failure(topo, "h0/nic0") == ([ni["h0/nic0"]], [])
    assert resolve_failure(topo, "h0/gpu0-h0/sw0") == ([], [topo.link_index["h0/gpu0-h0/sw0"]])
    # A rack holds its host's nodes (groups nest); the leaf is outside.
    assert resolve_failure(topo, "r0")[0] == sorted(ni[n] for n in topo.node_ids if n.startswith("h0/"))
    assert resolve_failure(topo, {"kind": "gpu", "group": "h0"})[0] == [ni["h0/gpu0"], ni["h0/gpu1"]]
    links = resolve_failure(topo, {"kind": "link", "tech": "pcie5x16", "group": "h0"})[1]
    assert [topo.link_ids[l] for l in links] == ["h0/gpu0-h0/sw0", "h0/gpu1-h0/sw0", "h0/nic0-h0/sw0",
                                                 "h0/sw0-h0/rc0"]
    assert resolve_failure(topo, {"kind": "link", "tech": "pcie*", "every": 2})[1] == links[::2]
    assert [topo.link_ids[l] for l in resolve_failure(topo, {"kind": "link", "tier": "nic-leaf"})[1]] == \
        ["h0/nic0-leaf0"]
    assert resolve_failure(topo, {"kind": "switch", "role": "leaf"})[0] == [ni["leaf0"]]


def test_unknown_target_is_located_with_a_hint():
    topo = host()
    with pytest.raises(InvalidScenario) as err:
        normalize_failures(topo, [{"target": "h0/nic0"}, {"target": "h9/nic0", "mode": "down"}])
    (line,) = err.value.lines()
    assert line.startswith('failures[1].target: unknown node or link "h9/nic0"')
    assert 'did you mean "h0/nic0"' in line


@pytest.mark.parametrize("bad, where", [
    ({"target": "h0/nic0", "mode": "melt"}, "failures[0].mode"),
    ({"target": "h0/nic0", "mode": "degrade"}, "failures[0].factor"),
    ({"target": "h0/nic0", "mode": "degrade", "factor": 1.5}, "failures[0].factor"),
    ({"target": {"kind": "link", "tech": "nvlink9"}}, "failures[0].target"),
    ({"target": {"kind": "link", "tier": "warp"}}, "failures[0].target.tier"),
    ({"target": {"kind": "gpu", "colour": "red"}}, "failures[0].target"),
    ({"target": {"kind": "gpu", "group": "h7"}}, "failures[0].target.group"),
    ({"target": 3}, "failures[0].target"),
])
def test_bad_failures_are_located(bad, where):
    with pytest.raises(InvalidScenario) as err:
        normalize_failures(host(), [bad])
    assert err.value.problems[0].path == where


def test_down_and_degrade_multipliers():
    """Link degrade: both directions ×f. Node without own capacity: its links ×f. Node with own
    capacity (rc0): only that resource. A group: each link once. Separate entries compound."""
    topo = host()
    failed, mult = resolve_failures(topo, [
        {"target": "h0/nic0", "mode": "down"},
        {"target": "h0/gpu0-h0/sw0", "mode": "degrade", "factor": 0.5},
        {"target": "h0/gpu1", "mode": "degrade", "factor": 0.25},
        {"target": "h0/rc0", "mode": "degrade", "factor": 0.1},
        {"target": "h0/gpu0-h0/sw0", "mode": "degrade", "factor": 0.5},
    ])
    assert failed.nodes == {topo.node_index["h0/nic0"]} and not failed.links
    assert mult[res(topo, "h0/gpu0-h0/sw0")].tolist() == [0.25, 0.25]
    assert mult[res(topo, "h0/gpu1-h0/sw0")].tolist() == [0.25, 0.25]
    assert mult[topo.node_resource[topo.node_index["h0/rc0"]]] == pytest.approx(0.1)
    assert mult[res(topo, "h0/sw0-h0/rc0")].tolist() == [1.0, 1.0]  # rc0 has its own capacity
    assert (mult == 1).sum() == topo.num_resources - 5
    _, mult = resolve_failures(topo, [{"target": {"kind": "gpu", "group": "h0"}, "mode": "degrade", "factor": 0.5}])
    assert sorted(mult[mult != 1].tolist()) == [0.5] * 4   # two GPU links × 2 directions, once each


def test_failed_resources_cover_links_touching_dead_nodes():
    topo = host()
    failed, _ = resolve_failures(topo, [{"target": "h0/nic0"}])
    got = failed_resources(topo, failed).tolist()
    assert got == sorted(res(topo, "h0/nic0-h0/sw0") + res(topo, "h0/nic0-leaf0"))
    assert failure_label({"target": "h0/nic0", "mode": "down"}) == "h0/nic0 down"
    assert failure_label({"target": {"kind": "nic"}, "mode": "degrade", "factor": 0.5}) == "{kind=nic} ×0.5"
