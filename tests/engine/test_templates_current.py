"""Templates of current parts (Blackwell, H200, MI300X/MI325X) against their vendors' published
topology facts.

DGX B200 (one of 8 GPU slots; NVSwitch chips s0, s1)::

    [cpu s]--fabric--[rc i]--pcie5x16--[pcie i]--+--[gpu i]==nvlink5x9==[nvswitch0]
                                                 |          ==nvlink5x9==[nvswitch1]
                                                 +--[nic i]  ConnectX-7 400G, rail i

AMD MI300X platform (no switch between GPUs)::

    [gpu0]--xgmi--[gpu1]   every pair of the 8 GPUs joined by one xgmi-mi300 link
       \\___xgmi___/ ...    (7 per GPU, 28 in all); GPU i and NIC i share PCIe switch i
"""
from collections import Counter

import pytest

from designer.engine.catalog import TECHS
from designer.engine.document import validate
from designer.engine.model.fabrics import build_cluster
from designer.engine.model.pathclass import classify, topo_matrix
from designer.engine.model.templates import TEMPLATES, host_document
from designer.engine.model.topology import Topology

NEW = ["dgx-b200", "hgx-b300", "dgx-h200", "hgx-h200", "aws-p5e", "aws-p5en", "amd-mi300x", "amd-mi325x"]


def topo(name, **params):
    return Topology.from_document(host_document(name, **params))


def gpu_links(t, gpu, family):
    """(peer kind, tech) of every link of ``gpu`` whose tech is of ``family``."""
    i = t.node_index[gpu]
    return [(t.node_kind[j], t.link_tech[l]) for j, l in t.adjacency[i]
            if TECHS.get(t.link_tech[l] or "") is not None and TECHS[t.link_tech[l]].family == family]


def compute_nics(t):
    return [i for i in t.nodes_of_kind("nic") if t.node_attrs[i]["role"] == "compute"]


@pytest.mark.parametrize("name", NEW)
def test_new_templates_are_listed_valid_and_build_a_rail_cluster(name):
    assert name in TEMPLATES
    doc = host_document(name, host_id="hx")
    assert validate(doc) == []
    cluster = Topology.from_document(build_cluster(name, 2, fabric="rail-optimized"))
    assert len(cluster.nodes_of_kind("gpu")) == 16
    # every compute NIC has an uplink into the fabric
    for nic in compute_nics(cluster):
        assert any(cluster.node_kind[j] == "switch" for j, _ in cluster.adjacency[nic])


@pytest.mark.parametrize("name, gpu_model", [("dgx-b200", "B200"), ("hgx-b300", "B300")])
def test_blackwell_nvlink5_two_nvswitch_chips_nv18(name, gpu_model):
    """B200/B300: 18 NVLink 5 links of 50 GB/s per direction = 900 GB/s, 9 to each of 2 chips."""
    t = topo(name)
    assert len(t.nodes_of_kind("gpu")) == 8 and len(t.nodes_of_kind("nvswitch")) == 2
    for g in range(8):
        links = gpu_links(t, f"h0/gpu{g}", "nvlink")
        assert sorted(links) == [("nvswitch", "nvlink5x9")] * 2
        assert sum(TECHS[tech].raw_gbps for _, tech in links) == 900 * 8  # Gb/s per direction
        assert t.node_attrs[t.node_index[f"h0/gpu{g}"]]["model"] == gpu_model
    row = topo_matrix(t, "h0")["matrix"][0]
    assert row[1:8] == ["NV18"] * 7


