"""Clos sizing that fills switch ports (``designer/engine/model/clos.py``) and the BOM counted from
the build spec without building the hosts (``designer/engine/model/bom.py`` ``plan_bom``).

Every case is a rail-optimized DGX-H100 cluster (8 × 400G compute NICs per host, one per rail)::

    [h0/nic0..7]--400G--[leaf (rail r, block j)]==bundle of b ports==[spine0..S-1]
                                                                   (==[core0..C-1])
    [storage0]--400G--[sleaf0]--1 port--[spine0]

The BOMs below are counted by hand in each docstring.
"""
from __future__ import annotations

import json
import math

import pytest

from designer.engine.errors import InvalidTopology, LimitExceeded
from designer.engine.model.bom import fabric_bom, plan_bom
from designer.engine.model.clos import core_plan
from designer.engine.model.fabrics import MAX_PLAN_HOSTS, build_cluster, fabric_summary
from tests.engine.storage_support import without_storage_nics


def _switches(bom: dict) -> dict:
    """Per row: (count, ports used, ports); storage switches are rows of their own."""
    return {("storage " if r["network"] == "storage" else "") + r["tier"]:
            (r["count"], r["ports_used"], r["count"] * r["radix"]) for r in bom["switches"]}


def _links(bom: dict) -> dict:
    return {r["kind"]: (r["links"], r["ports"], r["cables"], r["transceivers"], r["reach"]) for r in bom["links"]}


def _uplinks(doc: dict, leaf: str) -> int:
    return sum(int(x.get("bundle") or 1) for x in doc["links"] if x["a"] == leaf)


def test_three_to_one_fills_the_spines_ports():
    """128 DGX-H100 on ib-ndr-64 (64 × 400G), oversubscription 3 (the issue's case).

    Leaves: max_down_ports(64, 3) = 48 (48 + 48/3 = 64) → ceil(128/48) = 3 leaves per rail,
    24 leaves; block j = h*3//128 holds 43, 43, 42 hosts. Uplinks asked: ceil(43/3) = 15
    (16 leaves), ceil(42/3) = 14 (8 leaves); sum 352 → S ≥ ceil(352/64) = 6.
      S = 6: bundles ceil(15/6) = ceil(14/6) = 3 → a spine needs 24 × 3 = 72 > 64 ports: no.
      S = 7: bundles 3 and 2 → leaves 43 + 21 = 64 and 42 + 14 = 56 ports ≤ 64; a spine needs
             16 × 3 + 8 × 2 = 64 ≤ 64: yes → 7 spines, every port used (was 15 spines using
             360 of 960: S had to divide 15).
    Ports used: leaves 16 × 64 + 8 × 56 = 1,472 of 1,536; spines 7 × 64 = 448 of 448.
    Cables: host-leaf 128 × 8 = 1,024 in-row (2 transceivers each: 2,048); leaf-spine
    24 × 7 = 168 links of 448 ports = 448 cables, 896 transceivers.
    Oversubscription (worst leaf): 42 : 14 = 3.0 (the 43-host leaves get 43 : 21 = 2.05).
    Bisection: min(injection 1,024 × 400 = 409,600, into spines 448 × 400 = 179,200) / 2 = 89,600 Gb/s.
    Power: (24 + 7) × 750 W = 23,250 W (was 39 × 750 = 29,250 W).
    """
    doc = build_cluster("dgx-h100", 128, switch="ib-ndr-64", oversubscription=3)
    bom = fabric_bom(doc)
    assert _switches(bom) == {"leaf": (24, 1472, 1536), "spine": (7, 448, 448)}
    assert _links(bom) == {"host-leaf": (1024, 1024, 1024, 2048, "in-row"),
                           "leaf-spine": (168, 448, 448, 896, "optics")}
    assert bom["oversubscription"] == {"leaf": 3.0}
    assert bom["bisection_gbps"] == 89_600
    assert bom["power"]["switch_w"] == 23_250
    assert _uplinks(doc, "leaf0") == 21 and _uplinks(doc, "leaf2") == 14
    assert any("43:21" in note for note in doc["fabric"]["notes"])


