"""NVLink-domain routing (designer/engine/routing/domain.py) on a hand-sized domain.

    d (nvlink_domain)
    ├── a (host): a/gpu0 ─pcie5x16─ a/nic0 ─eth400─┐
    ├── b (host): b/gpu0 ─pcie5x16─ b/nic0 ─eth400─┴─ leaf (switch, outside d)
    └── sw0, sw1 (nvswitch, in d): a/gpu0 and b/gpu0 each have one nvlink5x1 to each

a/gpu0 → b/gpu0 crosses hosts but stays in the domain: two one-switch NVLink paths, 2 × 320.8
Gb/s. With a switch down one path is left; with both down the flow falls back to the NICs. The
same document with ``d`` a plain rack routes through the NICs: no domain, no NVLink between hosts.
"""
from __future__ import annotations

import numpy as np
import pytest

from designer.engine.catalog import TECHS
from designer.engine.routing import route, routing_context
from designer.engine.analysis.simulate import simulate
from designer.engine.model.topology import Topology
from designer.engine.traffic.flows import Flows

NVL = TECHS["nvlink5x1"].effective_gbps


def _doc(kind="nvlink_domain"):
    nodes = [{"id": "leaf", "kind": "switch", "attrs": {"role": "leaf"}}]
    links = []
    for h in ("a", "b"):
        nodes += [{"id": f"{h}/gpu0", "kind": "gpu", "group": h, "attrs": {"index": 0}},
                  {"id": f"{h}/nic0", "kind": "nic", "group": h, "attrs": {"rail": 0, "port_gbps": 400}}]
        links += [{"a": f"{h}/gpu0", "b": f"{h}/nic0", "tech": "pcie5x16"},
                  {"a": f"{h}/nic0", "b": "leaf", "tech": "eth400"}]
    for s in (0, 1):
        nodes.append({"id": f"sw{s}", "kind": "nvswitch", "group": "d"})
        links += [{"a": f"{h}/gpu0", "b": f"sw{s}", "tech": "nvlink5x1"} for h in ("a", "b")]
    groups = [{"id": "d", "kind": kind}, {"id": "a", "kind": "host", "parent": "d"},
              {"id": "b", "kind": "host", "parent": "d"}]
    return {"format": "fabricscope.topology/1", "name": "mini-domain", "groups": groups, "nodes": nodes,
            "links": links}


def _flow(doc, failures=(), src="a/gpu0", dst="b/gpu0"):
    work = [{"id": "p", "kind": "p2p", "src": src, "dst": dst, "bytes": 1e9}]
    return simulate({"topology": doc, "workload": work, "failures": list(failures)})["flows"][0]


def test_cross_host_pair_in_a_domain_rides_both_switches():
    f = _flow(_doc())
    assert f["class"] == "NVL" and f["rate_gbps"] == pytest.approx(2 * NVL)
    assert sorted(p["path"][1] for p in f["paths"]) == ["sw0", "sw1"]
    assert [p["share"] for p in f["paths"]] == [0.5, 0.5]


def test_one_switch_down_leaves_one_path_both_down_fall_back_to_the_network():
    f = _flow(_doc(), [{"target": "sw1", "mode": "down"}])
    assert f["class"] == "NVL" and f["path"] == ["a/gpu0", "sw0", "b/gpu0"] and "paths" not in f
    assert f["rate_gbps"] == pytest.approx(NVL)
    f = _flow(_doc(), [{"target": "sw0", "mode": "down"}, {"target": "sw1", "mode": "down"}])
    assert f["class"] == "NET" and f["path"] == ["a/gpu0", "a/nic0", "leaf", "b/nic0", "b/gpu0"]


def test_without_a_domain_group_hosts_talk_over_the_network():
    f = _flow(_doc(kind="rack"))
    assert f["class"] == "NET" and "leaf" in f["path"]


def test_flows_to_a_switch_end_at_the_domains_whole_plane():
    f = _flow(_doc(), dst="sw1")
    assert f["class"] == "NVL" and sorted(p["path"][-1] for p in f["paths"]) == ["sw0", "sw1"]
    f = _flow(_doc(), [{"target": "sw1", "mode": "down"}], dst="sw1")
    assert f["path"] == ["a/gpu0", "sw0"]


def test_gpu_to_nic_flows_are_not_domain_flows():
    topo = Topology.from_document(_doc())
    flows = Flows.from_pairs([topo.node_index["a/gpu0"]], [topo.node_index["b/nic0"]])
    routes = route(topo, flows)
    nodes = [topo.node_ids[n] for n in routes.path_nodes(int(routes.first[0]))]
    assert nodes == ["a/gpu0", "a/nic0", "leaf", "b/nic0"]


def test_derived_contexts_do_not_reuse_the_base_domain_paths():
    topo = Topology.from_document(_doc())
    flows = Flows.from_pairs([topo.node_index["a/gpu0"]], [topo.node_index["b/gpu0"]])
    base = routing_context(topo)
    assert int(route(topo, flows, context=base).count[0]) == 2
    derived = routing_context(topo, {"nodes": [topo.node_index["sw0"]], "links": []}, base=base)
    assert int(route(topo, flows, context=derived).count[0]) == 1
    assert int(route(topo, Flows.from_pairs(flows.src, flows.dst, pattern_id="g"), context=base).count[0]) == 2
    assert np.all(route(topo, flows, context=base).status == 0)


def test_identical_racks_reuse_the_first_racks_paths_exactly():
    """Racks built from one template are index translates: their NVLink paths are the first
    rack's shifted, and equal to a fresh search; a failure in one rack makes it searched anew."""
    from designer.engine.model.fabrics import build_cluster
    from designer.engine.routing.domain import DomainRoutes

    pod = build_cluster("gb200-nvl72", 3, fabric="rail-optimized", params={"trays": 2, "switch_trays": 2})
    topo = Topology.from_document(pod)
    gpus = topo.nodes_of_kind("gpu")
    chips = topo.nodes_of_kind("nvswitch")
    healthy = np.zeros(topo.num_links, dtype=bool)
    failed = np.zeros(topo.num_nodes, dtype=bool)
    failed[topo.node_index["h2/nvs1/nvswitch0"]] = True
    for node_failed in (np.zeros(topo.num_nodes, dtype=bool), failed):
        shared = DomainRoutes(topo, node_failed, healthy)
        fresh = DomainRoutes(topo, node_failed, healthy)
        fresh.translate = {}
        assert set(shared.translate) == ({1} if node_failed.any() else {1, 2})   # rack 0 is the model
        pairs = [(a, b) for a in gpus for b in gpus + chips if a != b and shared.domain[a] == shared.domain[b]]
        assert pairs and all(shared.paths(a, b) == fresh.paths(a, b) for a, b in pairs)
