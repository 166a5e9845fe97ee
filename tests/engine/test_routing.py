"""Routing: transit rules, NIC policies, ECMP hashing/splitting, failures, unroutable reasons.

Small topologies are built by hand (documents compiled directly) and drawn in each docstring.
"""
import numpy as np
import pytest

from designer.engine.errors import InvalidScenario
from designer.engine.routing import FailureSet, route
from designer.engine.solve.solver import assert_valid_allocation, maxmin
from designer.engine.model.topology import Topology
from designer.engine.traffic.flows import Flows


# ------------------------------------------------------------------------------ builders
def build(nodes, links, groups=()):
    """nodes: (id, kind, group, attrs[, capacity]); links: (a, b, capacity_gbps[, tech])."""
    doc = {"format": "fabricscope.topology/1", "name": "t",
           "groups": [{"id": g, "kind": "host"} for g in groups],
           "nodes": [], "links": []}
    for n in nodes:
        nid, kind, group, attrs = n[:4]
        node = {"id": nid, "kind": kind, "attrs": attrs or {}}
        if group:
            node["group"] = group
        if len(n) > 4:
            node["capacity_gbps"] = n[4]
        doc["nodes"].append(node)
    for link in links:
        a, b, cap = link[:3]
        doc["links"].append({"id": f"{a}-{b}", "a": a, "b": b, "capacity_gbps": float(cap),
                             "tech": link[3] if len(link) > 3 else "pcie", "latency_ns": 100.0})
    return Topology.compile(doc)


def mini(hosts=2, gpus=2, spines=2, nic_per_gpu=True, extra_nodes=(), extra_links=()):
    """Hosts with GPUs and NICs under one PCIe switch, an NVSwitch, a CPU + memory; NIC i of every
    host on leaf i (rail i); every leaf to every spine. All links 400 Gb/s except NVLink 3600::

        [hX/gpuI]--pcie--[hX/pcie0]--pcie--[hX/nicI]==400==[leafI]==400==[spineS]
            \\==nvlink==[hX/nvs0]           [hX/cpu0]--[hX/mem0]
    """
    nodes, links, groups = list(extra_nodes), list(extra_links), []
    nics = gpus if nic_per_gpu else 1
    for h in range(hosts):
        H = f"h{h}"
        groups.append(H)
        nodes += [(f"{H}/cpu0", "cpu", H, {"socket": 0}), (f"{H}/mem0", "memory", H, {}),
                  (f"{H}/nvs0", "nvswitch", H, {}), (f"{H}/pcie0", "pcie_switch", H, {})]
        links += [(f"{H}/mem0", f"{H}/cpu0", 1000, "ddr5"), (f"{H}/pcie0", f"{H}/cpu0", 400)]
        for g in range(gpus):
            nodes.append((f"{H}/gpu{g}", "gpu", H, {"index": g}))
            links += [(f"{H}/gpu{g}", f"{H}/pcie0", 400), (f"{H}/gpu{g}", f"{H}/nvs0", 3600, "nvlink4")]
        for i in range(nics):
            nodes.append((f"{H}/nic{i}", "nic", H, {"rail": i, "role": "compute"}))
            links += [(f"{H}/nic{i}", f"{H}/pcie0", 400), (f"{H}/nic{i}", f"leaf{i}", 400, "eth400")]
    for i in range(nics):
        nodes.append((f"leaf{i}", "switch", None, {"role": "leaf", "rail": i}))
        links += [(f"leaf{i}", f"spine{s}", 400, "eth400") for s in range(spines)]
    nodes += [(f"spine{s}", "switch", None, {"role": "spine"}) for s in range(spines)]
    return build(nodes, links, groups)


def flows_of(topo, pairs, **kw):
    return Flows.from_pairs([topo.node_index[a] for a, _ in pairs], [topo.node_index[b] for _, b in pairs], **kw)


def paths(topo, routes, f):
    return [[topo.node_ids[n] for n in p] for p in routes.flow_paths(f)]


def solve(topo, routes, flows):
    """Weighted max-min over the routes' paths (each path weighs its share: one flow weighs 1)."""
    cap = topo.resource_capacity_gbps()
    demand = flows.demand_gbps[routes.owner] * routes.share
    alloc = maxmin(cap, routes.flow_ptr, routes.flow_res, demand, weights=routes.weight)
    assert_valid_allocation(cap, routes.flow_ptr, routes.flow_res, demand, alloc, weights=routes.weight)
    return alloc


