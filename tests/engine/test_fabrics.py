"""Fabric generators: counts as formulas of the parameters, rail wiring, whole ports, tiers.

Rail-optimized, R rails, L leaves per rail, S spines; every switch link a bundle of whole ports::

    [h*/nic r] --1 port--> [leaf r*L + h*L//H] ==b ports each (b*S >= ceil(d/o))==> [spine 0..S-1]
"""
import math

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from designer.engine.catalog import SWITCH_MODELS, TECHS
from designer.engine.document import validate
from designer.engine.errors import InvalidTopology
from designer.engine.model.fabrics import FABRICS, build_cluster, fabric_summary
from designer.engine.model.templates import host_document
from designer.engine.model.topology import Topology
from tests.engine.storage_support import without_storage_nics

HOST = {name: host_document(name) for name in ("dgx-h100", "dgx-a100", "aws-p5", "pcie-commodity")}
NETWORK = ("ethernet", "infiniband")


def per_host(name):
    doc = HOST[name]
    return len(doc["nodes"]), len(doc["links"])


def switches(doc, role):
    return [n for n in doc["nodes"] if n["kind"] == "switch" and n["attrs"]["role"] == role]


def assert_whole_ports(doc):
    """Every network link carries k ≥ 1 whole ports of its tech (capacity = k × rate); no switch
    uses more ports than its radix."""
    kinds = {n["id"]: n for n in doc["nodes"]}
    used = {}
    for link in doc["links"]:
        tech = TECHS.get(link.get("tech"))
        if tech is None or tech.family not in NETWORK:
            continue
        ports = link.get("bundle", 1)
        assert isinstance(ports, int) and ports >= 1, link
        capacity = link.get("capacity_gbps", tech.effective_gbps)
        assert capacity == pytest.approx(ports * tech.effective_gbps), link
        for end in (link["a"], link["b"]):
            if kinds[end]["kind"] == "switch":
                used[end] = used.get(end, 0) + ports
    for sid, count in used.items():
        attrs = kinds[sid]["attrs"]
        assert count <= attrs["radix"], (sid, count, attrs)
        assert attrs["tier"] in ("leaf", "spine", "core") and attrs["model"]


@pytest.mark.parametrize("template, hosts, lpr, spines, oversub", [
    ("dgx-h100", 8, 1, 4, 1.0), ("dgx-h100", 16, 2, 8, 2.0), ("dgx-a100", 6, 3, 3, 1.5),
    ("aws-p5", 4, 1, 2, 4.0),
])
def test_rail_optimized_counts_wiring_and_bisection(template, hosts, lpr, spines, oversub):
    doc = build_cluster(template, hosts, leaves_per_rail=lpr, spines=spines, oversubscription=oversub)
    assert validate(doc) == []
    assert_whole_ports(doc)
    n, l = per_host(template)
    rails = {"dgx-h100": 8, "dgx-a100": 8, "aws-p5": 32}[template]
    speed = {"dgx-h100": 400, "dgx-a100": 200, "aws-p5": 100}[template]
    leaves = rails * lpr
    assert len(doc["nodes"]) == hosts * n + leaves + spines
    assert len(doc["links"]) == hosts * l + hosts * rails + leaves * spines
    assert len(doc["groups"]) == hosts + math.ceil(hosts / 4)
    role = {x["id"]: x.get("attrs", {}) for x in doc["nodes"]}
    for link in doc["links"]:
        if link["b"].startswith("leaf"):
            assert role[link["b"]]["rail"] == role[link["a"]]["rail"]
    s = fabric_summary(doc)
    injection = hosts * rails * speed
    # whole ports: a leaf with d host ports has S * ceil(ceil(d/o)/S) uplinks of one port rate
    d = hosts // lpr
    up = spines * math.ceil(math.ceil(d / oversub) / spines)
    assert s["injection_gbps"] == pytest.approx(injection)
    assert s["bisection_gbps"] == pytest.approx(min(injection, leaves * up * speed) / 2)
    assert s["switches"] == {"leaf": leaves, "spine": spines}
    Topology.from_document(doc)


def test_rails_fewer_than_nics_share_rails():
    doc = build_cluster("dgx-h100", 2, rails=4)
    leaf_of = {l["a"]: l["b"] for l in doc["links"] if l["b"].startswith("leaf")}
    assert leaf_of["h0/nic0"] == leaf_of["h0/nic4"] == "leaf0" and leaf_of["h1/nic7"] == "leaf3"


def test_leaf_spine_counts_and_whole_port_oversubscription():
    """10 hosts, 4 per rack: ToRs of 32, 32, 16 host ports at o=3 → 11, 11, 6 uplink ports,
    over 6 spines in bundles of 2, 2, 1 → 12, 12, 6 ports of 400G."""
    doc = build_cluster("dgx-h100", 10, fabric="leaf-spine", hosts_per_rack=4, spines=6, oversubscription=3)
    n, l = per_host("dgx-h100")
    assert len(switches(doc, "tor")) == 3 and len(switches(doc, "spine")) == 6
    assert len(doc["links"]) == 10 * l + 10 * 8 + 3 * 6
    assert_whole_ports(doc)
    tor2 = [x for x in doc["links"] if x["a"] == "tor2"]
    assert [x.get("bundle") for x in tor2] == [1] * 6
    assert fabric_summary(doc)["bisection_gbps"] == pytest.approx((12 + 12 + 6) * 400 / 2)


