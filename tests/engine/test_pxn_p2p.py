"""PXN for NCCL's send/receive operations under the default ``affinity`` policy.

NCCL sends to a remote peer through the NIC of the local GPU with the peer's device index,
handing the data over NVLink to that GPU first (``ncclTopoGetNetDev``, ``NCCL_P2P_PXN_LEVEL``
2 by default); the receiver keeps its own NIC. So an all-to-all (gather, scatter, hypercube)
stays on the destination's rail; a collective's flows and plain ``p2p`` traffic keep their own
GPU's NIC, and ``own_nic`` is the policy with PXN off. Small hosts are drawn in each docstring.
"""
import numpy as np

from designer.engine.analysis.simulate import simulate
from designer.engine.model.topology import Topology
from designer.engine.routing import FailureSet, route
from designer.engine.solve.solver import maxmin
from designer.engine.traffic.flows import Flows

SPINE = 25.0   # each leaf's uplink to the spine, Gb/s: a thin spine makes cross-rail traffic visible


def rail_hosts(nics_per_gpu: int) -> Topology:
    """Two hosts of two GPUs; GPU i behind its own PCIe switch with ``t`` NICs (rails t·i + k),
    one leaf per rail, every leaf on one spine by a 25 Gb/s link::

        [hX/gpuI]--400--[hX/pcieI]--100--[hX/nic(t·I+k)]==100==[leaf(t·I+k)]==25==[spine0]
            \\==nvlink 3600==[hX/nvs0]                    (k = 0..t-1)
    """
    doc = {"format": "fabricscope.topology/1", "name": "rails", "groups": [], "nodes": [], "links": []}

    def node(nid, kind, group=None, **attrs):
        doc["nodes"].append({"id": nid, "kind": kind, "attrs": attrs, **({"group": group} if group else {})})

    def link(a, b, cap, tech="pcie"):
        doc["links"].append({"id": f"{a}-{b}", "a": a, "b": b, "capacity_gbps": float(cap), "tech": tech,
                             "latency_ns": 100.0})

    rails = 2 * nics_per_gpu
    for h in range(2):
        H = f"h{h}"
        doc["groups"].append({"id": H, "kind": "host"})
        node(f"{H}/nvs0", "nvswitch", H)
        for g in range(2):
            node(f"{H}/pcie{g}", "pcie_switch", H)
            node(f"{H}/gpu{g}", "gpu", H, index=g)
            link(f"{H}/gpu{g}", f"{H}/pcie{g}", 400)
            link(f"{H}/gpu{g}", f"{H}/nvs0", 3600, "nvlink4")
        for n in range(rails):
            node(f"{H}/nic{n}", "nic", H, rail=n, role="compute", index=n)
            link(f"{H}/nic{n}", f"{H}/pcie{n // nics_per_gpu}", 100)
            link(f"{H}/nic{n}", f"leaf{n}", 100, "eth400")
    for n in range(rails):
        node(f"leaf{n}", "switch", role="leaf", rail=n)
        link(f"leaf{n}", "spine0", SPINE, "eth400")
    node("spine0", "switch", role="spine")
    return Topology.compile(doc)


GPUS = ["h0/gpu0", "h0/gpu1", "h1/gpu0", "h1/gpu1"]


def all_to_all(topo, kind="alltoall"):
    """(the 12 sends of a 4-rank all-to-all as flows of one pattern of ``kind``, their pairs)."""
    pairs = [(a, b) for a in GPUS for b in GPUS if a != b]
    flows = Flows.from_pairs([topo.node_index[a] for a, _ in pairs], [topo.node_index[b] for _, b in pairs],
                             1e9, kind=kind)
    return flows, pairs


def hops(topo, r, i) -> set[tuple[str, str]]:
    """The (node, next node) hops on the paths of flow ``i``."""
    out = set()
    for p in r.flow_paths(i):
        names = [topo.node_ids[x] for x in p]
        out |= set(zip(names, names[1:]))
    return out