# ------------------------------------------------------------------------------ basic paths
def test_rail_aligned_and_cross_rail_paths():
    topo = mini()
    f = flows_of(topo, [("h0/gpu0", "h1/gpu0"), ("h0/gpu0", "h1/gpu1")])
    r = route(topo, f)
    assert paths(topo, r, 0) == [["h0/gpu0", "h0/pcie0", "h0/nic0", "leaf0", "h1/nic0", "h1/pcie0", "h1/gpu0"]]
    (p,) = paths(topo, r, 1)
    assert p[:4] == ["h0/gpu0", "h0/pcie0", "h0/nic0", "leaf0"] and p[4] in ("spine0", "spine1")
    assert p[5:] == ["leaf1", "h1/nic1", "h1/pcie0", "h1/gpu1"]
    assert r.path_class(0) == r.path_class(1) == "NET"


def test_intra_host_prefers_nvlink_and_resources_follow_path_order():
    topo = mini()
    f = flows_of(topo, [("h0/gpu0", "h0/gpu1"), ("h0/gpu1", "h0/mem0")])
    r = route(topo, f)
    assert paths(topo, r, 0) == [["h0/gpu0", "h0/nvs0", "h0/gpu1"]]
    assert paths(topo, r, 1) == [["h0/gpu1", "h0/pcie0", "h0/cpu0", "h0/mem0"]]
    res = r.path_resources(int(r.first[0]))
    assert [topo.resource_id(x) for x in res] == ["h0/gpu0-h0/nvs0:a>b", "h0/gpu1-h0/nvs0:b>a"]


def test_route_a_subset_gives_the_same_paths():
    topo = mini(hosts=3)
    gpus = [i for i in topo.nodes_of_kind("gpu")]
    src, dst = np.array([(a, b) for a in gpus for b in gpus if a != b]).T
    f = Flows.from_pairs(src, dst)
    full = route(topo, f, seed=7)
    part_idx = np.arange(0, len(f), 3)
    part = route(topo, f.take(part_idx), seed=7)
    for k, i in enumerate(part_idx):
        assert part.flow_paths(k) == full.flow_paths(int(i))


# ------------------------------------------------------------------------------ sharing
def test_two_gpus_share_a_pcie_switch_uplink():
    """Both GPUs write to host memory through one 100 Gb/s switch uplink: 50 Gb/s each::

        [gpu0]--400--[sw0]--100--[cpu0]--1000--[mem0]
        [gpu1]--400--/
    """
    topo = build([("h/gpu0", "gpu", "h", {}), ("h/gpu1", "gpu", "h", {}), ("h/sw0", "pcie_switch", "h", {}),
                  ("h/cpu0", "cpu", "h", {}), ("h/mem0", "memory", "h", {})],
                 [("h/gpu0", "h/sw0", 400), ("h/gpu1", "h/sw0", 400), ("h/sw0", "h/cpu0", 100),
                  ("h/cpu0", "h/mem0", 1000)], ["h"])
    f = flows_of(topo, [("h/gpu0", "h/mem0"), ("h/gpu1", "h/mem0")])
    r = route(topo, f)
    alloc = solve(topo, r, f)
    assert np.allclose(alloc.rates_gbps, [50.0, 50.0])
    assert {topo.resource_id(int(b)) for b in alloc.bottleneck} == {"h/sw0-h/cpu0:a>b"}


def test_a_nic_shared_by_two_gpus():
    """One NIC per host (like a p4d switch with two GPUs and one EFA): both GPUs use it::

        [hX/gpu0]--[hX/pcie0]--[hX/nic0]==400==[leaf0]
        [hX/gpu1]--/
    """
    topo = mini(nic_per_gpu=False)
    f = flows_of(topo, [("h0/gpu0", "h1/gpu0"), ("h0/gpu1", "h1/gpu1")])
    r = route(topo, f)
    for i in range(2):
        assert "h0/nic0" in paths(topo, r, i)[0] and "h1/nic0" in paths(topo, r, i)[0]
    alloc = solve(topo, r, f)
    assert np.allclose(alloc.rates_gbps, [200.0, 200.0])


# ------------------------------------------------------------------------------ transit rules
def test_never_through_a_third_host():
    """h2 is reachable only through h1's internals (h1 has a NIC on each leaf): unroutable::

        [h0/nic0]--[leafA]--[h1/nic0]--[h1/pcie0]--[h1/nic1]--[leafB]--[h2/nic0]
    """
    nodes, links, groups = [], [], ["h0", "h1", "h2"]
    for h in groups:
        nodes += [(f"{h}/gpu0", "gpu", h, {"index": 0}), (f"{h}/pcie0", "pcie_switch", h, {}),
                  (f"{h}/nic0", "nic", h, {})]
        links += [(f"{h}/gpu0", f"{h}/pcie0", 400), (f"{h}/nic0", f"{h}/pcie0", 400)]
    nodes += [("h1/nic1", "nic", "h1", {}), ("leafA", "switch", None, {"role": "leaf"}),
              ("leafB", "switch", None, {"role": "leaf"})]
    links += [("h1/nic1", "h1/pcie0", 400), ("h0/nic0", "leafA", 400), ("h1/nic0", "leafA", 400),
              ("h1/nic1", "leafB", 400), ("h2/nic0", "leafB", 400)]
    topo = build(nodes, links, groups)
    f = flows_of(topo, [("h0/gpu0", "h2/gpu0"), ("h0/gpu0", "h1/gpu0")])
    r = route(topo, f, nic_policy="any")
    assert r.status[0] != 0 and "no fabric path" in r.reason(0)
    assert r.status[1] == 0


