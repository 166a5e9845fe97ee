"""Host templates against their vendors' published topologies: counts, PCIe switch sharing, socket placement.

DGX A100 quadrant q (socket q // 2)::

    [cpu s]--fabric--[rc q]--pcie4x16--[pcie q]--+--[gpu 2q]     [pcie 4+q]--+--[nic 2q]
                                                 +--[gpu 2q+1]       |       +--[nic 2q+1]
                                                 +-------------------+
"""
import json
from collections import Counter

import pytest

from designer.engine.document import normalize, validate
from designer.engine.errors import InvalidTopology
from designer.engine.model.pathclass import topo_matrix
from designer.engine.model.templates import (TEMPLATES, build_host, host_document, template_from_host,
                                       template_spec)
from designer.engine.model.topology import Topology


def topo(name, **params):
    return Topology.from_document(host_document(name, **params))


def kinds(t):
    return Counter(t.node_kind)


def neighbours(t, node_id, kind=None):
    i = t.node_index[node_id]
    return sorted(t.node_ids[j] for j, _ in t.adjacency[i] if kind is None or t.node_kind[j] == kind)


def nic_ids_on(t, switch):
    return neighbours(t, switch, "nic")


@pytest.mark.parametrize("name", list(TEMPLATES))
def test_every_template_is_valid_and_ids_are_host_prefixed(name):
    doc = host_document(name, host_id="hx")
    assert validate(doc) == []
    # a rack-scale template (gb200-nvl72) nests its trays as sub-groups of the host group
    assert all(n["id"].startswith("hx/") and (n["group"] == "hx" or n["group"].startswith("hx/"))
               for n in doc["nodes"])
    json.dumps(TEMPLATES[name])
    t = Topology.from_document(doc)
    for i in t.nodes_of_kind("gpu"):
        assert set(t.node_attrs[i]) >= {"model", "index", "socket"}
    for i in t.nodes_of_kind("nic"):
        assert t.node_attrs[i]["role"] in ("compute", "storage") and t.node_attrs[i]["port_gbps"] > 0


def test_dgx_a100_structure():
    t = topo("dgx-a100")
    k = kinds(t)
    assert (k["gpu"], k["nvswitch"], k["nic"], k["nvme"], k["memory"]) == (8, 6, 9, 8, 2)
    assert sum(1 for i in t.nodes_of_kind("cpu") if t.node_attrs[i]["role"] == "socket") == 2
    for g in range(8):  # 2 NVLink3 to each of 6 NVSwitches = 12 links
        links = [l for _, l in t.adjacency[t.node_index[f"h0/gpu{g}"]] if t.link_tech[l].startswith("nvlink")]
        assert len(links) == 6 and {t.link_tech[l] for l in links} == {"nvlink3x2"}
    for q in range(4):
        assert neighbours(t, f"h0/pcie{q}", "gpu") == [f"h0/gpu{2 * q}", f"h0/gpu{2 * q + 1}"]
        assert nic_ids_on(t, f"h0/pcie{4 + q}") == [f"h0/nic{2 * q}", f"h0/nic{2 * q + 1}"]
        assert f"h0/pcie{q}" in neighbours(t, f"h0/pcie{4 + q}", "pcie_switch")
        assert t.node_attrs[t.node_index[f"h0/pcie{q}"]]["socket"] == q // 2
    compute = [i for i in t.nodes_of_kind("nic") if t.node_attrs[i]["role"] == "compute"]
    assert [t.node_attrs[i]["port_gbps"] for i in compute] == [200.0] * 8
    assert [t.node_attrs[i]["rail"] for i in compute] == list(range(8))
    storage = [i for i in t.nodes_of_kind("nic") if t.node_attrs[i]["role"] == "storage"]
    assert len(storage) == 1 and t.node_attrs[storage[0]]["ports"] == 2
    assert {t.link_tech[l] for l in range(t.num_links)} >= {"pcie4x16", "xgmi-zen2", "ddr4x8"}