def rates(topo, f, r) -> np.ndarray:
    """Max-min rate of every flow (Gb/s): the sum of its paths' rates (each weighs its share)."""
    cap = topo.resource_capacity_gbps()
    demand = f.demand_gbps[r.owner] * r.share
    alloc = maxmin(cap, r.flow_ptr, r.flow_res, demand, weights=r.weight)
    return np.bincount(r.owner, weights=alloc.rates_gbps, minlength=len(f))


def test_alltoall_send_crosses_nvlink_to_the_destination_rail():
    """h0/gpu0 → h1/gpu1 in an all-to-all: NCCL's send NIC is that of h0's GPU with the peer's
    index, gpu1 (rail 1), reached over NVLink; the receiver keeps its own NIC, h1/nic1::

        h0/gpu0 → h0/nvs0 → h0/gpu1 → h0/pcie1 → h0/nic1 → leaf1 → h1/nic1 → h1/pcie1 → h1/gpu1

    No spine. The same pair as plain ``p2p`` traffic, or under ``own_nic`` (PXN off), leaves by
    h0/nic0 and crosses the spine (leaf0 → spine0 → leaf1)."""
    topo = rail_hosts(1)
    f, pairs = all_to_all(topo)
    k = pairs.index(("h0/gpu0", "h1/gpu1"))
    r = route(topo, f)
    assert [[topo.node_ids[x] for x in p] for p in r.flow_paths(k)] == [[
        "h0/gpu0", "h0/nvs0", "h0/gpu1", "h0/pcie1", "h0/nic1", "leaf1", "h1/nic1", "h1/pcie1", "h1/gpu1"]]
    assert r.path_class(k) == "PXN"
    for r in (route(topo, all_to_all(topo, "p2p")[0]), route(topo, f, nic_policy="own_nic")):
        assert {("h0/pcie0", "h0/nic0"), ("leaf0", "spine0"), ("spine0", "leaf1"), ("leaf1", "h1/nic1")} <= hops(
            topo, r, k)
    # A rail-aligned send (same device index) needs no relay: its own NIC.
    same = pairs.index(("h0/gpu0", "h1/gpu0"))
    assert ("h0/pcie0", "h0/nic0") in hops(topo, route(topo, f), same)


def test_alltoall_rates_pxn_against_pxn_off():
    """Rates of the 8 cross-host sends (max-min, Gb/s), derived by hand.

    PXN (``affinity``): every send leaves on its destination's rail, so NIC h0/nic1 carries
    h0/gpu0 → h1/gpu1 and h0/gpu1 → h1/gpu1, two flows on 100: **50 each**, for all 8.

    PXN off (``own_nic``): the 4 cross-rail sends go leaf → spine → leaf; leaf0's uplink carries
    h0/gpu0 → h1/gpu1 and h1/gpu0 → h0/gpu1 on 25: **12.5 each**; a rail-aligned send shares
    its NIC with one of those: **100 − 12.5 = 87.5**. The slowest send, which ends the
    all-to-all, is 4× faster with PXN."""
    topo = rail_hosts(1)
    f, pairs = all_to_all(topo)
    cross = [i for i, (a, b) in enumerate(pairs) if a[:2] != b[:2]]
    rail = [i for i in cross if pairs[i][0][-1] == pairs[i][1][-1]]
    off_rail = [i for i in cross if i not in rail]
    on = rates(topo, f, route(topo, f))
    assert np.allclose(on[cross], 50.0)
    off = rates(topo, f, route(topo, f, nic_policy="own_nic"))
    assert np.allclose(off[off_rail], SPINE / 2) and np.allclose(off[rail], 100 - SPINE / 2)