def test_gpu_forwards_only_as_pxn_relay():
    """gpu0 has no PCIe path to a NIC, only NVLink to gpu1 (whose NIC is nic1)::

        [h0/gpu0]==nvlink==[h0/gpu1]--[h0/pcie0]--[h0/nic1]==[leaf0]==[h1/nic0]--[h1/pcie0]--[h1/gpu0]
    """
    topo = build([("h0/gpu0", "gpu", "h0", {"index": 0}), ("h0/gpu1", "gpu", "h0", {"index": 1}),
                  ("h0/pcie0", "pcie_switch", "h0", {}), ("h0/nic1", "nic", "h0", {"rail": 0}),
                  ("h1/gpu0", "gpu", "h1", {"index": 0}), ("h1/pcie0", "pcie_switch", "h1", {}),
                  ("h1/nic0", "nic", "h1", {"rail": 0}), ("leaf0", "switch", None, {"role": "leaf"})],
                 [("h0/gpu0", "h0/gpu1", 3600, "nvlink4"), ("h0/gpu1", "h0/pcie0", 400),
                  ("h0/nic1", "h0/pcie0", 400), ("h0/nic1", "leaf0", 400), ("h1/nic0", "leaf0", 400),
                  ("h1/gpu0", "h1/pcie0", 400), ("h1/nic0", "h1/pcie0", 400)], ["h0", "h1"])
    f = flows_of(topo, [("h0/gpu0", "h1/gpu0")])
    r = route(topo, f, nic_policy="affinity")
    assert r.status[0] != 0 and "has no NIC" in r.reason(0)
    r = route(topo, f, nic_policy="pxn")
    assert paths(topo, r, 0) == [["h0/gpu0", "h0/gpu1", "h0/pcie0", "h0/nic1", "leaf0", "h1/nic0",
                                  "h1/pcie0", "h1/gpu0"]]


# ------------------------------------------------------------------------------ NIC policies
def test_pxn_goes_over_nvlink_to_the_rail_aligned_gpu():
    topo = mini()
    f = flows_of(topo, [("h0/gpu0", "h1/gpu1")])
    (p,) = paths(topo, route(topo, f, nic_policy="pxn"), 0)
    assert p == ["h0/gpu0", "h0/nvs0", "h0/gpu1", "h0/pcie0", "h0/nic1", "leaf1", "h1/nic1", "h1/pcie0", "h1/gpu1"]
    assert route(topo, f, nic_policy="pxn").path_class(0) in ("PXN", "NET")


def test_any_spreads_over_every_nic():
    topo = mini(gpus=2)
    pairs = [("h0/gpu0", "h1/gpu0")] * 64
    r = route(topo, flows_of(topo, pairs), nic_policy="any")
    used = {paths(topo, r, i)[0][2] for i in range(64)}
    assert used == {"h0/nic0", "h0/nic1"}
    for i in range(64):  # rail-aligned fabric leg: same NIC index on both sides
        p = paths(topo, r, i)[0]
        assert p[2][-1] == p[-3][-1]


def test_static_binding_from_node_attrs():
    topo = mini()
    topo.node_attrs[topo.node_index["h0/gpu0"]]["nic"] = "nic1"
    r = route(topo, flows_of(topo, [("h0/gpu0", "h1/gpu1")]), nic_policy="static")
    assert paths(topo, r, 0)[0][2] == "h0/nic1"


def test_unknown_policy_is_located():
    topo = mini()
    with pytest.raises(InvalidScenario) as exc:
        route(topo, flows_of(topo, [("h0/gpu0", "h1/gpu0")]), nic_policy="nearest")
    assert exc.value.problems[0].path == "routing.nic_policy"


