"""Pod groups of three-tier fabrics (the editor opens a 32k-GPU design as pods → racks and
leaves → hosts; a pod is also a failure domain)::

    super-spines: [core*]                    the top tier, one group (kind other)
    pod{p}: [spine* (attrs.pod = p)]
            [leaf*  (linked to pod p's spines only)]
            rack{r} (every host port lands on pod p's leaves) → h{i} → devices

A rack whose hosts reach two pods, and every two-tier design, keeps its groups as before.
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
    assert sum(1 for r in racks if r.get("parent", "").startswith("pod")) >= len(racks) - fabric["pods"]
    assert all(groups[r["parent"]]["kind"] == "pod" for r in racks if r.get("parent"))
    assert validate(doc) == []


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
