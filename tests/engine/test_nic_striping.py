"""NIC striping under ``affinity``: a GPU's cross-host traffic spread over its equally near NICs.

NCCL binds a GPU's channels to the NICs nearest to it (the OFI plugin stripes over a GPU's EFA
devices), so a GPU behind a PCIe switch with t NICs sends over all t of them; ties *between*
GPUs (two GPUs sharing two NICs) stay one NIC each. Small hosts are compiled from documents and
drawn in each docstring; the 4-NIC case is also checked on the ``aws-p5`` template.
"""
import numpy as np
import pytest

from designer.engine.model.fabrics import build_cluster
from designer.engine.model.topology import Topology
from designer.engine.routing import FailureSet, route
from designer.engine.solve.solver import assert_valid_allocation, maxmin
from designer.engine.traffic.flows import Flows

NIC = 100.0   # every NIC: 100 Gb/s PCIe link to its switch, 100 Gb/s port to its leaf


def striped_hosts(nics_per_gpu: int, gpu_gbps: float, gpus: int = 2, hosts: int = 2, switches=None):
    """``hosts`` hosts of ``gpus`` GPUs; GPU i on its own PCIe switch ``pcie{i}`` with
    ``nics_per_gpu`` NICs (rails i·t + k, one leaf per rail, leaves on one spine at 10 Tb/s so
    the fabric is never the bottleneck). ``switches``: GPUs per switch (default 1)::

        [hX/gpuI]--gpu_gbps--[hX/pcieI]--100--[hX/nic(t·I+k)]==100==[leaf(t·I+k)]==10T==[spine]
            \\==nvlink 3600==[hX/nvs0]                      (k = 0..t-1)
    """
    per = switches or 1
    doc = {"format": "fabricscope.topology/1", "name": "striped", "groups": [], "nodes": [], "links": []}

    def node(nid, kind, group=None, **attrs):
        doc["nodes"].append({"id": nid, "kind": kind, "attrs": attrs, **({"group": group} if group else {})})

    def link(a, b, cap, tech="pcie"):
        doc["links"].append({"id": f"{a}-{b}", "a": a, "b": b, "capacity_gbps": float(cap), "tech": tech,
                             "latency_ns": 100.0})

    rails = gpus // per * nics_per_gpu * per
    for h in range(hosts):
        H = f"h{h}"
        doc["groups"].append({"id": H, "kind": "host"})
        node(f"{H}/nvs0", "nvswitch", H)
        for s in range(gpus // per):
            node(f"{H}/pcie{s}", "pcie_switch", H)
        for g in range(gpus):
            node(f"{H}/gpu{g}", "gpu", H, index=g)
            link(f"{H}/gpu{g}", f"{H}/pcie{g // per}", gpu_gbps)
            link(f"{H}/gpu{g}", f"{H}/nvs0", 3600, "nvlink4")
        for n in range(rails):
            node(f"{H}/nic{n}", "nic", H, rail=n, role="compute", index=n)
            link(f"{H}/nic{n}", f"{H}/pcie{n // (nics_per_gpu * per)}", NIC)
            link(f"{H}/nic{n}", f"leaf{n}", NIC, "eth400")
    for n in range(rails):
        node(f"leaf{n}", "switch", role="leaf", rail=n)
        link(f"leaf{n}", "spine0", 10_000, "eth400")
    node("spine0", "switch", role="spine")
    return Topology.compile(doc)


def pairs(topo, names, **kw):
    return Flows.from_pairs([topo.node_index[a] for a, _ in names], [topo.node_index[b] for _, b in names], **kw)


def per_flow_rates(topo, flows, **route_kw):
    """(routes, per-flow rate in Gb/s) under weighted max-min (each path weighs its share)."""
    r = route(topo, flows, **route_kw)
    cap = topo.resource_capacity_gbps()
    demand = flows.demand_gbps[r.owner] * r.share
    alloc = maxmin(cap, r.flow_ptr, r.flow_res, demand, weights=r.weight)
    assert_valid_allocation(cap, r.flow_ptr, r.flow_res, demand, alloc, weights=r.weight)
    return r, np.bincount(r.owner, weights=alloc.rates_gbps, minlength=len(flows))


def nics_used(topo, r, f):
    return sorted({n for p in r.flow_paths(f) for n in (topo.node_ids[x] for x in p) if "/nic" in n})


# --------------------------------------------------------------------------- per-GPU rate = t × NIC
@pytest.mark.parametrize("t, gpu_gbps, expected", [
    # t NICs of 100 behind the GPU's switch, GPU link 400: per GPU min(t × 100, 400).
    (1, 400, 100.0),   # 1 NIC: 100 (today's figure, unchanged)
    (2, 400, 200.0),   # 2 NICs: 2 × 100 = 200
    (4, 400, 400.0),   # 4 NICs: 4 × 100 = 400 = the GPU link, exactly
    (4, 300, 300.0),   # 4 NICs but a 300 GPU link: min(400, 300) = 300, capped by the GPU's PCIe
])
def test_per_gpu_rate_is_its_nics_aggregate_capped_by_its_pcie_link(t, gpu_gbps, expected):
    """p2p h0/gpuI → h1/gpuI, I = 0, 1 (unlimited demand), on :func:`striped_hosts`: the NICs
    (or the GPU link) are the only bottleneck. Each GPU stripes over its t NICs, so it gets
    min(t × 100, gpu link); the host sends 2 × that: its NIC aggregate 2t × 100 when the GPU
    link does not cap it (200, 400, 800)."""
    topo = striped_hosts(t, gpu_gbps)
    f = pairs(topo, [("h0/gpu0", "h1/gpu0"), ("h0/gpu1", "h1/gpu1")])
    r, rate = per_flow_rates(topo, f)
    assert np.allclose(rate, expected)
    if expected == t * NIC:
        assert rate.sum() == pytest.approx(2 * t * NIC)   # the host reaches its NIC aggregate
    # GPU I leaves by NICs t·I .. t·I+t-1 and arrives by the same rails on h1, one sub-flow each.
    for i in range(2):
        rails = range(t * i, t * i + t)
        assert nics_used(topo, r, i) == sorted([f"h0/nic{n}" for n in rails] + [f"h1/nic{n}" for n in rails])
        assert r.count[i] == t and np.allclose(r.share[r.owner == i], 1 / t)
    assert all(r.path_class(i) == "NET" for i in range(2))


@pytest.mark.parametrize("multipath", ["hash", "split"])
def test_striping_does_not_depend_on_fabric_multipath(multipath):
    """Same as the 2-NIC case: NCCL's channels stripe whatever the fabric's ECMP mode: 200."""
    topo = striped_hosts(2, 400)
    f = pairs(topo, [("h0/gpu0", "h1/gpu0"), ("h0/gpu1", "h1/gpu1")])
    _, rate = per_flow_rates(topo, f, multipath=multipath)
    assert np.allclose(rate, 200.0)


def test_ties_between_gpus_keep_one_nic_each():
    """Two GPUs on one switch with two NICs (a DGX-style pair)::

        [gpu0]--400--[pcie0]--100--[nic0]==100==[leaf0]
        [gpu1]--400--/      \\--100--[nic1]==100==[leaf1]

    The tie is *between* GPUs: dealt one NIC each, as before (gpu0 → nic0, gpu1 → nic1): 100
    each, one path each."""
    topo = striped_hosts(1, 400, gpus=2, switches=2)
    f = pairs(topo, [("h0/gpu0", "h1/gpu0"), ("h0/gpu1", "h1/gpu1")])
    r, rate = per_flow_rates(topo, f)
    assert np.allclose(rate, 100.0) and list(r.count) == [1, 1]
    assert nics_used(topo, r, 0) == ["h0/nic0", "h1/nic0"] and nics_used(topo, r, 1) == ["h0/nic1", "h1/nic1"]


def test_more_tied_nics_than_gpus_are_dealt_round_robin():
    """Two GPUs on one switch with four NICs: gpu0 takes nic0 (as before) and nic2, gpu1 nic1
    and nic3: 2 × 100 = 200 each, 400 for the host (its NIC aggregate)."""
    topo = striped_hosts(2, 400, gpus=2, switches=2)
    f = pairs(topo, [("h0/gpu0", "h1/gpu0"), ("h0/gpu1", "h1/gpu1")])
    r, rate = per_flow_rates(topo, f)
    assert np.allclose(rate, 200.0)
    assert nics_used(topo, r, 0) == ["h0/nic0", "h0/nic2", "h1/nic0", "h1/nic2"]
    assert nics_used(topo, r, 1) == ["h0/nic1", "h0/nic3", "h1/nic1", "h1/nic3"]


def test_down_nics_at_the_destination_drop_their_stripes():
    """One GPU per host, 4 NICs each, h1/nic2 and h1/nic3 down: stripe j leaves by h0/nic(j)
    and arrives by h1/nic(j) (bound on the healthy host, as NCCL binds at start-up), so
    stripes 2 and 3 are unroutable and the two others carry the flow: 2 × 100 = 200."""
    topo = striped_hosts(4, 400, gpus=1)
    f = pairs(topo, [("h0/gpu0", "h1/gpu0")])
    failed = FailureSet(nodes=frozenset({topo.node_index["h1/nic2"], topo.node_index["h1/nic3"]}))
    r, rate = per_flow_rates(topo, f, failed=failed)   # h1 has two live NICs of four
    assert rate[0] == pytest.approx(200.0)
    assert r.count[0] == 2   # the stripes arriving by h1/nic2, h1/nic3 are gone


# --------------------------------------------------------------------------- failures
def test_a_down_nic_leaves_the_traffic_on_the_others():
    """4 NICs per GPU, h0/nic1 down (the failures mechanism): GPU 0's stripe on nic1 is
    unroutable, the other three carry its traffic: 3 × 100 = 300; GPU 1 keeps 400. All of GPU
    0's NICs down: its flow is unroutable, as a GPU's only NIC down is today."""
    topo = striped_hosts(4, 400)
    f = pairs(topo, [("h0/gpu0", "h1/gpu0"), ("h0/gpu1", "h1/gpu1")])
    failed = FailureSet(nodes=frozenset({topo.node_index["h0/nic1"]}))
    r, rate = per_flow_rates(topo, f, failed=failed)
    assert rate[0] == pytest.approx(300.0) and rate[1] == pytest.approx(400.0)
    assert list(r.status) == [0, 0] and r.count[0] == 3 and np.allclose(r.share[r.owner == 0], 1 / 3)
    assert "h0/nic1" not in nics_used(topo, r, 0)
    dead = FailureSet(nodes=frozenset(topo.node_index[f"h0/nic{n}"] for n in range(4)))
    r = route(topo, f, failed=dead)
    assert r.status[0] != 0 and r.status[1] == 0
    assert "NIC" in r.reason(0) and "down" in r.reason(0)


# --------------------------------------------------------------------------- other policies
@pytest.mark.parametrize("policy", ["static", "pxn"])
def test_static_and_pxn_keep_one_nic_per_gpu(policy):
    """``static`` (no binding attrs: affinity's first NIC) and ``pxn`` do not stripe: on the
    4-NIC host each GPU uses NIC 4·I alone: 100 per GPU, as before."""
    topo = striped_hosts(4, 400)
    f = pairs(topo, [("h0/gpu0", "h1/gpu0"), ("h0/gpu1", "h1/gpu1")])
    r, rate = per_flow_rates(topo, f, nic_policy=policy)
    assert np.allclose(rate, 100.0) and list(r.count) == [1, 1]
    assert nics_used(topo, r, 0) == ["h0/nic0", "h1/nic0"] and nics_used(topo, r, 1) == ["h0/nic4", "h1/nic4"]


def test_one_nic_per_gpu_routes_without_virtual_flows():
    """DGX H100 (one NIC per GPU behind its own switch): the striping table has one column, so
    the router takes its plain path (no fan-out), one path per flow as before."""
    from designer.engine.routing import routing_context
    from designer.engine.routing.nic_tables import affinity_set

    topo = Topology.from_document(build_cluster("dgx-h100", 2))
    ctx = routing_context(topo)
    assert all(affinity_set(s).shape[1] == 1 for s in ctx.shapes)
    f = pairs(topo, [(f"h0/gpu{i}", f"h1/gpu{i}") for i in range(8)])
    r = route(topo, f)
    assert all(len(nics_used(topo, r, i)) == 2 for i in range(8))


# --------------------------------------------------------------------------- aws-p5 (4 × 100G EFA)
def test_aws_p5_host_reaches_its_efa_aggregate():
    """Two aws-p5 hosts (GPU i behind pcie{i} with EFA 4i..4i+3, rail-optimized fabric), p2p
    h0/gpuI → h1/gpuI for the 8 GPUs. An EFA's bottleneck is its PCIe Gen4 x8 link, 96 Gb/s in
    the catalog (its port: 100); the GPU's Gen5 x16 link is 384. Each GPU stripes over its 4
    EFAs: min(4 × 96, 384) = 384 Gb/s (was 96: one EFA of four, the NIC's PCIe link the critical
    bottleneck); the host sends 8 × 384 = 3,072 Gb/s = 32 × 96, its EFA aggregate."""
    topo = Topology.from_document(build_cluster("aws-p5", 2))
    cap = topo.resource_capacity_gbps()
    assert cap[2 * topo.link_index["h0/nic0-pcie0"]] == 96.0 and cap[2 * topo.link_index["h0/gpu0-pcie0"]] == 384.0
    f = pairs(topo, [(f"h0/gpu{i}", f"h1/gpu{i}") for i in range(8)])
    r, rate = per_flow_rates(topo, f)
    assert np.allclose(rate, 384.0)
    assert rate.sum() == pytest.approx(32 * 96.0)
    assert nics_used(topo, r, 3) == sorted([f"h0/nic{n}" for n in range(12, 16)] +
                                           [f"h1/nic{n}" for n in range(12, 16)])
    _, before = per_flow_rates(topo, f, nic_policy="static")   # one EFA per GPU, as affinity was
    assert np.allclose(before, 96.0)