# ------------------------------------------------------------------------------ ECMP
def test_clos_2x2_hash_collision_and_split():
    """2 leaves x 2 spines; two flows leaf0 → leaf1 at 400 Gb/s links::

        [h0/nic0]-[leaf0]=<spine0,spine1>=[leaf1]-[h1/nic0]      (and gpu1 via rail 0 too)

    With hashing, a seed where both flows pick the same spine halves their rates; with split every
    flow uses both spines and gets its full 400 Gb/s... limited by its own NIC link shared by two.
    """
    topo = mini(nic_per_gpu=False, spines=2)
    # Flows from two hosts on leaf0 to... all on leaf0 in this builder: add a second rail-less leaf
    nodes = [("x/gpu0", "gpu", "x", {}), ("x/nic0", "nic", "x", {}), ("y/gpu0", "gpu", "y", {}),
             ("y/nic0", "nic", "y", {}), ("z/gpu0", "gpu", "z", {}), ("z/nic0", "nic", "z", {}),
             ("w/gpu0", "gpu", "w", {}), ("w/nic0", "nic", "w", {}),
             ("leafA", "switch", None, {"role": "leaf"}), ("leafB", "switch", None, {"role": "leaf"}),
             ("spine0", "switch", None, {"role": "spine"}), ("spine1", "switch", None, {"role": "spine"})]
    links = [(f"{h}/gpu0", f"{h}/nic0", 800) for h in "xyzw"]
    links += [("x/nic0", "leafA", 800), ("y/nic0", "leafA", 800), ("z/nic0", "leafB", 800), ("w/nic0", "leafB", 800)]
    links += [(l, s, 400, "eth400") for l in ("leafA", "leafB") for s in ("spine0", "spine1")]
    topo = build(nodes, links, ["x", "y", "z", "w"])
    f = flows_of(topo, [("x/gpu0", "z/gpu0"), ("y/gpu0", "w/gpu0")])
    outcomes = set()
    for seed in range(16):
        r = route(topo, f, seed=seed)
        spines = {paths(topo, r, i)[0][3] for i in range(2)}
        rates = solve(topo, r, f).rates_gbps
        outcomes.add((len(spines), tuple(np.round(rates))))
    assert (1, (200.0, 200.0)) in outcomes      # collision: both on one spine
    assert (2, (400.0, 400.0)) in outcomes      # distinct spines
    r = route(topo, f, multipath="split")
    assert list(r.count) == [2, 2] and np.allclose(r.share, 0.5)
    alloc = solve(topo, r, f)
    pace = alloc.rates_gbps / r.share
    assert np.allclose(pace, 400.0)


# ------------------------------------------------------------------------------ failures
def test_nic_down_affinity_unroutable_any_reroutes():
    topo = mini()
    f = flows_of(topo, [("h0/gpu0", "h1/gpu0")])
    failed = FailureSet(nodes=frozenset({topo.node_index["h0/nic0"]}))
    r = route(topo, f, failed=failed)
    assert r.status[0] != 0
    assert r.reason(0) == "GPU h0/gpu0's only NIC under policy affinity is down"
    r = route(topo, f, failed=failed, nic_policy="any")
    assert r.status[0] == 0 and "h0/nic0" not in paths(topo, r, 0)[0]


def test_spine_and_uplink_failures():
    topo = mini()
    f = flows_of(topo, [("h0/gpu0", "h1/gpu1")] * 16)
    r = route(topo, f, failed={"nodes": [topo.node_index["spine0"]]})
    assert all("spine0" not in paths(topo, r, i)[0] for i in range(16))
    r = route(topo, f, failed={"links": [topo.link_index["h0/nic0-leaf0"]]})
    assert r.status[0] != 0 and "no working link to the fabric" in r.reason(0)
    r = route(topo, f, failed={"nodes": [topo.node_index["h1/gpu1"]]})
    assert r.reason(0) == "destination h1/gpu1 is down"


def test_storage_node_never_forwards_and_fabric_storage_routes():
    topo = mini(extra_nodes=[("st0", "storage", None, {})], extra_links=[("st0", "spine0", 400, "eth400")])
    f = flows_of(topo, [("st0", "h0/gpu1")])
    r = route(topo, f)
    assert paths(topo, r, 0) == [["st0", "spine0", "leaf1", "h0/nic1", "h0/pcie0", "h0/gpu1"]]