def test_one_storage_server_keeps_the_compute_spines():
    """128 DGX-H100 on ib-ndr-64 (64 × 400G, 750 W) at 1:1 plus one storage server (the issue's
    case: equal bundles used to take 32 spines where the compute leaves need 16).

    Compute fabric (unchanged by storage): a leaf holds 32 hosts (32 + 32 = 64) → 4 leaves per
    rail, 32 leaves of 32 host ports and 32 uplinks; 1,024 uplinks / 64 = 16 spines, bundles of 2.
    Storage fabric of its own (storage_fabric.py): each host wires one port of its two storage
    NICs → H = 256 host ports, S = 1 storage port; 257 > 64, so leaves: a host leaf holds
    max(64 − 1, 32) = 63 host ports with min(63, 1) = 1 uplink → ceil(256 / 63) = 5 leaves
    (63, 63, 63, 63, 4), each 1 uplink; sleaf0: 1 storage port, min(1, 256) = 1 uplink; 6
    uplinks of one port → 1 storage spine (6 ports).
    Switches: leaves 32 + 6 = 38, ports used 32 × 64 + (4 × 64 + 5) + 2 = 2,311 of 2,432;
    spines 16 + 1 = 17, ports used 16 × 64 + 6 = 1,030 of 1,088 — rows apart: compute leaves
    32 (2,048 of 2,048), spines 16 (1,024 of 1,024); storage leaves 6 (263 of 384), spine 1 (6 of 64).
    Links: host-leaf 1,024 + 256 = 1,280 (in-row, 2,560 transceivers); storage-leaf 1;
    leaf-spine 32 × 16 = 512 bundles of 2 (1,024 ports) + 6 single ports = 518 links, 1,030 ports.
    Power: 55 × 750 W = 41,250 W (was 65 switches, 48,750 W). Injection counts compute NICs only:
    1,024 × 400 G; bisection half of it.
    """
    doc = build_cluster("dgx-h100", 128, switch="ib-ndr-64", storage=1)
    bom = fabric_bom(doc)
    compute_spines = [n for n in doc["nodes"] if n["kind"] == "switch" and n["attrs"]["role"] == "spine"
                      and not n["attrs"].get("storage")]
    assert len(compute_spines) == doc["fabric"]["spines"] == 16
    assert doc["fabric"]["storage_fabric"] == {"kind": "own", "host_ports": 256, "leaves": 6, "spines": 1,
                                               "cores": 0}
    assert [_uplinks(doc, f"snleaf{j}") for j in range(5)] + [_uplinks(doc, "sleaf0")] == [1] * 6
    assert _switches(bom) == {"leaf": (32, 2048, 2048), "spine": (16, 1024, 1024),
                              "storage leaf": (6, 263, 384), "storage spine": (1, 6, 64)}
    assert _links(bom)["host-leaf"] == (1280, 1280, 1280, 2560, "in-row")
    assert _links(bom)["storage-leaf"] == (1, 1, 1, 2, "in-row")
    assert _links(bom)["leaf-spine"] == (518, 1030, 1030, 2060, "optics")
    assert bom["power"]["switch_w"] == 55 * 750
    assert bom["injection_gbps"] == 1024 * 400 and bom["bisection_gbps"] == 1024 * 400 / 2
    assert any("storage fabric of its own" in note for note in doc["fabric"]["notes"])


def test_storage_uses_the_spines_free_ports():
    """16 hosts shaped as DGX-H100 but without storage NICs (so the shared design:
    storage_fabric.py), on eth-51t2 (128 × 400G) at 1:1, plus one storage server.

    One leaf per rail holds the 16 hosts: 8 leaves of 16 host ports and 16 uplinks. sleaf0: 1
    port, 1 uplink. S ≥ ceil((128 + 1)/128) = 2: bundles of 8 (16 + 16 = 32 ≤ 128), spine0
    8 × 8 + 1 = 65 ports, spine1 64 → 2 spines. Ports used: leaves 8 × 32 + 2 = 258; spines 129.
    Links: host-leaf 128; leaf-spine 8 × 2 + 1 = 17 links, 129 ports = 129 cables, 258
    transceivers (the storage leaf had 2 uplinks, one per spine).
    """
    doc = build_cluster(without_storage_nics(), 16, storage=1)
    bom = fabric_bom(doc)
    assert _switches(bom) == {"leaf": (8, 256, 1024), "storage leaf": (1, 2, 128), "spine": (2, 129, 256)}
    assert _links(bom)["leaf-spine"] == (17, 129, 129, 258, "optics")
    assert doc["fabric"]["storage_fabric"] == {"kind": "shared"}
    assert any("has no storage NIC" in note for note in doc["fabric"]["notes"])