def test_one_rack_leaf_spine_says_why_there_is_no_spine():
    doc = build_cluster("dgx-a100", 4, fabric="leaf-spine")
    assert len(switches(doc, "tor")) == 1 and not switches(doc, "spine")
    assert any("no spine" in note and "32 host ports" in note for note in doc["fabric"]["notes"])


@pytest.mark.parametrize("k", [4, 8])
def test_full_k_ary_fat_tree_counts_and_bisection(k):
    """k-port switches, o = 1: k pods of k/2 edge + k/2 agg, (k/2)^2 cores, k^3/4 host ports."""
    nics = 2
    hosts = k ** 3 // 4 // nics
    doc = build_cluster("pcie-commodity", hosts, fabric="fat-tree", k=k, params={"nics": nics})
    n, l = per_host("pcie-commodity")
    half = k // 2
    assert len(switches(doc, "leaf")) == k * half and len(switches(doc, "spine")) == k * half
    assert len(switches(doc, "core")) == half * half
    assert len(doc["nodes"]) == hosts * (n + 1) + k * half * 2 + half * half
    assert len(doc["links"]) == hosts * (l + 1) + k ** 3 // 4 + k * half * half * 2
    assert_whole_ports(doc)
    assert fabric_summary(doc)["bisection_gbps"] == pytest.approx(k ** 3 / 4 * 100 / 2)
    Topology.from_document(doc)


def test_fat_tree_too_small_k_fails_with_numbers():
    """3 DGX-H100 = 24 ports; k=4 edges take 2 each → 12 edges → 6 pods of 2, but a 4-port core
    has one port per pod for only 4."""
    assert build_cluster("dgx-h100", 3, fabric="fat-tree")["fabric"]["tiers"] == 3
    with pytest.raises(InvalidTopology, match="6 pods .* 4 ports"):
        build_cluster("dgx-h100", 3, fabric="fat-tree", k=4)


def test_third_tier_follows_from_the_radix():
    """264 DGX-H100 on 64 x 400G (ib-ndr-64), o = 1: a leaf holds 32 hosts of a rail → 9 leaves per
    rail (blocks of 29-30 hosts), 72 leaves > 64 spine ports → three tiers. Pods hold 32 leaves
    (4 host blocks x 8 rails): 32 + 32 + 8. Pod spines are the fewest that hold the pod's uplinks on
    half their 64 ports (clos.default_spines): pods 0 and 1 have 32 leaves of 30 uplinks → 960 / 32
    = 30 spines, one port each (30 + 30 = 60 leaf ports ≤ 64); pod 2 has 8 leaves of 29 uplinks →
    ceil(232 / 32) = 8 spines, bundles of ceil(29/8) = 4 (29 + 32 = 61 ≤ 64; 8 x 4 = 32 ports) →
    30 + 30 + 8 = 68 (not 89: pod 2's 29 spines used 8 of 32 ports). Every pod spine has 32 uplinks.
    Super-spines (clos.core_plan): C cores per group, m pod-spine indices per group, group 0 holds
    sum_p ceil(32/C) x min(m, w_p) ports: C = 8 → 4 x (m + m + min(m, 8)) ≤ 64 → m = 5 →
    ceil(30/5) x 8 = 48 super-spines (2,176 uplinks / 64 = 34 is the floor), not 60."""
    doc = build_cluster("dgx-h100", 264, switch="ib-ndr-64")
    f = doc["fabric"]
    assert (f["leaves_per_rail"], f["tiers"], f["pods"], f["spines"], f["cores"]) == (9, 3, 3, 68, 48)
    assert any("three tiers" in note for note in f["notes"])
    assert_whole_ports(doc)
    assert validate(doc) == []


def test_planes_split_rails_and_storage_uplinks_are_whole_ports():
    # Hosts without storage NICs: the storage leaf takes the compute spines' ports (storage_fabric.py).
    doc = build_cluster(without_storage_nics(), 16, planes=2, spines=4, storage=1)
    plane_of = {n["id"]: n["attrs"].get("plane") for n in switches(doc, "spine")}
    assert sorted(plane_of.values()) == [0] * 4 + [1] * 4
    for link in doc["links"]:
        if link["a"] == "leaf7":  # rail 7 is in plane 1
            assert plane_of[link["b"]] == 1
    # One storage server takes one uplink (its own bandwidth), not a port to each of 4 spines.
    sleaf = [x for x in doc["links"] if x["a"] == "sleaf0"]
    assert len(sleaf) == 1 and all(x.get("bundle") == 1 and "capacity_gbps" not in x for x in sleaf)