# ------------------------------------------------------------------------------ striping, fallbacks
def test_nvswitch_striping_is_proportional_to_nvlink_count():
    """GPU pair through two NVSwitches with 5 and 4 NVLinks (100 Gb/s each)::

        [h/gpu0]==500==[h/nvs0]==500==[h/gpu1]
               \\==400==[h/nvs1]==400==//

    Striped like hardware: 2 sub-flows of 5 stripes (via nvs0) and 4 stripes (via nvs1), so
    shares 5/9 and 4/9, and solver weights = shares (5/9 + 4/9 = 1: one flow weighs 1).
    ``repeated()`` expands them into 9 sub-flows of one stripe, 5 via nvs0 and 4 via nvs1, each
    share and weight 1/9. Alone, the flow rises to level x with 5x/9 via nvs0 and 4x/9 via nvs1:
    nvs0 saturates at 5x/9 = 500 → x = 900, nvs1 at 4x/9 = 400 → x = 900, together: 900 Gb/s
    and both switches saturate (an even split would stop at 2 x 400 = 800 with nvs0 idle at
    80 %). The rate is unchanged by the per-flow normalization (the flow is alone); only the
    weights are rescaled, from 5 and 4 to 5/9 and 4/9."""
    topo = build([("h/gpu0", "gpu", "h", {}), ("h/gpu1", "gpu", "h", {}), ("h/nvs0", "nvswitch", "h", {}),
                  ("h/nvs1", "nvswitch", "h", {})],
                 [("h/gpu0", "h/nvs0", 500, "nvlink4"), ("h/gpu1", "h/nvs0", 500, "nvlink4"),
                  ("h/gpu0", "h/nvs1", 400, "nvlink4"), ("h/gpu1", "h/nvs1", 400, "nvlink4")], ["h"])
    f = flows_of(topo, [("h/gpu0", "h/gpu1")])
    weighted = route(topo, f)
    assert [p[1] for p in paths(topo, weighted, 0)] == ["h/nvs0", "h/nvs1"]
    assert weighted.stripes.tolist() == [5.0, 4.0] and np.allclose(weighted.share, [5 / 9, 4 / 9])
    np.testing.assert_array_equal(weighted.weight, weighted.share)
    for r in (weighted, weighted.repeated()):
        via = [p[1] for p in paths(topo, r, 0)]
        if r is not weighted:
            assert sorted(via) == ["h/nvs0"] * 5 + ["h/nvs1"] * 4 and np.allclose(r.share, 1 / 9)
            assert np.allclose(r.weight, 1 / 9) and (r.stripes == 1).all()
        alloc = solve(topo, r, f)
        assert np.allclose(alloc.rates_gbps / r.share, 900.0)
        assert np.allclose(alloc.utilization[alloc.load_gbps > 0], 1.0)


def test_pxn_relays_around_a_dead_own_nic():
    """h0/nic0 is down: under pxn gpu0 → h1/gpu0 hands over NVLink to gpu1 and leaves by nic1;
    under affinity the flow is lost and the reason names the dead NIC."""
    topo = mini()
    f = flows_of(topo, [("h0/gpu0", "h1/gpu0")])
    failed = FailureSet(nodes=frozenset({topo.node_index["h0/nic0"]}))
    (p,) = paths(topo, route(topo, f, nic_policy="pxn", failed=failed), 0)
    assert p[:5] == ["h0/gpu0", "h0/nvs0", "h0/gpu1", "h0/pcie0", "h0/nic1"] and p[-1] == "h1/gpu0"
    r = route(topo, f, failed=failed)
    assert r.failed_nic(0) == "h0/nic0" and r.reason(0) == "GPU h0/gpu0's only NIC under policy affinity is down"


def test_any_receiver_falls_back_to_a_live_nic():
    """Under ``any`` the receiver uses the NIC on the sender NIC's rail; if h1's rail NIC is down
    it takes another live NIC of h1 instead of losing the flow."""
    topo = mini()
    pairs = [("h0/gpu0", "h1/gpu0")] * 32
    failed = FailureSet(nodes=frozenset({topo.node_index["h1/nic1"]}))
    r = route(topo, flows_of(topo, pairs), nic_policy="any", failed=failed)
    assert (r.status == 0).all()
    assert all("h1/nic1" not in paths(topo, r, i)[0] for i in range(32))


def test_any_split_uses_every_nic_of_the_host_evenly():
    """``any`` + ``split``: gpu0's flow is split over nic0 and nic1 (half each); each half runs
    rail-aligned. Solved: 2 x 200 on gpu0's 400 Gb/s PCIe link."""
    topo = mini()
    f = flows_of(topo, [("h0/gpu0", "h1/gpu0")])
    r = route(topo, f, nic_policy="any", multipath="split")
    used = sorted(p[2] for p in paths(topo, r, 0))
    assert used == ["h0/nic0", "h0/nic1"] and np.allclose(r.share, 0.5) and r.count[0] == 2
    assert all(p[2][-1] == p[-3][-1] for p in paths(topo, r, 0))
    alloc = solve(topo, r, f)
    assert np.allclose(alloc.rates_gbps / r.share, 400.0)


def test_derived_context_routes_like_a_fresh_one():
    from designer.engine.routing import routing_context

    topo = mini(hosts=3)
    gpus = topo.nodes_of_kind("gpu")
    src, dst = np.array([(a, b) for a in gpus for b in gpus if a != b]).T
    f = Flows.from_pairs(src, dst)
    failed = FailureSet(nodes=frozenset({topo.node_index["h1/nic0"], topo.node_index["spine0"]}))
    base = routing_context(topo)
    for policy in ("affinity", "pxn", "any"):
        derived = route(topo, f, nic_policy=policy, context=routing_context(topo, failed, base=base))
        fresh = route(topo, f, nic_policy=policy, failed=failed)
        assert all(derived.flow_paths(i) == fresh.flow_paths(i) for i in range(len(f)))
        assert list(derived.status) == list(fresh.status)