def test_striped_send_leaves_by_the_relay_nic_of_each_stripe():
    """Two NICs a GPU (the AWS p5 shape with t = 2): GPU I stripes over NICs 2I, 2I+1. The
    send h0/gpu0 → h1/gpu1 is two virtual flows; stripe k arrives by h1/nic(2+k), so it hands
    over NVLink to h0/gpu1 and leaves by h0/nic(2+k), the NIC on the same rail: both stripes
    rail-aligned, none on the spine, each 1/2 of the flow. All 8 cross-host sends then get
    their NIC pair's 2 × 100 shared by two senders: 100 each."""
    topo = rail_hosts(2)
    f, pairs = all_to_all(topo)
    k = pairs.index(("h0/gpu0", "h1/gpu1"))
    r = route(topo, f)
    assert int(r.count[k]) == 2 and np.allclose(r.share[r.owner == k], 0.5)
    used = hops(topo, r, k)
    assert {("h0/nvs0", "h0/gpu1"), ("h0/nic2", "leaf2"), ("h0/nic3", "leaf3"), ("leaf2", "h1/nic2"),
            ("leaf3", "h1/nic3")} <= used
    assert not any("spine0" in h or "h0/nic0" in h or "h0/nic1" in h for h in used)
    cross = [i for i, (a, b) in enumerate(pairs) if a[:2] != b[:2]]
    assert np.allclose(rates(topo, f, r)[cross], 100.0)


def test_pxn_nic_is_chosen_on_the_healthy_host():
    """h0/nic1 down. ``affinity`` binds the send h0/gpu0 → h1/gpu1 as NCCL does at start-up,
    to gpu1's NIC: the flow is lost (a running communicator that loses a NIC hangs). The
    ``pxn`` what-if relays around the dead NIC: gpu0 leaves by its own h0/nic0 (cross-rail)."""
    topo = rail_hosts(1)
    f, pairs = all_to_all(topo)
    k = pairs.index(("h0/gpu0", "h1/gpu1"))
    dead = FailureSet(nodes=frozenset({topo.node_index["h0/nic1"]}))
    r = route(topo, f, failed=dead)
    assert r.status[k] != 0 and "down" in r.reason(k)
    r = route(topo, f, nic_policy="pxn", failed=dead)
    assert r.status[k] == 0 and ("h0/nic0", "leaf0") in hops(topo, r, k)


def test_alltoall_pattern_on_aws_p5_stays_on_rails():
    """``aws-p5`` × 2 on the rail-optimized fabric (GPU I with EFA 4I..4I+3, rails 4I..4I+3):
    with PXN the all-to-all puts no byte on a leaf-spine link (every send arrives on the rail
    it left by), where with PXN off 7 of 8 cross-host sends cross the spine."""
    from designer.engine.model.fabrics import build_cluster

    topo = Topology.from_document(build_cluster("aws-p5", 2, fabric="rail-optimized"))
    pattern = {"id": "a", "kind": "alltoall", "bytes": 1 << 30, "participants": {"kind": "gpu"}}
    tiers = {}
    for policy in ("affinity", "own_nic"):
        s = simulate({"topology": topo, "workload": [pattern], "routing": {"nic_policy": policy}})
        tiers[policy] = s["summary"]["utilization_by_tier"].get("leaf-spine", {}).get("max", 0.0)
    assert tiers["affinity"] == 0.0 and tiers["own_nic"] > 0.5


def test_pxn_disable_knob_turns_pxn_off_for_send_receive_too():
    """``NCCL_PXN_DISABLE=1`` is ``own_nic`` (before: ``affinity``, which now relays an
    all-to-all's sends); with ``NCCL_CROSS_NIC=0`` (own, rail-aligned NICs) it agrees."""
    from designer.engine.analysis.nccl_env import parse_env
    from designer.engine.analysis.nccl_tests_config import NIC_POLICY_CHOICES

    assert parse_env(["NCCL_PXN_DISABLE=1"])["nic_policy"] == "own_nic"
    assert parse_env(["NCCL_CROSS_NIC=0", "NCCL_PXN_DISABLE=1"])["nic_policy"] == "own_nic"
    assert parse_env(["NCCL_PXN_DISABLE=1", "NCCL_CROSS_NIC=2"])["nic_policy"] == "own_nic"
    assert "own_nic" in NIC_POLICY_CHOICES