def test_single_storage_read_runs_at_the_storage_port_rate():
    """build --template dgx-h100 --hosts 16 --fabric rail-optimized --storage 1, one read::

        [storage0]--400--[sleaf0]==16 x 400==[spine*]==400==[leaf0]--400--[h0/nic0]--384--[h0/pcie0]--384--[h0/gpu0]

    the NIC port (400 G) and the GPU's PCIe Gen5 x16 (48 GB/s = 384 Gb/s effective) are the
    narrowest steps; the fabric used to cut it to one 25 G sliver uplink."""
    from designer.engine.analysis.simulate import simulate

    doc = build_cluster("dgx-h100", 16, fabric="rail-optimized", storage=1)
    result = simulate({"topology": doc, "workload": [
        {"id": "load", "kind": "storage_read", "source": {"ids": ["storage0"]},
         "participants": {"ids": ["h0/gpu0"]}, "bytes": 1e9}]})
    (flow,) = result["flows"]
    assert flow["rate_gbps"] == pytest.approx(min(TECHS["eth400"].effective_gbps, TECHS["pcie5x16"].effective_gbps))
    assert flow["bottleneck"].startswith("h0/")


def test_switch_models_and_ports_are_checked():
    with pytest.raises(InvalidTopology) as exc:
        build_cluster("dgx-a100", 2, switch="ib-xdr-144")  # no 200G mode
    assert exc.value.problems[0].path == "switch" and "200" in str(exc.value)
    with pytest.raises(InvalidTopology) as exc:
        build_cluster("dgx-h100", 64, switch="eth-25t6", leaves_per_rail=1)  # 64 hosts on a 64-port leaf
    assert exc.value.problems[0].path == "leaves_per_rail" and "holds 32" in str(exc.value)
    doc = build_cluster("dgx-h100", 2, switch="ib-ndr-64")
    assert doc["fabric"]["nic_link_tech"] == "ib-ndr" and doc["fabric"]["radix"] == 64


@pytest.mark.parametrize("kwargs, path", [
    ({"hosts": 0}, "hosts"), ({"fabric": "torus"}, "fabric"), ({"rails": 9}, "rails"),
    ({"oversubscription": 0.5}, "oversubscription"), ({"k": 5, "fabric": "fat-tree"}, "k"),
    ({"nic_link_tech": "eth123"}, "nic_link_tech"), ({"spines": -1}, "spines"),
    ({"switch": "nope"}, "switch"), ({"planes": 3}, "planes"), ({"tiers": 4}, "tiers"),
    ({"spines": 0}, "spines"),
])
def test_bad_parameters_are_located(kwargs, path):
    args = {"hosts": 4, **kwargs}
    with pytest.raises(InvalidTopology) as exc:
        build_cluster("dgx-h100", **args)
    assert exc.value.problems[0].path == path


RAILS = {"dgx-h100": 8, "dgx-a100": 8, "aws-p5": 32, "pcie-commodity": 1}


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(template=st.sampled_from(sorted(HOST)), fabric=st.sampled_from(FABRICS),
       # sizes past one leaf's radix too (65, 130 hosts: several leaves per rail, derived third
       # tiers on the 64-port models, pod groups)
       hosts=st.one_of(st.integers(1, 40), st.sampled_from([65, 130])),
       oversub=st.sampled_from([1.0, 1.5, 2.0, 3.0, 4.0]),
       switch=st.sampled_from([None, *SWITCH_MODELS]), storage=st.integers(0, 3),
       tiers=st.sampled_from([None, 3]), planes=st.sampled_from([1, 2, 4]))
def test_no_generated_link_carries_less_than_one_port(template, fabric, hosts, oversub, switch, storage,
                                                      tiers, planes):
    try:
        doc = build_cluster(template, hosts, fabric=fabric, oversubscription=oversub, switch=switch,
                            storage=storage, tiers=tiers, planes=planes)
    except InvalidTopology as exc:
        # Only three refusals are expected here: a switch without the NICs' port mode, planes
        # that do not split the rails (or a fabric without planes), storage on a rail-only fabric.
        path = exc.problems[0].path
        bad_planes = planes > 1 and (fabric != "rail-optimized" or RAILS[template] % planes)
        rail_only_storage = fabric == "rail-only" and storage > 0
        assert path == "switch" or (path == "planes" and bad_planes) or (path == "storage" and rail_only_storage), exc
        return
    assert validate(doc) == []
    assert_whole_ports(doc)
    pods = {g["id"] for g in doc["groups"] if g["kind"] == "pod"}
    # one pod group per pod index (a pod spans every plane: fabric.pods counts plane-pods)
    assert not pods or 1 <= len(pods) <= doc["fabric"]["pods"]


def test_16k_gpu_cluster_is_fast():
    import time
    t0 = time.perf_counter()
    doc = build_cluster("dgx-h100", 2048, leaves_per_rail=64)
    t = Topology.from_document(doc)
    assert t.num_nodes > 100_000 and time.perf_counter() - t0 < 15