# ------------------------------------------------------------------------------ weighted sub-flows
def _dgx_h100_pair():
    from designer.engine.model.fabrics import build_cluster

    return Topology.from_document(build_cluster("dgx-h100", 2, fabric="rail-optimized"))


def test_dgx_h100_striping_is_one_weighted_path_per_nvswitch():
    """DGX H100: each GPU has 5/4/4/5 NVLinks to nvswitch0..3. A GPU pair is 4 paths of
    5/4/4/5 stripes, 5 + 4 + 4 + 5 = 18 in all, so shares 5/18, 4/18, 4/18, 5/18, and solver
    weights = shares (summing to 1, where they were 5/4/4/5 summing to 18 before the per-flow
    normalization); ``repeated()`` expands them into 18 sub-flows of one stripe, each share and
    weight 1/18. A PXN flow stripes its NVLink leg the same way (weights 5/18…, not 5…), an
    affinity NET flow has 1 path of weight 1::

        [h0/gpu0]=5=[nvswitch0]=5=[h0/gpu3]      (and =4= via nvswitch1, 2; =5= via nvswitch3)
    """
    topo = _dgx_h100_pair()
    f = flows_of(topo, [("h0/gpu0", "h0/gpu3"), ("h0/gpu0", "h1/gpu0"), ("h0/gpu0", "h1/gpu3")])
    r = route(topo, f, nic_policy="pxn")
    assert r.count.tolist() == [4, 1, 4] and r.num_paths == 9
    nvl = slice(0, 4)
    assert [p[1] for p in paths(topo, r, 0)] == [f"h0/nvswitch{i}" for i in range(4)]
    assert r.stripes[nvl].tolist() == [5.0, 4.0, 4.0, 5.0]
    np.testing.assert_allclose(r.share[nvl], np.array([5, 4, 4, 5]) / 18)
    np.testing.assert_array_equal(r.weight, r.share)
    assert r.weight[4] == 1.0 and r.share[4] == 1.0 and r.stripes[4] == 1.0
    assert r.path_class(2) == "PXN" and r.stripes[5:].tolist() == [5.0, 4.0, 4.0, 5.0]
    np.testing.assert_allclose(np.add.reduceat(r.weight, r.first), 1.0)
    rep = r.repeated()
    assert rep.count.tolist() == [18, 1, 18] and (rep.stripes == 1).all()
    np.testing.assert_allclose(rep.share[rep.owner != 1], 1 / 18)
    np.testing.assert_allclose(rep.weight, rep.share)
    assert sorted(p[1] for p in paths(topo, rep, 0)) == sorted(
        [f"h0/nvswitch{i}" for i, k in enumerate((5, 4, 4, 5)) for _ in range(k)])
    a, b = solve(topo, r, f), solve(topo, rep, f)
    pace = lambda routes, alloc: np.minimum.reduceat(alloc.rates_gbps / routes.share, routes.first)  # noqa: E731
    np.testing.assert_allclose(pace(r, a), pace(rep, b), rtol=1e-12)
    np.testing.assert_allclose(a.load_gbps, b.load_gbps, rtol=1e-12, atol=1e-9)


def test_split_paths_are_one_stripe_and_weigh_their_share():
    """An even ``split`` over 2 spines gives each path 1 stripe, share 1/2 and weight 1/2 (it was
    weight 1 each, 2 in all, before the per-flow normalization); the unsplit flow keeps share =
    weight = 1. ``any`` + ``split`` folds the per-NIC virtual flows into one flow: 2 NICs, so
    shares and weights 1/2 per NIC path (summing to 1 per flow, not 1 per NIC)."""
    topo = mini(spines=2)
    f = flows_of(topo, [("h0/gpu0", "h1/gpu1"), ("h0/gpu0", "h1/gpu0")])
    r = route(topo, f, multipath="split")
    assert r.count.tolist() == [2, 1] and (r.stripes == 1).all()
    np.testing.assert_allclose(r.share, [0.5, 0.5, 1.0])
    np.testing.assert_array_equal(r.weight, r.share)
    r = route(topo, f, nic_policy="any", multipath="split")
    assert (r.stripes == 1).all()
    np.testing.assert_allclose(np.add.reduceat(r.share, r.first), 1.0)
    np.testing.assert_allclose(np.add.reduceat(r.weight, r.first), 1.0)
    assert r.repeated().num_paths == r.num_paths