def test_dgx_b200_nics_and_matrix():
    """8 x ConnectX-7 400G, one per GPU on its PCIe switch (PIX); 2 dual-port BlueField-3."""
    t = topo("dgx-b200")
    nics = compute_nics(t)
    assert [t.node_attrs[i]["port_gbps"] for i in nics] == [400.0] * 8
    assert {t.node_attrs[i]["model"] for i in nics} == {"ConnectX-7"}
    storage = [i for i in t.nodes_of_kind("nic") if t.node_attrs[i]["role"] == "storage"]
    assert [(t.node_attrs[i]["model"], t.node_attrs[i]["ports"]) for i in storage] == [("BlueField-3", 2)] * 2
    m = topo_matrix(t, "h0")
    for g, row in enumerate(m["matrix"]):
        expected = ["PIX" if n == g else "NODE" if n // 4 == g // 4 else "SYS" for n in range(8)]
        assert row[8:16] == expected
    assert m["numa"] == [0] * 4 + [1] * 4
    assert t.link_tech[t.link_index["h0/cpu0-cpu1"]] == "upi-emr"


def test_hgx_b300_connectx8_800g_on_gen6():
    t = topo("hgx-b300")
    nics = compute_nics(t)
    assert [t.node_attrs[i]["port_gbps"] for i in nics] == [800.0] * 8
    assert t.link_tech[t.link_index["h0/nic0-pcie0"]] == "pcie6x16"
    assert t.link_tech[t.link_index["h0/gpu0-pcie0"]] == "pcie6x16"
    assert t.link_tech[t.link_index["h0/pcie0-rc0"]] == "pcie5x16"
    assert classify(t, "h0/gpu3", "h0/nic3") == "PIX"


@pytest.mark.parametrize("name", ["dgx-h200", "hgx-h200", "aws-p5e", "aws-p5en"])
def test_h200_systems_keep_the_h100_nvlink4_board(name):
    t = topo(name)
    for g in range(8):
        assert t.node_attrs[t.node_index[f"h0/gpu{g}"]]["model"] == "H200-SXM5-141GB"
        counts = Counter(tech for _, tech in gpu_links(t, f"h0/gpu{g}", "nvlink"))
        assert counts == {"nvlink4x5": 2, "nvlink4x4": 2}
    assert len(t.nodes_of_kind("nvswitch")) == 4
    assert topo_matrix(t, "h0")["matrix"][0][1:8] == ["NV18"] * 7


def test_dgx_h200_is_the_dgx_h100_layout():
    h200, h100 = host_document("dgx-h200"), host_document("dgx-h100")
    assert [n["id"] for n in h200["nodes"]] == [n["id"] for n in h100["nodes"]]
    assert [(l["a"], l["b"], l.get("tech")) for l in h200["links"]] == \
        [(l["a"], l["b"], l.get("tech")) for l in h100["links"]]
    assert h200["groups"][0]["template"] == "dgx-h200"


@pytest.mark.parametrize("name, nics, gbps, tech", [("aws-p5e", 32, 100.0, "pcie4x8"),
                                                   ("aws-p5en", 16, 200.0, "pcie5x8")])
def test_aws_p5e_p5en_efa_3200_gbps(name, nics, gbps, tech):
    t = topo(name)
    efa = compute_nics(t)
    assert len(efa) == nics and {t.node_attrs[i]["port_gbps"] for i in efa} == {gbps}
    assert sum(t.node_attrs[i]["port_gbps"] for i in efa) == 3200
    assert [t.node_attrs[i]["rail"] for i in efa] == list(range(nics))
    per_gpu = nics // 8
    for g in range(8):  # the GPU's own EFAs share its PCIe switch
        own = [f"h0/nic{per_gpu * g + k}" for k in range(per_gpu)]
        assert all(classify(t, f"h0/gpu{g}", n) == "PIX" for n in own)
        assert t.link_tech[t.link_index[f"{own[0]}-pcie{g}"]] == tech


def test_p5en_is_sapphire_rapids_gen5():
    t = topo("aws-p5en")
    assert t.link_tech[t.link_index["h0/cpu0-cpu1"]] == "upi-spr"
    assert t.link_tech[t.link_index["h0/gpu0-pcie0"]] == "pcie5x16"
    assert t.link_tech[t.link_index["h0/pcie0-rc0"]] == "pcie5x16"


@pytest.mark.parametrize("name, tech", [("amd-mi300x", "xgmi-mi300"), ("amd-mi325x", "xgmi-mi325")])
def test_amd_platform_is_an_xgmi_full_mesh(name, tech):
    """7 xGMI links per GPU (one to each peer), 28 in all, 64 GB/s raw / 48 usable per direction."""
    t = topo(name)
    assert len(t.nodes_of_kind("gpu")) == 8 and len(t.nodes_of_kind("nvswitch")) == 0
    mesh = [l for l in range(t.num_links) if t.link_tech[l] == tech]
    assert len(mesh) == 28
    pairs = {frozenset((int(t.link_a[l]), int(t.link_b[l]))) for l in mesh}
    assert len(pairs) == 28 and all(t.node_kind[n] == "gpu" for p in pairs for n in p)
    for g in range(8):
        assert [k for k, _ in gpu_links(t, f"h0/gpu{g}", "xgmi")] == ["gpu"] * 7
    assert (TECHS[tech].raw_gbps, TECHS[tech].effective_gbps) == (64 * 8, 48 * 8)
    m = topo_matrix(t, "h0")
    for g, row in enumerate(m["matrix"]):
        assert [c for j, c in enumerate(row[:8]) if j != g] == ["NV1"] * 7
        assert row[8:16] == ["PIX" if n == g else "NODE" if n // 4 == g // 4 else "SYS" for n in range(8)]
    assert m["numa"] == [0] * 4 + [1] * 4
    assert t.link_tech[t.link_index["h0/gpu0-pcie0"]] == "pcie5x16"


def test_amd_gpu_pair_routes_over_its_direct_link():
    """A p2p between two MI300X runs over their one xGMI link at its 48 GB/s (the mesh has no
    switch to stripe over)."""
    from designer.engine.benchmarks.fidelity import predict

    case = {"metric": "algbw_gbs", "topology": {"template": "amd-mi300x", "hosts": 1},
            "pattern": {"kind": "p2p", "src": {"ids": ["h0/gpu0"]}, "dst": {"ids": ["h0/gpu5"]},
                        "bytes": 1 << 30}}
    assert predict(case)["predicted"] == pytest.approx(48.0, rel=0.02)


def test_b200_gpu_pair_runs_at_nvlink5_rate():
    """GPU⇄GPU inside a DGX B200: 18 NVLink 5 at NCCL's 40.1 GB/s each = 721.8 GB/s."""
    from designer.engine.benchmarks.fidelity import predict

    case = {"metric": "algbw_gbs", "topology": {"template": "dgx-b200", "hosts": 1},
            "pattern": {"kind": "p2p", "src": {"ids": ["h0/gpu0"]}, "dst": {"ids": ["h0/gpu7"]},
                        "bytes": 1 << 30}}
    assert predict(case)["predicted"] == pytest.approx(18 * 40.1, rel=0.02)
