"""Pod groups of three-tier fabrics (the editor opens a 32k-GPU design as pods → racks and
leaves → hosts; a pod is also a failure domain)::

    super-spines: [core*]                    the top tier, one group (kind other)
    pod{p}: [spine* (attrs.pod = p)]
            [leaf*  (linked to pod p's spines only)]
            rack{r} (every host port lands on pod p's leaves) → h{i} → devices

A rack whose hosts reach two pods (leaf blocks are equal runs of hosts, not whole racks) joins
the pod holding most of its fabric ports; every two-tier design keeps its groups as before.
"""
import time

import pytest

from designer.engine.model.bom import fabric_bom
from designer.engine.document import validate
from designer.engine.model.fabrics import build_cluster


def group_of(doc):
    return {n["id"]: n.get("group") for n in doc["nodes"]}


def test_three_tier_rail_optimized_has_pods_of_racks_leaves_and_spines():
    """600 x DGX-H100 on ib-ndr-64 (64 x 400G), o = 1: 32 hosts per leaf → 19 leaves per rail,
    152 leaves > 64 ports of a spine → three tiers."""
    doc = build_cluster("dgx-h100", 600, switch="ib-ndr-64")
    fabric = doc["fabric"]
    assert fabric["tiers"] == 3 and fabric["pods"] > 1
    pods = [g for g in doc["groups"] if g["kind"] == "pod"]
    assert len(pods) == fabric["pods"]
    groups = {g["id"]: g for g in doc["groups"]}
    where = group_of(doc)
    for n in doc["nodes"]:
        role = (n.get("attrs") or {}).get("role")
        if role == "spine":
            assert where[n["id"]] == f"pod{n['attrs']['pod']}"
        elif role == "core":
            assert where[n["id"]] == "super-spines"
    # every leaf in a pod links only to that pod's spines; every grouped rack's hosts only to its leaves
    for link in doc["links"]:
        a, b = where.get(link["a"]), where.get(link["b"])
        if a and b and a.startswith("pod") and b.startswith("pod"):
            assert a == b, link
    racks = [g for g in doc["groups"] if g["kind"] == "rack"]
    assert all(r.get("parent", "").startswith("pod") for r in racks)
    assert all(groups[r["parent"]]["kind"] == "pod" for r in racks if r.get("parent"))
    assert validate(doc) == []


def _rack_pod_ports(doc):
    """{rack: {pod group: fabric ports of the rack's hosts on that pod's leaves}}."""
    node_group = {n["id"]: n.get("group") for n in doc["nodes"]}
    parent = {g["id"]: g.get("parent") for g in doc["groups"]}
    switch = {n["id"] for n in doc["nodes"] if n["kind"] == "switch"}
    ports = {}
    for link in doc["links"]:
        for x, y in ((link["a"], link["b"]), (link["b"], link["a"])):
            if y in switch and x not in switch and node_group.get(x):
                rack = parent[node_group[x]]
                pods = ports.setdefault(rack, {})
                pods[node_group[y]] = pods.get(node_group[y], 0) + 1
    return ports


@pytest.mark.parametrize("hosts, options", [
    (600, {"switch": "ib-ndr-64"}),                       # 31.6 hosts a leaf block: racks split
    (1000, {"switch": "ib-ndr-64", "hosts_per_rack": 3}),  # racks of 3 on blocks of 31.25
    (1000, {"switch": "ib-ndr-64", "planes": 2}),          # two spine planes share pod ids
    (2048, {"switch": "ib-ndr-64"}),                       # 32 hosts a block: racks divide evenly
    pytest.param(4096, {"switch": "eth-51t2"}, marks=pytest.mark.slow),  # the 32k-GPU design: 64 a block
    pytest.param(12500, {"tiers": 3}, marks=pytest.mark.slow),  # 100k GPUs: 63.8 a block, 19 racks split
])
def test_every_rack_is_in_exactly_one_pod_and_every_host_in_a_rack(hosts, options):
    """The rack at a pod boundary (hosts on two pods' leaves) joins the pod with most of its
    fabric ports, the lower one on a tie; no rack is left at the top beside the pods."""
    doc = build_cluster("dgx-h100", hosts, **options)
    assert doc["fabric"]["tiers"] == 3
    groups = {g["id"]: g for g in doc["groups"]}
    racks = [g for g in groups.values() if g["kind"] == "rack"]
    assert racks and all(groups[r.get("parent")]["kind"] == "pod" for r in racks if r.get("parent") in groups)
    assert [r["id"] for r in racks if r.get("parent") not in groups] == []
    hosts_groups = [g for g in groups.values() if g["kind"] == "host"]
    assert len(hosts_groups) == hosts
    assert all(groups[g["parent"]]["kind"] == "rack" for g in hosts_groups)
    straddling = 0
    for rack, pods in _rack_pod_ports(doc).items():
        most = max(pods.values())
        expected = min((p for p, n in pods.items() if n == most), key=lambda p: int(p[3:]))
        assert groups[rack]["parent"] == expected, (rack, pods)
        straddling += len(pods) > 1
    if hosts % (doc["fabric"]["leaves_per_rail"] * doc["fabric"]["hosts_per_rack"]) == 0:
        assert straddling == 0  # whole racks per leaf block: no rack reaches two pods
    else:
        assert straddling > 0  # the case this test is for does occur


def test_pods_do_not_turn_row_optics_into_rack_copper():
    """A pod holds racks and leaves; a host's leaf is still in the row (in-row optics), not in
    its rack (copper is for a ToR inside the host's rack group)."""
    bom = fabric_bom(build_cluster("dgx-h100", 600, switch="ib-ndr-64"))
    reach = {r["kind"]: r["reach"] for r in bom["links"]}
    assert reach["host-leaf"] == "in-row"
    tor = fabric_bom(build_cluster("dgx-h100", 600, fabric="leaf-spine", switch="ib-ndr-64"))
    assert {r["kind"]: r["reach"] for r in tor["links"]}["host-leaf"] == "in-rack copper"


def test_two_tier_designs_have_no_pods():
    doc = build_cluster("dgx-h100", 64)
    assert doc["fabric"]["tiers"] == 2
    assert not [g for g in doc["groups"] if g["kind"] == "pod"]
    assert all(g.get("parent", "rack").startswith("rack") for g in doc["groups"] if g["kind"] == "host")


@pytest.mark.slow
def test_32k_gpu_build_and_validate_within_10_s_cpu():
    """4,096 x DGX-H100, rail-optimized eth-51t2 (target: build + validate ≤ 10 s):
    64 leaves per rail, 512 leaves → 8 pods of 64 spines, 256 super-spines."""
    t0 = time.process_time()
    doc = build_cluster("dgx-h100", 4096, switch="eth-51t2")
    problems = validate(doc)
    cpu_s = time.process_time() - t0
    f = doc["fabric"]
    assert problems == [] and (f["tiers"], f["pods"], f["spines"], f["cores"]) == (3, 8, 512, 256)
    assert sum(1 for g in doc["groups"] if g["kind"] == "pod") == 8
    assert cpu_s <= 10, cpu_s