def test_rerouted_flows_keep_their_own_weights():
    """nvswitch0 of h0 fails: GPU pairs of h0 re-route over 3 switches (4/4/5 NVLinks: stripes
    4, 4, 5, so 13 in all and weights = shares 4/13, 4/13, 5/13); flows elsewhere keep their
    5/4/4/5 stripes (weights 5/18, 4/18, 4/18, 5/18), the NET flow 1 (weight 1).
    ``replace_flows`` carries stripes and weights along."""
    topo = _dgx_h100_pair()
    f = flows_of(topo, [("h0/gpu0", "h0/gpu3"), ("h1/gpu0", "h1/gpu3"), ("h0/gpu1", "h1/gpu1")])
    base = route(topo, f)
    failed = FailureSet(nodes=frozenset({topo.node_index["h0/nvswitch0"]}))
    sub = route(topo, f.take(np.array([0])), failed=failed)
    merged = base.replace_flows(np.array([0]), sub)
    assert merged.stripes.tolist() == [4.0, 4.0, 5.0, 5.0, 4.0, 4.0, 5.0, 1.0]
    np.testing.assert_allclose(merged.weight, [4 / 13, 4 / 13, 5 / 13, 5 / 18, 4 / 18, 4 / 18, 5 / 18, 1.0])
    fresh = route(topo, f, failed=failed)
    assert merged.stripes.tolist() == fresh.stripes.tolist()
    assert merged.weight.tolist() == fresh.weight.tolist()
    np.testing.assert_array_equal(merged.share, fresh.share)


def test_non_integer_capacity_ratio_stripes_exactly():
    """NVSwitch links of 500 and 433 Gb/s (no small-integer ratio): the stripes keep the exact
    ratio (4 x 500/433 and 4), so shares = weights = 500/933 and 433/933 (4·500/433 over
    4·500/433 + 4 = 4·933/433), and the flow fills both switches at the same level x:
    500x/933 = 500 and 433x/933 = 433 → x = 933 Gb/s. (Repeated sub-flows could only round
    it to quarters.) ``repeated()`` refuses such stripes::

        [h/gpu0]==500==[h/nvs0]==500==[h/gpu1]
               \\==433==[h/nvs1]==433==//
    """
    topo = build([("h/gpu0", "gpu", "h", {}), ("h/gpu1", "gpu", "h", {}), ("h/nvs0", "nvswitch", "h", {}),
                  ("h/nvs1", "nvswitch", "h", {})],
                 [("h/gpu0", "h/nvs0", 500, "nvlink4"), ("h/gpu1", "h/nvs0", 500, "nvlink4"),
                  ("h/gpu0", "h/nvs1", 433, "nvlink4"), ("h/gpu1", "h/nvs1", 433, "nvlink4")], ["h"])
    f = flows_of(topo, [("h/gpu0", "h/gpu1")])
    r = route(topo, f)
    np.testing.assert_allclose(r.stripes, [4 * 500 / 433, 4.0])
    np.testing.assert_allclose(r.weight, [500 / 933, 433 / 933])
    alloc = solve(topo, r, f)
    np.testing.assert_allclose(alloc.rates_gbps / r.share, 933.0)
    np.testing.assert_allclose(alloc.utilization[alloc.load_gbps > 0], 1.0)
    with pytest.raises(ValueError):
        r.repeated()


# ------------------------------------------------------------------------------ fairness: a flow weighs 1
def _flow_rates(routes, alloc):
    """Per flow: the sum of its sub-flows' rates (Σ w·λ)."""
    return np.add.reduceat(alloc.rates_gbps, routes.first)


def test_pxn_flow_and_affinity_flow_share_a_nic_equally():
    """Three DGX H100 on a rail-optimized fabric, policy ``pxn``. Flow P = h0/gpu0 → h1/gpu3
    relays over NVLink to h0/gpu3 (rail 3) and leaves by h0/nic3; flow A = h0/gpu3 → h2/gpu3 is
    rail-aligned, so it takes its own (affinity) NIC h0/nic3 directly::

        P: [h0/gpu0]=5/4/4/5=[nvswitch0..3]=[h0/gpu3]--384--[h0/pcie3]--384--[h0/nic3]==400==[leaf3]→h1
        A:                                  [h0/gpu3]--384--[h0/pcie3]--384--[h0/nic3]==400==[leaf3]→h2

    P is 4 sub-flows (one per NVSwitch) of shares = weights 5/18, 4/18, 4/18, 5/18; A is 1 of
    weight 1. All of P's sub-flows and A cross h0/gpu3→pcie3 and pcie3→nic3 (PCIe5 x16, 384 Gb/s
    effective) and nic3→leaf3 (400). At level λ the load there is (5+4+4+5)/18·λ + λ = 2λ, so
    the PCIe links saturate at λ = 384 / 2 = 192 (the NVLink legs carry at most 5/18·192 ≈ 53
    on 824 Gb/s links, the port 384 < 400): P and A get 192 Gb/s each, half of the NIC.
    Weighting sub-flows by stripes (5+4+4+5 = 18 against 1, the bug fixed here) would give P
    18/19·384 ≈ 363.8 and A 384/19 ≈ 20.2."""
    from designer.engine.model.fabrics import build_cluster

    topo = Topology.from_document(build_cluster("dgx-h100", 3, fabric="rail-optimized"))
    f = flows_of(topo, [("h0/gpu0", "h1/gpu3"), ("h0/gpu3", "h2/gpu3")])
    r = route(topo, f, nic_policy="pxn")
    assert r.path_class(0) == "PXN" and r.path_class(1) == "NET" and r.count.tolist() == [4, 1]
    assert all(p[2:5] == ["h0/gpu3", "h0/pcie3", "h0/nic3"] for p in paths(topo, r, 0))
    assert paths(topo, r, 1)[0][:3] == ["h0/gpu3", "h0/pcie3", "h0/nic3"]
    alloc = solve(topo, r, f)
    np.testing.assert_allclose(_flow_rates(r, alloc), [192.0, 192.0])
    np.testing.assert_allclose(alloc.rates_gbps[:4], np.array([5, 4, 4, 5]) / 18 * 192.0)
    assert topo.resource_id(int(alloc.bottleneck[4])) in ("h0/gpu3-pcie3:a>b", "h0/nic3-pcie3:b>a")
    old = maxmin(topo.resource_capacity_gbps(), r.flow_ptr, r.flow_res, weights=r.stripes)
    np.testing.assert_allclose(_flow_rates(r, old), [384 * 18 / 19, 384 / 19])


