"""Fabric generators: counts as formulas of the parameters, rail wiring, bisection bandwidth.

Rail-optimized, R rails, L leaves per rail, S spines::

    [h*/nic r] --nic tech--> [leaf r*L + h*L//H] ==(D/(o*S)) each==> [spine 0..S-1]
"""
import math

import pytest

from designer.engine.document import validate
from designer.engine.errors import InvalidTopology
from designer.engine.fabrics import build_cluster, fabric_summary
from designer.engine.templates import host_document
from designer.engine.topology import Topology

HOST = {name: host_document(name) for name in ("dgx-h100", "dgx-a100", "aws-p5", "pcie-commodity")}


def per_host(name):
    doc = HOST[name]
    return len(doc["nodes"]), len(doc["links"])


def switches(doc, role):
    return [n for n in doc["nodes"] if n["kind"] == "switch" and n["attrs"]["role"] == role]


@pytest.mark.parametrize("template, hosts, lpr, spines, oversub", [
    ("dgx-h100", 8, 1, 4, 1.0), ("dgx-h100", 16, 2, 8, 2.0), ("dgx-a100", 6, 3, 3, 1.5),
    ("aws-p5", 4, 1, 2, 4.0),
])
def test_rail_optimized_counts_wiring_and_bisection(template, hosts, lpr, spines, oversub):
    doc = build_cluster(template, hosts, leaves_per_rail=lpr, spines=spines, oversubscription=oversub)
    assert validate(doc) == []
    n, l = per_host(template)
    rails = {"dgx-h100": 8, "dgx-a100": 8, "aws-p5": 32}[template]
    speed = {"dgx-h100": 400, "dgx-a100": 200, "aws-p5": 100}[template]
    leaves = rails * lpr
    racks = math.ceil(hosts / 4)
    assert len(doc["nodes"]) == hosts * n + leaves + spines
    assert len(doc["links"]) == hosts * l + hosts * rails + leaves * spines
    assert len(doc["groups"]) == hosts + racks
    # every NIC i lands on a leaf of rail i
    role = {x["id"]: x.get("attrs", {}) for x in doc["nodes"]}
    for link in doc["links"]:
        if link["b"].startswith("leaf"):
            nic = role[link["a"]]
            assert role[link["b"]]["rail"] == nic["rail"]
    s = fabric_summary(doc)
    injection = hosts * rails * speed
    assert s["injection_gbps"] == pytest.approx(injection)
    assert s["bisection_gbps"] == pytest.approx(injection / (2 * oversub))
    assert s["switches"] == {"leaf": leaves, "spine": spines}
    Topology.from_document(doc)


def test_rails_fewer_than_nics_share_rails():
    doc = build_cluster("dgx-h100", 2, rails=4)
    leaf_of = {l["a"]: l["b"] for l in doc["links"] if l["b"].startswith("leaf")}
    assert leaf_of["h0/nic0"] == leaf_of["h0/nic4"] == "leaf0" and leaf_of["h1/nic7"] == "leaf3"


def test_leaf_spine_counts_and_oversubscription():
    doc = build_cluster("dgx-h100", 10, fabric="leaf-spine", hosts_per_rack=4, spines=6, oversubscription=3)
    n, l = per_host("dgx-h100")
    assert len(switches(doc, "tor")) == 3 and len(switches(doc, "spine")) == 6
    assert len(doc["links"]) == 10 * l + 10 * 8 + 3 * 6
    tor2 = [x for x in doc["links"] if x["a"] == "tor2"]  # 2 hosts in the last rack
    assert sum(x["capacity_gbps"] for x in tor2) == pytest.approx(2 * 8 * 400 / 3)
    assert fabric_summary(doc)["bisection_gbps"] == pytest.approx(10 * 8 * 400 / 6)


@pytest.mark.parametrize("k, oversub", [(4, 1.0), (8, 2.0)])
def test_fat_tree_counts_and_bisection(k, oversub):
    """k-ary: k pods of k/2 edge + k/2 agg, (k/2)^2 cores, k^3/4 ports; full tree here."""
    nics = 2
    hosts = k ** 3 // 4 // nics
    doc = build_cluster("pcie-commodity", hosts, fabric="fat-tree", k=k, oversubscription=oversub,
                        params={"nics": nics})
    n, l = per_host("pcie-commodity")
    half = k // 2
    assert len(switches(doc, "leaf")) == k * half and len(switches(doc, "spine")) == k * half
    assert len(switches(doc, "core")) == half * half
    n_host = n + 1  # one more NIC per host than the default template
    assert len(doc["nodes"]) == hosts * n_host + k * half * 2 + half * half
    assert len(doc["links"]) == hosts * (l + 1) + k ** 3 // 4 + k * half * half * 2
    s = fabric_summary(doc)
    assert s["bisection_gbps"] == pytest.approx(k ** 3 / 4 * 100 / (2 * oversub))
    Topology.from_document(doc)


def test_fat_tree_default_k_fits_and_too_small_k_fails():
    doc = build_cluster("dgx-h100", 3, fabric="fat-tree")
    assert doc["fabric"]["k"] == 6  # 24 ports needed; k=4 has 16, k=6 has 54
    with pytest.raises(InvalidTopology, match="k=4"):
        build_cluster("dgx-h100", 3, fabric="fat-tree", k=4)


def test_storage_nodes_are_attached():
    doc = build_cluster("dgx-h100", 4, storage=3, spines=2)
    t = Topology.from_document(doc)
    assert len(t.nodes_of_kind("storage")) == 3
    assert fabric_summary(doc)["switches"]["leaf"] == 8 + 1
    single = build_cluster("pcie-commodity", 2, storage=1)  # one rail, one leaf, no spine
    assert any(l["a"] == "storage0" and l["b"] == "leaf0" for l in single["links"])


@pytest.mark.parametrize("kwargs, path", [
    ({"hosts": 0}, "hosts"), ({"fabric": "torus"}, "fabric"), ({"rails": 9}, "rails"),
    ({"oversubscription": 0.5}, "oversubscription"), ({"k": 5, "fabric": "fat-tree"}, "k"),
    ({"nic_link_tech": "eth123"}, "nic_link_tech"), ({"spines": -1}, "spines"),
])
def test_bad_parameters_are_located(kwargs, path):
    args = {"hosts": 4, **kwargs}
    with pytest.raises(InvalidTopology) as exc:
        build_cluster("dgx-h100", **args)
    assert exc.value.problems[0].path == path


def test_16k_gpu_cluster_is_fast():
    import time
    t0 = time.perf_counter()
    doc = build_cluster("dgx-h100", 2048, leaves_per_rail=64)
    t = Topology.from_document(doc)
    assert t.num_nodes > 100_000 and time.perf_counter() - t0 < 15