def test_super_spines_fill_their_ports():
    """128 DGX-H100 on ib-ndr-64, tiers=3: one pod of 32 leaves (32 uplinks each); pod spines on
    half their ports: 1,024 / 32 = 32 spines, one port per leaf, 32 uplinks each. Super-spines
    (core_plan): C = 1, m pod-spine indices per core with 32 × m ≤ 64 → m = 2 → 16 cores, all
    64 ports used (was 32 cores with 32 of 64 used)."""
    doc = build_cluster("dgx-h100", 128, switch="ib-ndr-64", tiers=3)
    assert _switches(fabric_bom(doc))["core"] == (16, 1024, 1024)
    assert core_plan([32], [32], 64) == (1, 2)


CASES = [("dgx-h100", 128, {"switch": "ib-ndr-64", "storage": 1}),
         ("dgx-h100", 128, {"switch": "ib-ndr-64", "oversubscription": 3}),
         ("dgx-h100", 128, {"tiers": 3}), ("dgx-h100", 40, {"fabric": "leaf-spine", "storage": 3}),
         ("dgx-h100", 24, {"fabric": "fat-tree", "storage": 2}),
         ("dgx-h100", 264, {"switch": "ib-ndr-64", "storage": 40}), ("gb200-nvl72", 4, {}),
         ("dgx-h100", 1, {"storage": 2}), ("dgx-h100", 16, {"planes": 2, "storage": 1}),
         ("dgx-h100", 8, {"fabric": "leaf-spine"}), ("dgx-h100", 64, {"oversubscription": 1.5}),
         ("dgx-h100", 128, {"switch": "eth-25t6", "storage": 1}),
         ("dgx-h100", 300, {"switch": "ib-ndr-64", "storage": 3}),
         ("dgx-h100", 8, {"fabric": "rail-only", "storage": 2}),
         ("dgx-a100", 40, {"fabric": "fat-tree", "storage": 5}),
         ("no-storage-nic", 32, {"switch": "ib-ndr-64", "storage": 2})]


@pytest.mark.parametrize("template,hosts,options", CASES)
def test_plan_bom_equals_the_built_documents_bom(template, hosts, options):
    """The BOM counted from the spec is the BOM of the built document, key for key."""
    template = without_storage_nics() if template == "no-storage-nic" else template
    doc = build_cluster(template, hosts, **options)
    built = {"summary": fabric_summary(doc), "bom": fabric_bom(doc)}
    planned = plan_bom(template, hosts, **options)
    assert json.dumps(planned, sort_keys=True) == json.dumps(built, sort_keys=True)


def test_plan_bom_previews_past_the_document_limits():
    """456 GB200 NVL72 racks (32,832 GPUs) are over the build's element budget, and 12,500 DGX-H100
    (100,000 GPUs) over the document's host cap; both are counted. 12,500 × 8 = 100,000 NIC ports
    at 1:1 on 64-port leaves → 1,563+ leaves, three tiers."""
    nvl = plan_bom("gb200-nvl72", 456)
    assert nvl["summary"]["gpus"] == 32_832
    big = plan_bom("dgx-h100", 12_500)
    assert big["summary"]["gpus"] == 100_000
    assert big["bom"]["links"][0]["kind"] == "host-leaf" and big["bom"]["links"][0]["ports"] == 100_000
    assert "core" in _switches(big["bom"])
    for bom in (nvl["bom"], big["bom"]):  # no switch tier uses more ports than it has
        assert all(row["ports_free"] >= 0 for row in bom["switches"]), bom["switches"]


def test_super_spine_bundles_fit_beside_the_pod_spines_down_ports():
    """25 pods of 64-down pod spines on 128-port switches (12,500 DGX-H100): C super-spines per
    group must leave d + ceil(d / C) × C ≤ 128 ports on a pod spine; C = 13 would give
    64 + 5 × 13 = 129."""
    group, share = core_plan([64] * 25, [64] * 24 + [32], 128)
    assert 64 + math.ceil(64 / group) * group <= 128
    assert 25 * math.ceil(64 / group) * share <= 128


def test_plan_refuses_past_its_limit_naming_it():
    with pytest.raises(LimitExceeded, match="MAX_PLAN_HOSTS") as info:
        plan_bom("dgx-h100", MAX_PLAN_HOSTS + 1)
    assert info.value.problems[0].path == "hosts"
    with pytest.raises(InvalidTopology) as bad:  # the build's own checks, located as they are
        plan_bom("dgx-h100", 4, oversubscription=0.5)
    assert bad.value.problems[0].path == "oversubscription"