def test_split_flow_and_unsplit_flow_share_their_nic_equally():
    """``split`` over 2 spines. X = x/gpu0 → y/gpu0 crosses leafA → spine0|spine1 → leafB (2
    sub-flows, share = weight 1/2 each); Z = x/gpu1 → z/gpu0 stays on leafA (1 path, weight 1).
    Both leave by x/nic0, whose port (400) is the smallest capacity they share::

        [x/gpu0]--800--\\                          /==400==[spine0]==400==\\
                        [x/pcie0]--800--[x/nic0]==400==[leafA]              [leafB]==400==[y/nic0]--[y/gpu0]
        [x/gpu1]--800--/                           \\==400==[spine1]==400==/
                                                   [leafA]==400==[z/nic0]--[z/gpu0]

    At level λ: on x/nic0→leafA the load is (1/2 + 1/2)·λ + λ = 2λ → saturates at λ = 200; the
    spine links carry 1/2·200 = 100 ≤ 400, everything else is larger. X and Z get 200 Gb/s each
    (X as 100 + 100 over the two spines). Weighting sub-flows 1 each (2 against 1, the bug
    fixed here) would give X 2/3·400 ≈ 266.7 and Z 400/3 ≈ 133.3."""
    nodes = [("x/gpu0", "gpu", "x", {}), ("x/gpu1", "gpu", "x", {}), ("x/pcie0", "pcie_switch", "x", {}),
             ("x/nic0", "nic", "x", {})]
    links = [("x/gpu0", "x/pcie0", 800), ("x/gpu1", "x/pcie0", 800), ("x/nic0", "x/pcie0", 800),
             ("x/nic0", "leafA", 400, "eth400")]
    for h, leaf in (("y", "leafB"), ("z", "leafA")):
        nodes += [(f"{h}/gpu0", "gpu", h, {}), (f"{h}/pcie0", "pcie_switch", h, {}), (f"{h}/nic0", "nic", h, {})]
        links += [(f"{h}/gpu0", f"{h}/pcie0", 800), (f"{h}/nic0", f"{h}/pcie0", 800),
                  (f"{h}/nic0", leaf, 400, "eth400")]
    nodes += [(s, "switch", None, {"role": role}) for s, role in
              (("leafA", "leaf"), ("leafB", "leaf"), ("spine0", "spine"), ("spine1", "spine"))]
    links += [(leaf, s, 400, "eth400") for leaf in ("leafA", "leafB") for s in ("spine0", "spine1")]
    topo = build(nodes, links, ["x", "y", "z"])
    f = flows_of(topo, [("x/gpu0", "y/gpu0"), ("x/gpu1", "z/gpu0")])
    r = route(topo, f, multipath="split")
    assert r.count.tolist() == [2, 1] and sorted(p[4] for p in paths(topo, r, 0)) == ["spine0", "spine1"]
    np.testing.assert_allclose(r.weight, [0.5, 0.5, 1.0])
    alloc = solve(topo, r, f)
    np.testing.assert_allclose(_flow_rates(r, alloc), [200.0, 200.0])
    np.testing.assert_allclose(alloc.rates_gbps, [100.0, 100.0, 200.0])
    assert {topo.resource_id(int(b)) for b in alloc.bottleneck} == {"x/nic0-leafA:a>b"}
    old = maxmin(topo.resource_capacity_gbps(), r.flow_ptr, r.flow_res, weights=r.stripes)
    np.testing.assert_allclose(_flow_rates(r, old), [800 / 3, 400 / 3])