def test_dgx_a100_matrix_reads_like_the_real_machine():
    m = topo_matrix(topo("dgx-a100"), "h0")
    assert m["labels"][:8] == [f"GPU{i}" for i in range(8)] and m["labels"][8] == "NIC0"
    for g, row in enumerate(m["matrix"]):
        assert [row[j] for j in range(8) if j != g] == ["NV12"] * 7 and row[g] == "X"
        own = {8 + 2 * (g // 2), 9 + 2 * (g // 2)}
        for j in range(8, 16):
            other_socket = (j - 8) // 4 != g // 4
            expected = "PXB" if j in own else "SYS" if other_socket else "NODE"
            assert row[j] == expected, (g, j, row[j])
    assert m["numa"] == [0, 0, 0, 0, 1, 1, 1, 1]


def test_dgx_h100_structure_and_matrix():
    t = topo("dgx-h100")
    k = kinds(t)
    assert (k["gpu"], k["nvswitch"], k["nic"], k["nvme"]) == (8, 4, 10, 8)
    nv = Counter()
    for l in range(t.num_links):
        if (t.link_tech[l] or "").startswith("nvlink4"):
            nv[t.node_ids[t.link_a[l]]] += int(t.link_tech[l].split("x")[1])
    assert set(nv.values()) == {18}
    for i in range(8):
        assert nic_ids_on(t, f"h0/pcie{i}") == [f"h0/nic{i}"]
        nic = t.node_index[f"h0/nic{i}"]
        assert t.node_attrs[nic]["port_gbps"] == 400 and t.node_attrs[nic]["socket"] == i // 4
    assert t.link_tech[t.link_index["h0/gpu0-pcie0"]] == "pcie5x16"
    storage = [i for i in t.nodes_of_kind("nic") if t.node_attrs[i]["role"] == "storage"]
    assert len(storage) == 2
    row0 = topo_matrix(t, "h0")["matrix"][0]
    assert row0[1:8] == ["NV18"] * 7 and row0[8:16] == ["PIX", "NODE", "NODE", "NODE"] + ["SYS"] * 4


def test_aws_p4d_structure():
    t = topo("aws-p4d")
    assert kinds(t)["nic"] == 4 and kinds(t)["pcie_switch"] == 4
    for q in range(4):
        assert neighbours(t, f"h0/pcie{q}", "gpu") == [f"h0/gpu{2 * q}", f"h0/gpu{2 * q + 1}"]
        assert nic_ids_on(t, f"h0/pcie{q}") == [f"h0/nic{q}"]
    assert sum(t.node_attrs[i]["port_gbps"] for i in t.nodes_of_kind("nic")) == 400
    sockets = Counter(t.node_attrs[t.node_index[f"h0/pcie{q}"]]["socket"] for q in range(4))
    assert sockets == {0: 2, 1: 2}
    assert topo_matrix(t, "h0")["matrix"][0][8:] == ["PIX", "NODE", "SYS", "SYS"]


def test_aws_p5_structure():
    t = topo("aws-p5")
    assert kinds(t)["nic"] == 32 and kinds(t)["pcie_switch"] == 8
    for i in range(8):
        assert neighbours(t, f"h0/pcie{i}", "gpu") == [f"h0/gpu{i}"]
        assert nic_ids_on(t, f"h0/pcie{i}") == sorted(f"h0/nic{4 * i + k}" for k in range(4))
        assert t.link_tech[t.link_index[f"h0/nic{4 * i}-pcie{i}"]] == "pcie4x8"
    assert sum(t.node_attrs[i]["port_gbps"] for i in t.nodes_of_kind("nic")) == 3200


def test_pcie_commodity_is_phb_and_params_work():
    t = topo("pcie-commodity", gpus=4, nics=2)
    assert kinds(t)["gpu"] == 4 and kinds(t)["nic"] == 2 and kinds(t)["nvswitch"] == 0
    m = topo_matrix(t, "h0")
    assert {c for row in m["matrix"] for c in row} == {"X", "PHB"}
    t2 = topo("pcie-commodity", gpus=2, nics=2, sockets=2, root_complex_gbps=200)
    assert topo_matrix(t2, "h0")["matrix"][0] == ["X", "SYS", "PHB", "SYS"]
    assert t2.num_resources == 2 * t2.num_links + 2  # both sockets carry a capacity


def test_bad_template_and_params_are_located():
    with pytest.raises(InvalidTopology, match="unknown template"):
        build_host("dgx-z", "h0")
    with pytest.raises(InvalidTopology) as exc:
        build_host("pcie-commodity", "h0", gpus=-1, colour=3)
    assert {p.path for p in exc.value.problems} == {"params.gpus", "params.colour"}


def test_user_template_roundtrip():
    doc = host_document("dgx-h100", host_id="h0")
    spec = template_from_host(doc, "h0", "my-h100", "copied")
    spec = json.loads(json.dumps(spec))
    again = build_host(spec, "h7")
    original = normalize(host_document("dgx-h100", host_id="h7"))
    rebuilt = normalize({"format": "fabricscope.topology/1", "name": "dgx-h100", **again})
    strip = lambda d: [(l["id"], l["a"], l["b"], l.get("tech"), l["capacity_gbps"]) for l in d["links"]]
    assert strip(rebuilt) == strip(original)
    assert [n["id"] for n in rebuilt["nodes"]] == [n["id"] for n in original["nodes"]]
    assert again["groups"][0]["template"] == "my-h100"


def test_bad_user_template_is_rejected_with_locations():
    spec = template_spec("pcie-commodity")
    spec["links"].append({"local": "x", "a": "gpu0", "b": "gpu42", "tech": "pcie4x16"})
    with pytest.raises(InvalidTopology) as exc:
        build_host(spec, "h1")
    assert any(p.path.startswith("template.links[") and "gpu42" in p.message for p in exc.value.problems)
